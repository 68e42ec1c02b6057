-- The plugin starts the server, declares its capabilities, runs :Toolhost commands and
-- :checkhealth toolhost.
local H = dofile(assert(os.getenv("TOOLHOST_TEST_HARNESS")))

H.run(function()
  local toolhost = H.start()
  local client = toolhost.client()
  H.out.server_toolhost = client.server_capabilities.experimental
    and client.server_capabilities.experimental.toolhost
  H.out.root_dir = toolhost.state.root_dir

  -- :Toolhost call read_file {...}
  vim.cmd([[Toolhost call read_file {"path": "hello.txt"}]])
  H.wait(function()
    return toolhost.state.last_result ~= nil
  end, ":Toolhost call to answer")
  H.out.call_result = toolhost.state.last_result
  H.out.output_lines = H.lines(vim.fn.bufnr("toolhost://output"))

  -- The Lua API.
  local tools = assert(toolhost.tools("core"))
  H.out.core_tool_names = vim.tbl_map(function(t)
    return t.name
  end, tools)
  local result = assert(toolhost.call_sync("read_file", { path = "notes.md" }))
  H.out.api_text = toolhost.result_text(result)

  vim.cmd("Toolhost tools")
  H.out.tools_lines = H.lines(vim.fn.bufnr("toolhost://output"))
  vim.cmd("Toolhost status")
  H.out.status_lines = H.lines(vim.fn.bufnr("toolhost://output"))
  vim.cmd("Toolhost jobs")
  H.out.jobs_lines = H.lines(vim.fn.bufnr("toolhost://output"))
  H.out.activity = toolhost.state.activity

  H.out.complete_sub = vim.fn.getcompletion("Toolhost st", "cmdline")
  require("toolhost.commands").tool_names = nil
  H.out.complete_tool = vim.fn.getcompletion("Toolhost call read_", "cmdline")

  vim.cmd("checkhealth toolhost")
  H.out.health_lines = H.lines(0)
end)
