-- Answers toolhost/approve. What the call would do opens first, in a window at the top of
-- the screen that stays open while vim.ui.select asks (any picker works; the default one
-- lists its items at the bottom, below that window): a writer's diff, or a command with its
-- folder, background flag, timeout and sandbox. The choices keep one order for every tool,
-- Deny always fourth, and closing the picker is reported to the agent as a dismissal.
local await = require("toolhost.await")
local view = require("toolhost.view")

local M = {}

M.choices = {
  allow_once = "Allow once",
  allow_session = "Allow for this session",
  allow_always = "Always allow (edit rule)",
  deny = "Deny",
  read_first = "Read the whole change first",
}

-- Fixed positions: a number typed out of habit means the same on every prompt.
M.items = { M.choices.allow_once, M.choices.allow_session, M.choices.allow_always, M.choices.deny }
M.deny_index = 4

local function present(value)
  return value ~= nil and value ~= vim.NIL and value ~= ""
end

local function is_shell(params)
  return present(params.cwd) or params.tool == "bash"
end

local function seconds(ms)
  if ms % 1000 == 0 then
    return string.format("%d s", ms / 1000)
  end
  return string.format("%.1f s", ms / 1000)
end

local function shell_lines(params)
  local args = type(params.arguments) == "table" and params.arguments or {}
  local lines = { "", "command:" }
  for _, line in ipairs(vim.split(tostring(args.command or "?"), "\n", { plain = true })) do
    table.insert(lines, "    " .. line)
  end
  table.insert(lines, "folder:     " .. (present(params.cwd) and params.cwd or "(the session's folder)"))
  if params.background == true then
    table.insert(lines, "background: yes, it keeps running after the call returns (job_output, job_kill)")
    table.insert(lines, "timeout:    none (a background job runs until it ends or is killed)")
  else
    table.insert(lines, "background: no")
    local timeout = present(params.timeoutMs) and seconds(params.timeoutMs) or "the default"
    table.insert(lines, "timeout:    " .. timeout .. ", then the process group is stopped")
  end
  table.insert(lines, "sandbox:    " .. (present(params.sandbox) and params.sandbox or "none"))
  return lines
end

--- `text` cut at spaces into lines of at most `width` columns (a longer word stays whole):
--- a diff's window does not wrap (a diff must not), so the prose lines are wrapped here.
function M.wrap(text, width)
  text = tostring(text)
  if vim.fn.strdisplaywidth(text) <= width then
    return { text }
  end
  local lines, line = {}, ""
  for word in text:gmatch("%S+") do
    if line ~= "" and vim.fn.strdisplaywidth(line .. " " .. word) > width then
      table.insert(lines, line)
      line = word
    else
      line = line == "" and word or (line .. " " .. word)
    end
  end
  table.insert(lines, line)
  return lines
end

--- The lines of the approval window: what is asked, then the diff or the command details.
function M.request_lines(params)
  local head = "toolhost asks: " .. tostring(params.title or params.tool or "a tool call")
  if present(params.risk) then
    head = head .. "  [" .. params.risk .. " risk]"
  end
  local width = math.max(40, vim.o.columns - 2)
  local lines = M.wrap(head, width)
  if present(params.summary) then
    vim.list_extend(lines, M.wrap(params.summary, width))
  end
  if present(params.client) then
    table.insert(lines, "from: " .. params.client .. " (session " .. tostring(params.session) .. ")")
  end
  if is_shell(params) then
    vim.list_extend(lines, shell_lines(params))
  elseif present(params.diff) then
    table.insert(lines, "")
    vim.list_extend(lines, vim.split(params.diff:gsub("\n$", ""), "\n", { plain = true }))
  elseif type(params.paths) == "table" and #params.paths > 0 then
    table.insert(lines, "")
    vim.list_extend(lines, params.paths)
  end
  return lines
end

--- Open the approval window for `params`; returns its buffer and window. A command wraps
--- (the whole of it is what is approved); a diff does not, and a line wider than the
--- window makes it "not fit", so that reading it first is offered.
function M.show_request(params)
  local name = "toolhost://approve/" .. tostring(params.callId or "call")
  local lines = M.request_lines(params)
  local filetype = (not is_shell(params) and present(params.diff)) and "diff" or ""
  return view.open_top(name, lines, filetype, is_shell(params))
end

local function prompt_text(params, fits, was_read)
  local where = "shown above"
  if not fits then
    where = was_read and "shown above, read in full" or "shown above; it does not fit, read it first"
  end
  local what = is_shell(params) and "the command details are " or "the change is "
  return "toolhost: " .. tostring(params.title or params.tool) .. " (" .. what .. where .. ")"
end

local function first_rule(params)
  if type(params.suggestedRules) == "table" and params.suggestedRules[1] then
    return params.suggestedRules[1]
  end
  return params.tool
end

-- Focus the approval window so the user can scroll it; <CR> or q there asks again.
local function read_first(bufnr, win)
  await.await(function(done)
    vim.api.nvim_set_current_win(win)
    for _, key in ipairs({ "<CR>", "q" }) do
      vim.keymap.set("n", key, function()
        done(true)
      end, { buffer = bufnr, nowait = true, desc = "toolhost: back to the approval" })
    end
    -- The choices just filled the message area: clear it first, or the notice would stop
    -- at a "Press ENTER" prompt before the user can read anything.
    vim.cmd("redraw")
    vim.notify("toolhost: read the change, then press <CR> in it to decide", vim.log.levels.INFO)
  end)
end

local function answer(choice, params)
  if choice == M.choices.allow_once then
    return { decision = "allow_once" }
  elseif choice == M.choices.allow_session then
    return { decision = "allow_session", rule = first_rule(params) }
  elseif choice == M.choices.allow_always then
    -- The rule is written to .toolhost.toml exactly as the user leaves it here.
    local rule = await.input({ prompt = "Always allow rule: ", default = first_rule(params) })
    if rule and rule ~= "" then
      return { decision = "allow_always", rule = rule }
    end
    return nil -- no rule: ask again
  elseif choice == M.choices.deny then
    local reason = await.input({ prompt = "Reason for denying (optional): " })
    if reason and reason ~= "" then
      return { decision = "deny", reason = reason }
    end
    return { decision = "deny" }
  end
  -- The picker was closed without a choice: deny, and say so (never put words in the
  -- user's mouth).
  return { decision = "deny", dismissed = true }
end

--- Ask the user; returns the ApproveResult table.
function M.decide(params)
  local bufnr, win = M.show_request(params)
  local fits = view.fits(win, bufnr)
  local items = vim.list_slice(M.items)
  if not fits then
    table.insert(items, M.choices.read_first)
  end
  local was_read = false
  local ok, result = pcall(function()
    while true do
      local prompt = prompt_text(params, fits, was_read)
      local choice = await.select(items, { prompt = prompt, kind = "toolhost.approve" })
      if choice == M.choices.read_first then
        read_first(bufnr, win)
        was_read = true
      else
        local decided = answer(choice, params)
        if decided then
          return decided
        end
      end
    end
  end)
  view.close(win)
  if not ok then
    error(result, 0)
  end
  return result
end

--- The LSP request handler for toolhost/approve.
function M.handler(_, params, _)
  local ok, result = pcall(M.decide, params or {})
  if not ok then
    -- An error answer: the server tells the agent the editor could not ask (no one said no).
    local message = "the approval prompt failed in Neovim: " .. tostring(result)
    vim.notify("toolhost: " .. message, vim.log.levels.ERROR)
    return nil, vim.lsp.rpc.rpc_response_error(vim.lsp.protocol.ErrorCodes.InternalError, message)
  end
  return result
end

return M
