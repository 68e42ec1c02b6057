-- luacheck over the Neovim plugin (`./run lint`; scripts/setup/45-luacheck.sh installs it).
-- Neovim runs LuaJIT; its one global is `vim`, read-only but for the option and variable
-- tables the plugin sets (vim.g.loaded_toolhost, vim.bo[buf].filetype ...).
std = "luajit"
local writable = { other_fields = true, read_only = false }
read_globals = {
  vim = {
    other_fields = true,
    fields = { g = writable, b = writable, w = writable, bo = writable, wo = writable },
  },
}
