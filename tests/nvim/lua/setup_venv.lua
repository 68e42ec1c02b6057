-- require("toolhost").setup({ workspace_venv = true }) as documented, in a workspace that
-- has .venv/bin/toolhost and a PATH without toolhost: the plugin finds the server itself.
local H = dofile(assert(os.getenv("TOOLHOST_TEST_HARNESS")))

H.run(function()
  H.out.toolhost_on_path = vim.fn.exepath("toolhost")
  local toolhost = H.setup({ workspace_venv = true })
  H.out.server = toolhost.state.server
  H.out.root_dir = toolhost.state.root_dir
  local result = assert(toolhost.call_sync("read_file", { path = "hello.txt" }))
  H.out.text = toolhost.result_text(result)
  vim.cmd("checkhealth toolhost")
  H.out.health_lines = H.lines(0)
end)
