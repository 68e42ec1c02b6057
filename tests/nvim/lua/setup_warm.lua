-- require("toolhost").setup({ warm = true, workspace_venv = true }) in a workspace that has
-- .venv/bin/toolhost:
-- the plugin starts the server it finds as `serve --warm`; what /proc says of it while a
-- call goes through (tests/warm/editor_servers.py).
local H = dofile(assert(os.getenv("TOOLHOST_TEST_HARNESS")))

H.run(function()
  local toolhost = H.setup({ warm = true, workspace_venv = true })
  H.out.server = toolhost.state.server
  local result = assert(toolhost.call_sync("read_file", { path = "hello.txt" }))
  H.out.text = toolhost.result_text(result)
  H.out.seen = H.server_processes()
end)
