-- :Toolhost tools [name] | call {name} {json} | checkpoints | revert {callId} | agents |
-- agent-diff {session} | agent-revert {session} | jobs | status | activity | start | stop
--   | trust [path]
-- Output goes to one scratch split (toolhost://output) that each command reuses.
local M = {}

local function toolhost()
  return require("toolhost")
end

local function show(lines)
  local flat = {}
  for _, line in ipairs(lines) do
    for _, piece in ipairs(vim.split(tostring(line), "\n", { plain = true })) do
      table.insert(flat, piece)
    end
  end
  local bufnr = require("toolhost.view").scratch("toolhost://output", flat, "markdown")
  vim.b[bufnr].toolhost_tool_list = false -- set again by :Toolhost tools' list alone
  return bufnr
end

local function fail(message)
  vim.notify("toolhost: " .. message, vim.log.levels.ERROR)
end

--- :Toolhost tools: one line per tool; with a name (or <CR> on a line), that tool in full.
function M.tools(name)
  local tools, err = toolhost().tools("full")
  if not tools then
    return fail((err and err.message) or "no answer")
  end
  local list = require("toolhost.tool_list")
  M.tool_names = vim.tbl_map(function(t)
    return t.name
  end, tools)
  local function from_the_top(bufnr)
    local win = vim.fn.bufwinid(bufnr)
    if win ~= -1 then
      vim.api.nvim_win_set_cursor(win, { 1, 0 })
      vim.wo[win].linebreak = true -- a description wraps between words
    end
    return bufnr
  end
  if name and name ~= "" then
    for _, tool in ipairs(tools) do
      if tool.name == name then
        return from_the_top(show(list.details(tool)))
      end
    end
    return fail("no tool named " .. name .. " (:Toolhost tools lists them)")
  end
  local bufnr = from_the_top(show(list.listing(tools)))
  vim.b[bufnr].toolhost_tool_list = true
  vim.keymap.set("n", "<CR>", function()
    local word = vim.api.nvim_get_current_line():match("^(%S+)")
    if vim.b.toolhost_tool_list and word and vim.tbl_contains(M.tool_names, word) then
      M.tools(word)
    end
  end, { buffer = bufnr, desc = "toolhost: the tool on this line in full" })
end

function M.call(name, json)
  if not name or name == "" then
    return fail("usage: :Toolhost call {name} {json arguments}")
  end
  local args = vim.empty_dict()
  if json and json:match("%S") then
    local ok, decoded = pcall(vim.json.decode, json)
    if not ok or type(decoded) ~= "table" then
      return fail("the arguments must be a JSON object: " .. tostring(decoded))
    end
    args = decoded
  end
  toolhost().call(name, args, function(result, err)
    toolhost().state.last_result = result
    if err then
      return fail(err.message or vim.inspect(err))
    end
    local lines = {}
    if result.isError and result.error then
      table.insert(lines, "ERROR " .. tostring(result.error.code))
    end
    table.insert(lines, toolhost().result_text(result))
    show(lines)
  end)
end

function M.jobs()
  local lines = {}
  for id, job in pairs(toolhost().state.jobs) do
    local code = job.exitCode ~= nil and job.exitCode ~= vim.NIL and (" exit " .. job.exitCode) or ""
    table.insert(lines, string.format("%s  %s  %s%s", id, job.session or "", job.status, code))
  end
  table.sort(lines)
  if #lines == 0 then
    lines = { "no background jobs" }
  end
  show(lines)
end

function M.status()
  local status, err = toolhost().status()
  if not status then
    return fail((err and err.message) or "toolhost is not running")
  end
  show(require("toolhost.status").lines(status, toolhost().state))
end

M.subcommands = {
  "activity",
  "agent-diff",
  "agent-revert",
  "agents",
  "call",
  "checkpoints",
  "jobs",
  "revert",
  "start",
  "status",
  "stop",
  "tools",
  "trust",
}

--- Entry point of :Toolhost (the whole argument string).
function M.run(args)
  local sub, rest = (args or ""):match("^%s*(%S+)%s*(.-)%s*$")
  if sub == "tools" then
    M.tools(rest)
  elseif sub == "call" then
    local name, json = rest:match("^(%S+)%s*(.*)$")
    M.call(name, json)
  elseif sub == "checkpoints" then
    require("toolhost.checkpoints").show()
  elseif sub == "revert" then
    if rest == "" then
      return fail("usage: :Toolhost revert {callId} (see :Toolhost checkpoints)")
    end
    require("toolhost.checkpoints").revert(rest)
  elseif sub == "agents" then
    require("toolhost.agents").show()
  elseif sub == "agent-diff" or sub == "agent-revert" then
    if rest == "" then
      return fail("usage: :Toolhost " .. sub .. " {session} (see :Toolhost agents)")
    end
    if sub == "agent-diff" then
      require("toolhost.agents").review(rest)
    else
      require("toolhost.agents").revert_session(rest)
    end
  elseif sub == "jobs" then
    M.jobs()
  elseif sub == "status" then
    M.status()
  elseif sub == "activity" then
    require("toolhost.activity").open()
  elseif sub == "start" then
    toolhost().start()
  elseif sub == "stop" then
    toolhost().stop()
  elseif sub == "trust" then
    require("toolhost.trust").command(rest)
  else
    fail("usage: :Toolhost " .. table.concat(M.subcommands, "|"))
  end
end

function M.complete(arglead, cmdline)
  local words = vim.split(cmdline, "%s+", { trimempty = true })
  local position = #words + (cmdline:match("%s$") and 1 or 0)
  local candidates = {}
  if position <= 2 then
    candidates = M.subcommands
  elseif position == 3 and (words[2] == "call" or words[2] == "tools") then
    if not M.tool_names and toolhost().client() then
      local tools = toolhost().tools("full") -- once; waits at most config.timeout_ms
      M.tool_names = tools and vim.tbl_map(function(t)
        return t.name
      end, tools)
    end
    candidates = M.tool_names or {}
  end
  return vim.tbl_filter(function(c)
    return c:sub(1, #arglead) == arglead
  end, candidates)
end

return M
