-- :help has an entry for every :Toolhost subcommand, from the doc's tags as a plugin
-- manager generates them (vim.pack and lazy.nvim run :helptags on the doc folder).
local H = dofile(assert(os.getenv("TOOLHOST_TEST_HARNESS")))

H.run(function()
  local plugin = assert(os.getenv("TOOLHOST_TEST_PLUGIN"))
  local home = assert(os.getenv("HOME"))
  local doc = home .. "/doc"
  vim.fn.mkdir(doc, "p")
  vim.fn.writefile(vim.fn.readfile(plugin .. "/doc/toolhost.txt"), doc .. "/toolhost.txt")
  vim.cmd("helptags " .. vim.fn.fnameescape(doc))
  vim.opt.rtp:prepend(home)
  vim.opt.rtp:prepend(plugin)
  local missing = {}
  for _, sub in ipairs(require("toolhost.commands").subcommands) do
    if not pcall(vim.cmd.help, ":Toolhost-" .. sub) then
      table.insert(missing, sub)
    end
  end
  H.out.subcommands = require("toolhost.commands").subcommands
  H.out.missing = missing
end)
