-- Neovim on a real terminal (tmux) with the plugin started and nothing asked: the test
-- types :Toolhost tools and reads the screen. $TOOLHOST_TEST_OUT.ready.json says where
-- Neovim's LSP log is once the server has answered.
vim.opt.rtp:prepend(assert(os.getenv("TOOLHOST_TEST_PLUGIN")))
vim.cmd("runtime plugin/toolhost.lua")
local toolhost = require("toolhost")
toolhost.setup({
  cmd = vim.json.decode(assert(os.getenv("TOOLHOST_TEST_CMD"))),
  root_dir = assert(os.getenv("TOOLHOST_TEST_WORKSPACE")),
})
vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("TOOLHOST_TEST_WORKSPACE") .. "/notes.md"))

local timer = vim.uv or vim.loop
local poll = timer.new_timer()
poll:start(100, 100, vim.schedule_wrap(function()
  local client = toolhost.client()
  if client and client.initialized then
    poll:stop()
    toolhost.tools("full", function()
      -- Written beside and renamed: the test polls for the file and must not read it half written.
      local path = os.getenv("TOOLHOST_TEST_OUT") .. ".ready.json"
      local file = assert(io.open(path .. ".part", "w"))
      file:write(vim.json.encode({ log = vim.lsp.get_log_path() }))
      file:close()
      assert(os.rename(path .. ".part", path))
    end)
  end
end))
