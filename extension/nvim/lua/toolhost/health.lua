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
  local root = toolhost.state.root_dir or vim.fn.getcwd()
  local cmd, found_by, fixes = toolhost.find_server(root)
  if not cmd then
    error(found_by, fixes)
  elseif vim.fn.executable(cmd[1]) == 1 then
    ok("server command: " .. table.concat(cmd, " ") .. ", from " .. found_by)
  else
    error("server command not executable: " .. cmd[1] .. " (from " .. found_by .. ")", toolhost.install_fix(root))
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
    for _, line in ipairs(require("toolhost.status").lines(status, toolhost.state)) do
      if vim.trim(line) ~= "" then -- the status view's blank separators are no findings
        info(line)
      end
    end
  else
    error("toolhost/status failed: " .. tostring(err and err.message))
  end
end

return M
