-- :Toolhost command. The server itself starts from require("toolhost").setup({...}).
if vim.g.loaded_toolhost then
  return
end
vim.g.loaded_toolhost = true

vim.api.nvim_create_user_command("Toolhost", function(opts)
  require("toolhost.commands").run(opts.args)
end, {
  nargs = "+",
  desc = "toolhost: tools [name] | call {name} {json} | checkpoints | revert {callId} | jobs | status | activity"
    .. " | start | stop | trust [path]",
  complete = function(arglead, cmdline)
    return require("toolhost.commands").complete(arglead, cmdline)
  end,
})
