-- :checkhealth toolhost
local M = {}

local health = vim.health
local start = health.start or health.report_start
local ok = health.ok or health.report_ok
local warn = health.warn or health.report_warn
local error = health.error or health.report_error
local info = health.info or health.report_info

function M.check()
  start("toolhost")
  if vim.fn.has("nvim-0.9") == 1 then
    ok("Neovim " .. tostring(vim.version()))
  else
    error("Neovim 0.9 or newer is needed (vim.lsp.start)")
  end

  local toolhost = require("toolhost")
  local cmd = toolhost.config.cmd
  if type(cmd) == "table" and cmd[1] then
    if vim.fn.executable(cmd[1]) == 1 then
      ok("server command: " .. table.concat(cmd, " ") .. " (" .. vim.fn.exepath(cmd[1]) .. ")")
    else
      error(
        "server command not found: " .. cmd[1],
        { "pip install toolhost, or set cmd in require('toolhost').setup({cmd = {...}})" }
      )
    end
  end

  local client = toolhost.client()
  if not client then
    warn("the server is not running", { "call require('toolhost').setup() or :Toolhost start" })
    return
  end
  ok(string.format("client %d running for %s", client.id, tostring(toolhost.state.root_dir)))
  local server = client.server_capabilities or {}
  local experimental = server.experimental and server.experimental.toolhost
  if experimental then
    ok(string.format(
      "protocol %s, %s tools, surface %s",
      tostring(experimental.protocolVersion),
      tostring(experimental.toolCount),
      tostring(experimental.surfaceHash):sub(1, 12)
    ))
  else
    warn("the server did not announce capabilities.experimental.toolhost")
  end
  local status, err = toolhost.status()
  if status then
    ok("toolhost/status answered")
    info(vim.inspect(status))
  else
    error("toolhost/status failed: " .. tostring(err and err.message))
  end
end

return M
