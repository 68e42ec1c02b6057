"""File tools: read_file, write_file, edit_file/multi_edit, delete_range, move_file,
notebook_edit, view_image, and read_window (acp_read_text_file: ACP's fs/read_text_file,
offered by the ACP face alone)."""
