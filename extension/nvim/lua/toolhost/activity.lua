-- :Toolhost activity: one row per finished call (toolhost/didCall), newest first. <CR> on a
-- row offers that call's actions through vim.ui.select; M.actions is the list, in order,
-- and other features add theirs with M.add_action({label, available?, run}).
local view = require("toolhost.view")

local M = {}

local HEADER_LINES = 2
local NAME = "toolhost://activity"

local function toolhost()
  return require("toolhost")
end

local function present(value)
  return value ~= nil and value ~= vim.NIL
end

local function relative(path)
  local root = toolhost().state.root_dir
  if root and type(path) == "string" and path:sub(1, #root + 1) == root .. "/" then
    return path:sub(#root + 2)
  end
  return tostring(path)
end

--- One line for a didCall entry.
function M.row(entry)
  local outcome = entry.isError and ("error " .. tostring(entry.code)) or "ok"
  local paths = vim.tbl_map(relative, type(entry.paths) == "table" and entry.paths or {})
  local decision = present(entry.decision) and ("  [" .. entry.decision .. "]") or ""
  return string.format(
    "  %s  %-14s %-28s %7.0f ms  %s%s",
    entry.time and os.date("%H:%M:%S", entry.time) or "--:--:--",
    tostring(entry.tool),
    outcome,
    tonumber(entry.durationMs) or 0,
    table.concat(paths, ", "),
    decision
  )
end

--- The lines of a call's result, or nil and why it is not here.
function M.result_lines(entry)
  local result = toolhost().state.results[entry.callId]
  if not result then
    return nil,
      string.format(
        "the result of %s is not kept in this editor: session %s made the call from another client",
        tostring(entry.callId),
        tostring(entry.session)
      )
  end
  local status = result.isError and ("error " .. tostring(result.error and result.error.code)) or "ok"
  local lines = {
    string.format("# %s %s: %s", tostring(entry.tool), tostring(entry.callId), status),
    string.format("session %s, %.0f ms", tostring(entry.session), tonumber(entry.durationMs) or 0),
    "",
  }
  for _, line in ipairs(vim.split(toolhost().result_text(result), "\n", { plain = true })) do
    table.insert(lines, line)
  end
  return lines
end

function M.show_result(entry)
  local lines, why = M.result_lines(entry)
  if not lines then
    vim.notify("toolhost: " .. why, vim.log.levels.WARN)
    return nil
  end
  return view.scratch("toolhost://result/" .. tostring(entry.callId), lines, "markdown")
end

M.actions = {
  {
    label = "Show the result",
    run = M.show_result,
    available = function(entry)
      return toolhost().state.results[entry.callId] ~= nil
    end,
  },
}

function M.add_action(action)
  table.insert(M.actions, action)
end

--- The actions that apply to `entry`, as vim.ui.select items.
function M.actions_for(entry)
  return vim.tbl_filter(function(action)
    return action.available == nil or action.available(entry)
  end, M.actions)
end

function M.choose(entry)
  local actions = M.actions_for(entry)
  if #actions == 0 then
    -- Nothing to offer: say why instead of an empty menu.
    local _, why = M.result_lines(entry)
    vim.notify("toolhost: " .. tostring(why) .. ", and it changed no file", vim.log.levels.INFO)
    return
  end
  vim.ui.select(actions, {
    prompt = "toolhost: " .. M.row(entry),
    format_item = function(action)
      return action.label
    end,
    kind = "toolhost.activity",
  }, function(action)
    if action then
      action.run(entry)
    end
  end)
end

--- The entry under the cursor of the activity buffer, or nil.
function M.entry_at(line)
  local rows = vim.b.toolhost_activity or {}
  local call_id = rows[line - HEADER_LINES]
  for _, entry in ipairs(toolhost().state.activity) do
    if entry.callId == call_id then
      return entry
    end
  end
  return nil
end

--- The calls grouped by session (its agent named), the group of the newest call first,
--- each newest first: {{title, entries}}.
function M.groups(entries)
  local order, by_session = {}, {}
  for i = #entries, 1, -1 do
    local entry = entries[i]
    local session = tostring(entry.session)
    local group = by_session[session]
    if not group then
      local agent = present(entry.agent) and entry.agent or nil
      group = { session = session, agent = agent, entries = {} }
      by_session[session] = group
      table.insert(order, group)
    end
    table.insert(group.entries, entry)
  end
  for _, group in ipairs(order) do
    local who = group.agent and string.format("%s (session %s)", group.agent, group.session)
      or ("session " .. group.session)
    group.title = string.format("%s: %d call(s)", who, #group.entries)
  end
  return order
end

function M.open()
  local entries = toolhost().state.activity
  local lines = { "toolhost activity by agent, newest first (<CR> on a call: its actions)", "" }
  local rows = {}
  for _, group in ipairs(M.groups(entries)) do
    table.insert(lines, group.title)
    table.insert(rows, "") -- a group's line is no call
    for _, entry in ipairs(group.entries) do
      table.insert(lines, M.row(entry))
      table.insert(rows, entry.callId)
    end
  end
  if #entries == 0 then
    table.insert(lines, "no calls yet")
  end
  local bufnr = view.scratch(NAME, lines, "")
  vim.b[bufnr].toolhost_activity = rows
  vim.keymap.set("n", "<CR>", function()
    local entry = M.entry_at(vim.api.nvim_win_get_cursor(0)[1])
    if entry then
      M.choose(entry)
    end
  end, { buffer = bufnr, desc = "toolhost: actions of this call" })
  return bufnr
end

return M
