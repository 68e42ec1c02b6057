-- setup({}) where no toolhost can be found: a clear error, and :checkhealth gives the fix.
local H = dofile(assert(os.getenv("TOOLHOST_TEST_HARNESS")))

H.run(function()
  vim.opt.rtp:prepend(assert(os.getenv("TOOLHOST_TEST_PLUGIN")))
  vim.cmd("runtime plugin/toolhost.lua")
  local notified = {}
  vim.notify = function(message, level)
    table.insert(notified, { message = message, level = level })
  end
  local toolhost = require("toolhost")
  toolhost.setup({})
  H.out.notified = notified
  H.out.running = toolhost.client() ~= nil
  vim.cmd("checkhealth toolhost")
  H.out.health_lines = H.lines(0)
end)
