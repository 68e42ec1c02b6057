-- Checkpoints: the calls that changed files, and "Revert this call" with a confirmation
-- that shows what will change. :Toolhost checkpoints lists them in the output split;
-- <CR> (or `r`) on a call's line asks, then reverts it. :Toolhost revert {callId} asks too.
local M = {}

local methods = require("toolhost.protocol").methods

local function toolhost()
  return require("toolhost")
end

local function notify(message, level)
  vim.notify("toolhost: " .. message, level or vim.log.levels.INFO)
end
M.notify = notify

--- The checkpoints, newest first ({callId, session, tool, time, label, files = {{path,
--- change, fromPath?, notStored?}}}), or nil and an error. Waits for the server.
function M.list(opts)
  opts = opts or {}
  local params = { limit = opts.limit or 50 }
  if opts.session then
    params.session = opts.session
  end
  local result, err = toolhost().request_sync(methods.checkpoints, params)
  return result and result.checkpoints, err
end

local function file_line(file)
  local from = (file.fromPath and file.fromPath ~= vim.NIL) and (" (from " .. file.fromPath .. ")") or ""
  local stored = file.notStored == true and " (not stored: cannot be restored)" or ""
  return string.format("  %-8s %s%s%s", file.change, file.path, from, stored)
end

local function what_changes(change)
  if change == "created" then
    return "removed"
  elseif change == "deleted" then
    return "restored"
  elseif change == "moved" then
    return "moved back"
  end
  return "put back"
end

--- The confirmation text: what reverting `checkpoint` will change.
function M.describe(checkpoint)
  local lines = {
    string.format("Revert call %s (%s%s)?", checkpoint.callId, checkpoint.tool,
      (checkpoint.label ~= "" and checkpoint.label ~= vim.NIL) and (": " .. checkpoint.label) or ""),
    "It will change:",
  }
  for _, file in ipairs(checkpoint.files or {}) do
    table.insert(lines, file_line(file) .. " -> " .. what_changes(file.change))
  end
  table.insert(lines, "Files changed since by someone else are left alone and listed as conflicts.")
  return lines
end

--- Lines (each may hold newlines) in the output split, as `filetype` (default diff).
local function show(lines, filetype)
  local flat = {}
  for _, line in ipairs(lines) do
    vim.list_extend(flat, vim.split(tostring(line), "\n", { plain = true }))
  end
  return require("toolhost.view").scratch("toolhost://output", flat, filetype or "diff")
end
M.show_lines = show

--- Revert without asking; returns the toolhost/revert result ({reverted, conflicts,
--- checkpoint, text}) or nil and an error.
function M.revert_now(call_id)
  return toolhost().request_sync(methods.revert, { callId = call_id }, 60000)
end

local function report(result, err)
  if not result then
    return notify((err and err.message) or "revert failed", vim.log.levels.ERROR)
  end
  M.last_result = result
  local lines = vim.split(result.text or "", "\n", { plain = true })
  for _, conflict in ipairs(result.conflicts or {}) do
    if conflict.diff and conflict.diff ~= "" then
      table.insert(lines, "")
      table.insert(lines, "changed since the call: " .. conflict.path)
      vim.list_extend(lines, vim.split(conflict.diff, "\n", { plain = true }))
    end
  end
  show(lines)
  -- Buffers of reverted files that are not modified follow the disk.
  vim.cmd("checktime")
end

--- "Revert this call": ask with what will change, then revert. `on_done(result, err)`.
function M.confirm_and_revert(checkpoint, on_done)
  local prompt = table.concat(M.describe(checkpoint), "\n")
  vim.ui.select({ "Revert this call", "Cancel" }, { prompt = prompt }, function(choice)
    if choice ~= "Revert this call" then
      if on_done then
        on_done(nil, { message = "cancelled" })
      end
      return
    end
    local result, err = M.revert_now(checkpoint.callId)
    local shown, why = pcall(report, result, err)
    if not shown then
      notify("showing the revert failed: " .. tostring(why), vim.log.levels.ERROR)
    end
    if on_done then
      on_done(result, err)
    end
  end)
end

--- :Toolhost revert {callId}
function M.revert(call_id, on_done)
  local listed, err = M.list({ limit = 500 })
  if not listed then
    return notify((err and err.message) or "no answer", vim.log.levels.ERROR)
  end
  for _, checkpoint in ipairs(listed) do
    if checkpoint.callId == call_id then
      return M.confirm_and_revert(checkpoint, on_done)
    end
  end
  notify("no checkpoint of call " .. tostring(call_id) .. " (see :Toolhost checkpoints)", vim.log.levels.WARN)
end

--- "Revert this call" among a call's actions in :Toolhost activity (once).
function M.add_to_activity()
  if M.in_activity then
    return
  end
  M.in_activity = true
  require("toolhost.activity").add_action({
    label = "Revert this call",
    available = function(entry)
      -- Only a call that wrote files has a checkpoint (not a read, not a refused call).
      return entry.callId ~= nil and type(entry.written) == "table" and #entry.written > 0
    end,
    run = function(entry)
      M.revert(entry.callId)
    end,
  })
end

--- :Toolhost checkpoints — the list; <CR> or r on a call's line reverts it (after asking).
function M.show()
  local listed, err = M.list()
  if not listed then
    return notify((err and err.message) or "no answer", vim.log.levels.ERROR)
  end
  local lines, at_line = {}, {}
  for _, checkpoint in ipairs(listed) do
    local when = os.date("%H:%M:%S", math.floor(checkpoint.time))
    local label = (checkpoint.label ~= "" and checkpoint.label ~= vim.NIL) and ("  " .. checkpoint.label) or ""
    table.insert(
      lines,
      string.format("%s  %s  %s [%s]%s", checkpoint.callId, when, checkpoint.tool, checkpoint.session, label)
    )
    at_line[#lines] = checkpoint
    for _, file in ipairs(checkpoint.files or {}) do
      table.insert(lines, file_line(file))
      at_line[#lines] = checkpoint
    end
  end
  if #lines == 0 then
    lines = { "no checkpoints: no call changed a file yet" }
  else
    table.insert(lines, "")
    table.insert(lines, "<CR> or r on a call: Revert this call (asks first)")
  end
  local bufnr = show(lines)
  local function revert_here()
    local checkpoint = at_line[vim.api.nvim_win_get_cursor(0)[1]]
    if checkpoint then
      M.confirm_and_revert(checkpoint)
    end
  end
  if bufnr then
    for _, key in ipairs({ "<CR>", "r" }) do
      vim.keymap.set("n", key, revert_here, { buffer = bufnr, desc = "toolhost: Revert this call" })
    end
  end
  return bufnr
end

return M
