"""What comes out of a call.

- tool_output.py: what a tool's run() returns (ToolOutput for readers, WritePlan for writers);
- bounding.py: the output contract: bounded text with a truthful cut and the paging note;
- call_records.py: the CallResult of a success, a failure or an unknown tool, and the record
  every listener (audit, didCall, the index) receives;
- held_reports.py: those records held back until a face has written its answer.
"""
