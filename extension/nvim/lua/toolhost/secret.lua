-- Answers toolhost/secret: a command the user allowed asks for a password (ssh, sudo, git).
-- The user types it into vim.fn.inputsecret(), which shows no characters; the answer goes
-- back to the server and on to the program only, never to the model, a log or history.
-- An empty answer (Escape, or Enter on nothing) cancels: the command then fails and the
-- agent is told the user cancelled.
local M = {}

local function present(value)
  return value ~= nil and value ~= vim.NIL and value ~= ""
end

--- Ask the user; returns the SecretResult table.
function M.ask(params)
  local header = ("toolhost: the command `%s` asks\n"):format(tostring(params.command or "?"))
  local result = {}
  if params.kind == "credential" and not present(params.username) then
    local ok, name = pcall(vim.fn.input, {
      prompt = header .. tostring(params.prompt) .. "\nUser name: ",
      cancelreturn = "",
    })
    if not ok or not present(name) then
      return { cancelled = true }
    end
    result.username = name
    header = ""
  end
  local ok, secret = pcall(vim.fn.inputsecret, header .. tostring(params.prompt or "Password:") .. " ")
  vim.cmd("redraw") -- the prompt line goes away
  if not ok or not present(secret) then
    return { cancelled = true }
  end
  result.secret = secret
  return result
end

--- The LSP request handler for toolhost/secret.
function M.handler(_, params, _)
  local ok, result = pcall(M.ask, params or {})
  if not ok then
    vim.notify("toolhost: the password prompt failed: " .. tostring(result), vim.log.levels.ERROR)
    return { cancelled = true }
  end
  return result
end

return M
