-- The agent edits a buffer the user is working in: the user's unsaved text survives, the
-- agent's edit is one undo step, a clean buffer is saved so the disk matches, and an edit
-- computed before the user typed merges where it touches other lines, else is refused.
local H = dofile(assert(os.getenv("TOOLHOST_TEST_HARNESS")))

local function type_keys(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "xt", false)
end

H.run(function()
  local toolhost = H.start({ policy = { mode = "acceptEdits" } })
  -- Should the policy still ask, allow once (approvals are tested elsewhere).
  H.stub_ui({ "Allow once", "Allow once", "Allow once", "Allow once" })

  -- 1. Unsaved user text in notes.md; the agent edits another line.
  vim.cmd("edit " .. H.workspace .. "/notes.md")
  local notes = vim.api.nvim_get_current_buf()
  H.out.attached = #vim.lsp.get_clients({ bufnr = notes, name = "toolhost" }) == 1
  type_keys("ggOtyped by the user, not saved<Esc>")
  local read = assert(toolhost.call_sync("read_file", { path = "notes.md" }))
  H.out.read_text = toolhost.result_text(read)
  local edit = assert(toolhost.call_sync("edit_file", {
    path = "notes.md",
    old_string = "line four",
    new_string = "line four, edited by the agent",
  }))
  H.out.edit = edit
  H.out.after_edit = H.lines(notes)
  H.out.modified_after_edit = vim.bo[notes].modified
  H.out.disk_after_edit = H.read("notes.md")
  vim.cmd("undo")
  H.out.after_undo = H.lines(notes)

  -- 2. The user types after the agent read: the agent's next edit of another line merges
  -- (and says who changed what); an edit of the line the user changed is refused.
  assert(toolhost.call_sync("read_file", { path = "notes.md" }))
  type_keys("Goanother unsaved line<Esc>")
  H.out.merged = assert(toolhost.call_sync("edit_file", {
    path = "notes.md",
    old_string = "line five",
    new_string = "LINE FIVE",
  }))
  H.out.after_merged = H.lines(notes)
  assert(toolhost.call_sync("read_file", { path = "notes.md" }))
  type_keys("gg0Cthe user's first line<Esc>")
  H.out.stale = assert(toolhost.call_sync("edit_file", {
    path = "notes.md",
    old_string = "typed by the user, not saved",
    new_string = "the agent's first line",
  }))
  H.out.after_stale = H.lines(notes)

  -- 2b. The plugin's workspace/applyEdit handler refuses an edit for an older version
  -- (Neovim's default handler would skip it silently and answer applied = true).
  local handler = vim.lsp.handlers["workspace/applyEdit"]
  local ours = toolhost.client().handlers["workspace/applyEdit"]
  H.out.handler_replaced = ours ~= nil and ours ~= handler
  local before_refusal = H.lines(notes)
  local version = vim.lsp.util.buf_versions[notes]
  H.out.refusal = ours(nil, {
    edit = {
      documentChanges = {
        {
          textDocument = { uri = vim.uri_from_bufnr(notes), version = version - 1 },
          edits = {
            {
              range = { start = { line = 0, character = 0 }, ["end"] = { line = 1, character = 0 } },
              newText = "overwritten\n",
            },
          },
        },
      },
    },
  }, { client_id = toolhost.client().id, method = "workspace/applyEdit" })
  H.out.refusal_kept_buffer = vim.deep_equal(before_refusal, H.lines(notes))

  -- 3. A clean buffer: the agent's edit lands in the buffer and the editor saves it.
  vim.cmd("edit " .. H.workspace .. "/hello.txt")
  local hello = vim.api.nvim_get_current_buf()
  assert(toolhost.call_sync("read_file", { path = "hello.txt" }))
  H.out.clean_edit = assert(toolhost.call_sync("edit_file", {
    path = "hello.txt",
    old_string = "hello",
    new_string = "hi",
  }))
  H.out.clean_buffer = H.lines(hello)
  H.out.clean_modified = vim.bo[hello].modified
  H.out.clean_disk = H.read("hello.txt")
end)
