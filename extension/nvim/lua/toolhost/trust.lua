-- What a project may not set, and review of its .toolhost.toml.
--
-- Settings that loosen policy come from require("toolhost").setup() only: the plugin reads
-- no project file (no exrc value, no vim.g from a project, no workspace settings file), and
-- answers the server's workspace/configuration itself with what setup() gave, never with
-- the generic client.settings that vim.lsp.config() (a project's .nvim.lua, say) can fill.
--
-- A workspace .toolhost.toml whose settings loosen policy applies only once the user
-- approved its exact content: the server says so (toolhost/configUntrusted); :Toolhost
-- trust shows that content read-only and, when the user agrees, sends toolhost/trustConfig
-- with the sha256 of what was shown.
local protocol = require("toolhost.protocol")

local M = {}

local TRUST, KEEP = "Trust this content", "Keep ignoring it"

--- The toolhost section of setup()'s options (initializationOptions.toolhost).
function M.section(cfg)
  local options = vim.deepcopy(cfg.settings or {})
  if cfg.policy then
    options.policy = vim.deepcopy(cfg.policy)
  end
  if vim.tbl_isempty(options) then
    options = vim.empty_dict() -- an empty Lua table would be sent as a JSON array
  end
  return options
end

--- workspace/configuration: section "toolhost" from setup(), anything else null.
function M.configuration_handler(_, params)
  local answers = {}
  for i, item in ipairs((params or {}).items or {}) do
    answers[i] = item.section == "toolhost" and M.section(require("toolhost").config) or vim.NIL
  end
  return answers
end

local function ignored_text(params)
  local ignored = type(params.ignored) == "table" and params.ignored or {}
  return #ignored > 0 and table.concat(ignored, ", ") or "settings that loosen policy"
end

--- toolhost/configUntrusted: remember the file and say what was ignored.
function M.on_config_untrusted(_, params)
  if type(params) ~= "table" or type(params.path) ~= "string" then
    return
  end
  local state = require("toolhost").state
  state.config_untrusted = params
  state.untrusted_configs = state.untrusted_configs or {}
  state.untrusted_configs[params.path] = params
  vim.notify(
    string.format(
      "toolhost ignored %s's %s until you review it (%s): :Toolhost trust",
      vim.fs.basename(params.path),
      ignored_text(params),
      tostring(params.reason)
    ),
    vim.log.levels.WARN
  )
end

--- The files waiting for review: toolhost/status's workspaceConfig, else the notices.
local function waiting()
  local toolhost = require("toolhost")
  local status = toolhost.status()
  local found = {}
  if type(status) == "table" and type(status.workspaceConfig) == "table" then
    for _, entry in ipairs(status.workspaceConfig) do
      if entry.state == "untrusted" then
        table.insert(found, entry)
      end
    end
    return found
  end
  for _, entry in pairs(toolhost.state.untrusted_configs or {}) do
    table.insert(found, entry)
  end
  return found
end

local function read_bytes(path)
  local file = io.open(path, "rb")
  if not file then
    return nil
  end
  local bytes = file:read("*a")
  file:close()
  return bytes
end

--- Show `entry`'s content (only when it still hashes to what the server reported) and ask.
function M.review(entry, on_done)
  local state = require("toolhost").state
  local callback = on_done or function() end
  on_done = function(result, err)
    -- What the last review ended with (:Toolhost status and tests read it).
    state.last_trust = { path = entry.path, result = result or vim.NIL, error = err }
    callback(result, err)
  end
  local bytes = read_bytes(entry.path)
  if not bytes or bytes:find("\0", 1, true) or vim.fn.sha256(bytes) ~= entry.sha256 then
    vim.notify(
      "toolhost: "
        .. entry.path
        .. " changed since toolhost read it; it stays ignored until you review the new content",
      vim.log.levels.WARN
    )
    return on_done(nil)
  end
  local lines = vim.split(bytes, "\n", { plain = true })
  if lines[#lines] == "" then
    table.remove(lines)
  end
  require("toolhost.view").scratch("toolhost://review/" .. entry.path, lines, "toml")
  vim.ui.select({ TRUST, KEEP }, {
    prompt = string.format("Trust this content of %s? Its %s then apply", entry.path, ignored_text(entry)),
  }, function(choice)
    if choice ~= TRUST then
      vim.notify("toolhost: " .. entry.path .. " stays ignored", vim.log.levels.INFO)
      return on_done(nil)
    end
    local params = { path = entry.path, sha256 = entry.sha256 }
    require("toolhost").request(protocol.methods.trust_config, params, function(result, err)
      local message = err and (err.message or vim.inspect(err)) or (result and result.message) or ""
      vim.notify("toolhost: " .. message, (result and result.trusted) and vim.log.levels.INFO or vim.log.levels.WARN)
      on_done(result, err)
    end)
  end)
end

--- :Toolhost trust [path]: pick a file waiting for review (when several), review, trust.
function M.command(path, on_done)
  local entries = waiting()
  if path and path ~= "" then
    local full = vim.fs.normalize(vim.fn.fnamemodify(path, ":p"))
    entries = vim.tbl_filter(function(e)
      return e.path == full
    end, entries)
  end
  if #entries == 0 then
    vim.notify("toolhost: no workspace .toolhost.toml waits for review", vim.log.levels.INFO)
    return on_done and on_done(nil)
  end
  if #entries == 1 then
    return M.review(entries[1], on_done)
  end
  vim.ui.select(entries, {
    prompt = "Review which workspace config?",
    format_item = function(e)
      return e.path .. " (" .. tostring(e.reason) .. ")"
    end,
  }, function(entry)
    if entry then
      M.review(entry, on_done)
    elseif on_done then
      on_done(nil)
    end
  end)
end

return M
