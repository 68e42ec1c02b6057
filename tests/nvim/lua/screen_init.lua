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

-- Written beside and renamed: the test polls for the file and must never read it half written.
local function save(n, value)
  local path = os.getenv("TOOLHOST_TEST_OUT") .. "." .. n .. ".json"
  local file = assert(io.open(path .. ".part", "w"))
  file:write(vim.json.encode(value))
  file:close()
  assert(os.rename(path .. ".part", path))
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
        -- A command wider than the screen, whose summary is only the agent's description.
        toolhost.call("bash", {
          command = "echo " .. string.rep("padding ", 14) .. "&& touch the-end-of-the-command.txt",
          description = "Print some padding",
          sandbox = "off",
        }, function(wide)
          save(3, wide)
          -- A diff line wider than the screen.
          toolhost.call("write_file", {
            path = "wide.txt",
            content = "config = { " .. string.rep("key = 1, ", 12) .. "last_key_at_the_end = true }\n",
          }, function(write)
            save(4, write)
          end)
        end)
      end)
    end)
  end)
end)
