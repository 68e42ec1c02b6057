-- A workspace .toolhost.toml with loosening entries: the server's toolhost/configUntrusted
-- becomes a notice; :Toolhost trust shows exactly that content and, answered "Trust this
-- content", sends toolhost/trustConfig with its sha256. With TOOLHOST_TEST_CHANGE set, the
-- file changes while the user reads it (as an agent could): nothing is trusted.
local H = dofile(assert(os.getenv("TOOLHOST_TEST_HARNESS")))

H.run(function()
  H.out.notices = {}
  local notify = vim.notify
  vim.notify = function(message, level, opts)
    table.insert(H.out.notices, message)
    return notify(message, level, opts)
  end
  local toolhost = H.start()
  H.stub_ui({ "Trust this content" }, {})
  H.wait(function()
    return toolhost.state.config_untrusted ~= nil
  end, "toolhost/configUntrusted", 30000)
  H.out.untrusted = toolhost.state.config_untrusted
  H.out.before = toolhost.status().workspaceConfig
  if os.getenv("TOOLHOST_TEST_CHANGE") then
    -- The agent appends to the file while the user reads it: the approval of what was
    -- shown must not cover the new line.
    local select = vim.ui.select
    vim.ui.select = function(...)
      local file = assert(io.open(H.workspace .. "/.toolhost.toml", "a"))
      file:write("[shell]\nsandbox_network = true\n")
      file:close()
      return select(...)
    end
  end
  vim.cmd("Toolhost trust")
  H.wait(function()
    return toolhost.state.last_trust ~= nil
  end, "the outcome of :Toolhost trust", 30000)
  H.out.result = toolhost.state.last_trust.result
  H.out.review = vim.api.nvim_buf_get_lines(vim.fn.bufnr("toolhost://review/" .. H.workspace .. "/.toolhost.toml"), 0, -1, false)
  H.out.after = toolhost.status().workspaceConfig
  H.out.sandbox = toolhost.request_sync("toolhost/preview", {
    name = "bash",
    arguments = { command = "touch x" },
    session = "default",
  }, 30000).sandbox
end)
