-- Answers toolhost/approve: the user decides through vim.ui.select (so any picker plugin
-- works); file writers offer "Show diff", which opens the diff in a scratch split and asks
-- again.
local await = require("toolhost.await")

local M = {}

M.choices = {
  allow_once = "Allow once",
  allow_session = "Allow for this session",
  allow_always = "Always allow (edit rule)",
  deny = "Deny",
  show_diff = "Show diff",
}

--- Open `text` in a scratch split named `name` (reused when it exists) and return its buffer.
function M.scratch(name, lines, filetype)
  local bufnr = vim.fn.bufnr(name)
  if bufnr == -1 or not vim.api.nvim_buf_is_valid(bufnr) then
    bufnr = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(bufnr, name)
  end
  vim.bo[bufnr].bufhidden = "hide"
  vim.bo[bufnr].swapfile = false
  vim.bo[bufnr].modifiable = true
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].filetype = filetype or ""
  if vim.fn.bufwinid(bufnr) == -1 then
    vim.cmd("botright split")
    vim.api.nvim_win_set_buf(0, bufnr)
  end
  return bufnr
end

function M.show_diff(params)
  local name = "toolhost://diff/" .. tostring(params.callId or "call")
  return M.scratch(name, vim.split(params.diff or "", "\n", { plain = true }), "diff")
end

local function prompt_text(params)
  local parts = { "toolhost: " .. (params.title or params.tool or "tool call") }
  if params.risk and params.risk ~= vim.NIL then
    table.insert(parts, "[" .. params.risk .. " risk]")
  end
  if type(params.paths) == "table" and #params.paths > 0 then
    table.insert(parts, table.concat(params.paths, ", "))
  end
  return table.concat(parts, " ")
end

local function first_rule(params)
  if type(params.suggestedRules) == "table" and params.suggestedRules[1] then
    return params.suggestedRules[1]
  end
  return params.tool
end

--- Ask the user; returns the ApprovalResult table.
function M.decide(params)
  local has_diff = type(params.diff) == "string" and params.diff ~= ""
  local items = { M.choices.allow_once, M.choices.allow_session, M.choices.allow_always }
  if has_diff then
    table.insert(items, M.choices.show_diff)
  end
  table.insert(items, M.choices.deny)
  local prompt = prompt_text(params)
  if params.summary and params.summary ~= vim.NIL and params.summary ~= "" then
    prompt = prompt .. "\n" .. params.summary
  end
  while true do
    local choice = await.select(items, { prompt = prompt, kind = "toolhost.approve" })
    if choice == M.choices.show_diff then
      M.show_diff(params)
    elseif choice == M.choices.allow_once then
      return { decision = "allow_once" }
    elseif choice == M.choices.allow_session then
      return { decision = "allow_session", rule = first_rule(params) }
    elseif choice == M.choices.allow_always then
      -- The rule is written to .toolhost.toml exactly as the user leaves it here.
      local rule = await.input({ prompt = "Always allow rule: ", default = first_rule(params) })
      if rule and rule ~= "" then
        return { decision = "allow_always", rule = rule }
      end
    elseif choice == M.choices.deny then
      local reason = await.input({ prompt = "Reason for denying (optional): " })
      if reason and reason ~= "" then
        return { decision = "deny", reason = reason }
      end
      return { decision = "deny" }
    else -- cancelled picker: deny, never allow by default
      return { decision = "deny", reason = "the approval prompt was dismissed" }
    end
  end
end

--- The LSP request handler for toolhost/approve.
function M.handler(_, params, _)
  local ok, result = pcall(M.decide, params or {})
  if not ok then
    vim.notify("toolhost: approval failed: " .. tostring(result), vim.log.levels.ERROR)
    return { decision = "deny", reason = "the approval prompt failed in Neovim" }
  end
  return result
end

return M
