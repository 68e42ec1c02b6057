-- Neovim on a real terminal (tmux), as a user runs it: the plugin with the default
-- vim.ui.select, an edit and a bash call that each wait for the user's answer. Results go
-- to $TOOLHOST_TEST_OUT.<n>.json as they arrive.
vim.opt.rtp:prepend(assert(os.getenv("TOOLHOST_TEST_PLUGIN")))
vim.cmd("runtime plugin/toolhost.lua")
local toolhost = require("toolhost")
toolhost.setup({
  cmd = vim.json.decode(assert(os.getenv("TOOLHOST_TEST_CMD"))),
  root_dir = assert(os.getenv("TOOLHOST_TEST_WORKSPACE")),
})
vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("TOOLHOST_TEST_WORKSPACE") .. "/notes.md"))

local function save(n, value)
  local file = assert(io.open(os.getenv("TOOLHOST_TEST_OUT") .. "." .. n .. ".json", "w"))
  file:write(vim.json.encode(value))
  file:close()
end

local function when_ready(run)
  local timer = vim.uv or vim.loop
  local poll = timer.new_timer()
  poll:start(100, 100, vim.schedule_wrap(function()
    local client = toolhost.client()
    if client and client.initialized then
      poll:stop()
      run()
    end
  end))
end

when_ready(function()
  toolhost.call("read_file", { path = "notes.md" }, function()
    toolhost.call("edit_file", {
      path = "notes.md",
      old_string = "line four",
      new_string = "line FOUR, edited by the agent",
    }, function(edit)
      save(1, edit)
      toolhost.call("bash", { command = "echo hello > greeting.txt", timeout_ms = 30000, sandbox = "off" }, function(bash)
        save(2, bash)
      end)
    end)
  end)
end)
