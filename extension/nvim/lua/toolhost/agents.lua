-- Each agent's changes: :Toolhost agents lists the sessions that changed files (their agent
-- named, newest first); on a line, `d` shows one diff of everything that session changed
-- ("Review this agent's changes") and `R` asks, then reverts each of its calls, newest
-- first ("Revert all of this agent's changes"). :Toolhost agent-diff {session} and
-- :Toolhost agent-revert {session} do the same by name.
local M = {}

local methods = require("toolhost.protocol").methods

local function toolhost()
  return require("toolhost")
end

local notify = require("toolhost.checkpoints").notify
local show = require("toolhost.checkpoints").show_lines

local function named(value)
  return value ~= nil and value ~= vim.NIL and value ~= ""
end

--- The sessions that changed files, newest first: {session, agent?, calls, files = {paths}}.
function M.list()
  local listed, err = require("toolhost.checkpoints").list({ limit = 1000 })
  if not listed then
    return nil, err
  end
  local order, by_session = {}, {}
  for _, checkpoint in ipairs(listed) do
    local entry = by_session[checkpoint.session]
    if not entry then
      entry = { session = checkpoint.session, calls = 0, files = {}, seen = {} }
      by_session[checkpoint.session] = entry
      table.insert(order, entry)
    end
    entry.calls = entry.calls + 1
    if named(checkpoint.agent) and not entry.agent then
      entry.agent = checkpoint.agent
    end
    for _, file in ipairs(checkpoint.files or {}) do
      if not entry.seen[file.path] then
        entry.seen[file.path] = true
        table.insert(entry.files, file.path)
      end
    end
  end
  for _, entry in ipairs(order) do
    entry.seen = nil
  end
  return order
end

local function who(entry)
  if entry.agent then
    return string.format("%s (session %s)", entry.agent, entry.session)
  end
  return "session " .. entry.session
end

--- "Review this agent's changes": one diff of everything the session changed.
function M.review(session)
  local result, err = toolhost().request_sync(methods.session_changes, { session = session }, 60000)
  if not result then
    return notify((err and err.message) or "no answer", vim.log.levels.ERROR)
  end
  M.last_review = result
  local lines = { "# " .. (result.text or "") }
  for _, file in ipairs(result.files or {}) do
    table.insert(lines, "# " .. file.change .. " " .. file.path)
  end
  table.insert(lines, result.diff or "")
  return show(lines)
end

--- "Revert all of this agent's changes": asks, then reverts each call, newest first.
--- `on_done(result, err)`.
function M.revert_all(entry, on_done)
  local prompt = table.concat({
    string.format("Revert all %d call(s) of %s?", entry.calls, who(entry)),
    "Each call is reverted, newest first; files changed since by someone else are left alone and listed.",
  }, "\n")
  vim.ui.select({ "Revert all of them", "Cancel" }, { prompt = prompt }, function(choice)
    if choice ~= "Revert all of them" then
      if on_done then
        on_done(nil, { message = "cancelled" })
      end
      return
    end
    local params = { session = entry.session, by = "nvim" }
    local result, err = toolhost().request_sync(methods.revert_session, params, 120000)
    if result then
      M.last_result = result
      local lines = vim.split(result.text or "", "\n", { plain = true })
      for _, conflict in ipairs(result.conflicts or {}) do
        if named(conflict.diff) then
          table.insert(lines, "")
          table.insert(lines, "changed since: " .. conflict.path)
          vim.list_extend(lines, vim.split(conflict.diff, "\n", { plain = true }))
        end
      end
      show(lines, "text")
      vim.cmd("checktime") -- unmodified buffers of reverted files follow the disk
    else
      notify((err and err.message) or "revert failed", vim.log.levels.ERROR)
    end
    if on_done then
      on_done(result, err)
    end
  end)
end

local function find(session)
  local listed, err = M.list()
  if not listed then
    return nil, err
  end
  for _, entry in ipairs(listed) do
    if entry.session == session then
      return entry
    end
  end
  return nil, { message = "no checkpoint of session " .. session .. " (see :Toolhost agents)" }
end

--- :Toolhost agent-revert {session}
function M.revert_session(session, on_done)
  local entry, err = find(session)
  if not entry then
    return notify(err.message, vim.log.levels.WARN)
  end
  M.revert_all(entry, on_done)
end

--- :Toolhost agents — one line per session; `d` reviews, `R` reverts all (after asking).
function M.show()
  local listed, err = M.list()
  if not listed then
    return notify((err and err.message) or "no answer", vim.log.levels.ERROR)
  end
  local lines, at_line = {}, {}
  for _, entry in ipairs(listed) do
    table.insert(lines, string.format("%s: %d call(s), %d file(s)", who(entry), entry.calls, #entry.files))
    at_line[#lines] = entry
    table.insert(lines, "  " .. table.concat(entry.files, ", "))
    at_line[#lines] = entry
  end
  if #lines == 0 then
    lines = { "no agent changed a file yet" }
  else
    table.insert(lines, "")
    table.insert(lines, "d on an agent: review its changes (one diff); R: revert all of them (asks first)")
  end
  local bufnr = show(lines, "text")
  if bufnr then
    local function here()
      return at_line[vim.api.nvim_win_get_cursor(0)[1]]
    end
    vim.keymap.set("n", "d", function()
      local entry = here()
      if entry then
        M.review(entry.session)
      end
    end, { buffer = bufnr, desc = "toolhost: Review this agent's changes" })
    vim.keymap.set("n", "R", function()
      local entry = here()
      if entry then
        M.revert_all(entry)
      end
    end, { buffer = bufnr, desc = "toolhost: Revert all of this agent's changes" })
  end
  return bufnr
end

return M
