"""What comes out of a call.

- bounding.py: the output contract: bounded text with a truthful cut and the paging note;
- call_records.py: the CallResult of a success, a failure or an unknown tool, and the record
  every listener (audit, didCall, the index) receives;
- held_reports.py: those records held back until a face has written its answer.

What a tool's run() returns (ToolOutput, WritePlan) is lsp_server/core/tool_output.py.
"""
