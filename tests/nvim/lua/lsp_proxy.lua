-- The agent's lsp_* questions answered by the pyright this Neovim runs (started by the
-- test's own vim.lsp.start, as a user's config would), not by a second copy in toolhost.
local H = dofile(assert(os.getenv("TOOLHOST_TEST_HARNESS")))

local function start_pyright(bufnr)
  return vim.lsp.start({
    name = "pyright",
    cmd = { assert(os.getenv("TOOLHOST_TEST_PYRIGHT")), "--stdio" },
    root_dir = H.workspace,
    settings = { python = { analysis = { diagnosticMode = "openFilesOnly" } } },
  }, { bufnr = bufnr })
end

--- Process ids below `pid` (children, grandchildren ...) with their names, from /proc.
local function descendants(pid, found)
  found = found or {}
  for _, child in ipairs(vim.api.nvim_get_proc_children(pid)) do
    local info = vim.api.nvim_get_proc(child)
    table.insert(found, { pid = child, name = info and info.name or "?", parent = pid })
    descendants(child, found)
  end
  return found
end

H.run(function()
  vim.cmd("edit " .. H.workspace .. "/main.py")
  local main = vim.api.nvim_get_current_buf()
  local pyright = assert(start_pyright(main))
  H.wait(function()
    local client = vim.lsp.get_client_by_id(pyright)
    return client ~= nil and client.initialized == true
  end, "pyright to initialize", 60000)

  local toolhost = H.start({})
  local function call(name, args)
    local result = assert(toolhost.call_sync(name, args, 60000))
    return { isError = result.isError, text = toolhost.result_text(result) }
  end

  H.out.definition = call("lsp_definition", { path = "main.py", line = 8, symbol = "make_circle" })
  -- A file not open yet: the plugin loads it and pyright (same root, same filetype) attaches.
  H.out.unicode = call("lsp_definition", { path = "unicode_names.py", line = 3, symbol = "make_circle" })

  -- Unsaved text in the buffer: the answer is for the buffer the user sees.
  vim.cmd("edit " .. H.workspace .. "/bad_types.py")
  local bad = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(bad, -1, -1, false, { "", "", "def other() -> str:", "    return 42" })
  H.out.bad_version = vim.lsp.util.buf_versions[bad]
  H.out.bad_modified = vim.bo[bad].modified
  H.out.diagnostics = call("lsp_diagnostics", { path = "bad_types.py" })
  H.out.disk = H.read("bad_types.py")

  local status = assert(toolhost.status())
  H.out.language_servers = status.languageServers
  H.out.lsp_answers = status.lspAnswers

  -- Neovim's process tree, from /proc: toolhost's part of it holds no language server.
  H.out.processes = descendants(vim.fn.getpid())
  H.out.nvim_pid = vim.fn.getpid()
end)
