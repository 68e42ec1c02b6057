-- The toolhost/status result as lines a person reads (:Toolhost status, :checkhealth).
local M = {}

local function present(value)
  return value ~= nil and value ~= vim.NIL
end

--- "14:03:12 (5 min ago)" for a Unix time in seconds.
function M.clock(epoch)
  local ago = os.time() - math.floor(epoch)
  local span
  if ago < 60 then
    span = string.format("%d s ago", math.max(ago, 0))
  elseif ago < 3600 then
    span = string.format("%d min ago", math.floor(ago / 60))
  else
    span = string.format("%.1f h ago", ago / 3600)
  end
  return os.date("%H:%M:%S", math.floor(epoch)) .. " (" .. span .. ")"
end

local function relative(path, root)
  if type(path) ~= "string" or not root then
    return tostring(path)
  end
  if path == root then
    return "."
  end
  if path:sub(1, #root + 1) == root .. "/" then
    return path:sub(#root + 2)
  end
  return path
end

local function session_line(session, root)
  return string.format(
    "  %-12s %d calls, %d files read, folder %s",
    tostring(session.id),
    session.calls or 0,
    session.observedFiles or 0,
    relative(session.cwd, root)
  )
end

local function job_line(job)
  local state = tostring(job.status)
  if present(job.exitCode) then
    state = state .. " (exit " .. tostring(job.exitCode) .. ")"
  end
  local started = present(job.startedAt) and (", started " .. M.clock(job.startedAt)) or ""
  return string.format("  %s  %s  %s%s", tostring(job.jobId), state, tostring(job.command), started)
end

local function server_line(server)
  local busy = server.indexing and ", indexing" or ""
  return string.format(
    "  %s  pid %s, %d open documents%s",
    tostring(server.language),
    tostring(server.pid),
    server.openDocuments or 0,
    busy
  )
end

local function index_lines(index, root)
  local lines = {}
  for _, entry in ipairs((type(index) == "table" and index.roots) or {}) do
    local state = entry.building and "building" or (entry.complete and "complete" or "partial")
    if present(entry.error) then
      state = "failed: " .. tostring(entry.error)
    end
    table.insert(
      lines,
      string.format(
        "  %s  %s, %d files, %d symbols",
        relative(entry.root, root),
        state,
        entry.files or 0,
        entry.symbols or 0
      )
    )
  end
  return lines
end

local function section(lines, title, rows, empty)
  table.insert(lines, "")
  table.insert(lines, title)
  if #rows == 0 then
    table.insert(lines, "  " .. empty)
  else
    vim.list_extend(lines, rows)
  end
end

--- Lines for a toolhost/status result; `state` is the plugin's state (root, server).
function M.lines(status, state)
  local root = (status.roots or {})[1] or (state and state.root_dir)
  local lines = { "toolhost " .. tostring(status.version) .. ", workspace " .. tostring(root) }
  if state and state.server then
    table.insert(lines, "server: " .. table.concat(state.server.cmd, " ") .. " (from " .. state.server.found_by .. ")")
  end
  local rows = {}
  for _, session in ipairs(status.sessions or {}) do
    table.insert(rows, session_line(session, root))
  end
  section(lines, "Sessions", rows, "none yet")
  rows = {}
  for _, job in ipairs(status.jobs or {}) do
    table.insert(rows, job_line(job))
  end
  section(lines, "Background jobs", rows, "none")
  rows = {}
  for _, server in ipairs(status.languageServers or {}) do
    table.insert(rows, server_line(server))
  end
  section(lines, "Language servers", rows, "none started (they start on first use)")
  section(lines, "Code index", index_lines(status.index, root), "not built yet")
  rows = {}
  if type(status.managedConfig) == "table" then
    local managed = status.managedConfig
    local what = managed.state == "invalid" and ("INVALID: " .. tostring(managed.message))
      or ("locks " .. table.concat(managed.locked or {}, ", "))
    table.insert(rows, "  managed file " .. tostring(managed.path) .. ": " .. what)
  end
  for _, file in ipairs(status.workspaceConfig or {}) do
    local trust = file.state == "trusted" and "trusted" or "NOT TRUSTED"
    table.insert(rows, "  " .. tostring(file.path) .. ": " .. trust .. " (" .. tostring(file.reason) .. ")")
    if file.state ~= "trusted" and #(file.ignored or {}) > 0 then
      table.insert(rows, "    ignored until you trust it: " .. table.concat(file.ignored, ", "))
    end
  end
  section(lines, "Config files", rows, "no managed or workspace config file")
  rows = {}
  local keys = vim.tbl_keys(type(status.policySources) == "table" and status.policySources or {})
  table.sort(keys)
  for _, key in ipairs(keys) do
    table.insert(rows, string.format("  %-28s %s", key, tostring(status.policySources[key])))
  end
  section(lines, "Policy values set by", rows, "defaults only")
  rows = {}
  for _, problem in ipairs(status.configProblems or {}) do
    table.insert(rows, "  " .. tostring(problem))
  end
  section(lines, "Configuration problems", rows, "none")
  return lines
end

return M
