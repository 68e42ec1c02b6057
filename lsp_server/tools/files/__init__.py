"""File tools: read_file, write_file, edit_file/multi_edit, delete_range, move_file,
notebook_edit, view_image."""
