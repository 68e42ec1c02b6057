-- require("toolhost").setup({}) exactly as documented, in a workspace that has
-- .venv/bin/toolhost and a PATH without toolhost: the plugin finds the server itself.
local H = dofile(assert(os.getenv("TOOLHOST_TEST_HARNESS")))

H.run(function()
  vim.opt.rtp:prepend(assert(os.getenv("TOOLHOST_TEST_PLUGIN")))
  vim.cmd("runtime plugin/toolhost.lua")
  H.out.toolhost_on_path = vim.fn.exepath("toolhost")
  local toolhost = require("toolhost")
  toolhost.setup({})
  H.wait(function()
    local client = toolhost.client()
    return client ~= nil and client.initialized == true
  end, "the toolhost server to initialize", 90000)
  H.out.server = toolhost.state.server
  H.out.root_dir = toolhost.state.root_dir
  local result = assert(toolhost.call_sync("read_file", { path = "hello.txt" }))
  H.out.text = toolhost.result_text(result)
  vim.cmd("checkhealth toolhost")
  H.out.health_lines = H.lines(0)
end)
