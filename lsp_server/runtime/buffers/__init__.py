"""The editor's unsaved text.

- documents.py: editor buffers as the document source: reads see unsaved text, edits go
  through `workspace/applyEdit`;
- buffer_edits.py: text -> the smallest line-wise TextEdits, text comparison.
"""
