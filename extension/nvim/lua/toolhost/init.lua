-- toolhost for Neovim: starts the toolhost language server for the workspace, answers its
-- approval and save requests, and offers a Lua API that agent-chat plugins can call.
--
--   require("toolhost").setup({})   -- finds toolhost: cmd, the workspace .venv, then PATH
--   require("toolhost").setup({ cmd = { "toolhost", "serve" }, policy = { mode = "default" } })
--   require("toolhost").call("read_file", { path = "README.md" }, function(result, err) end)
local protocol = require("toolhost.protocol")
local approve = require("toolhost.approve")
local secret = require("toolhost.secret")
local buffers = require("toolhost.buffers")
local lsp_proxy = require("toolhost.lsp_proxy")
local trust = require("toolhost.trust")

local M = {}

local methods = protocol.methods

local defaults = {
  name = "toolhost",
  -- The server command, used as given; nil: `toolhost` on PATH (and first
  -- <root>/.venv/bin/toolhost with workspace_venv).
  cmd = nil,
  -- Start the workspace's own .venv/bin/toolhost when there is one. Off by default: an agent
  -- working in the workspace can rewrite that file (or the venv's site-packages), and the
  -- server runs outside the sandbox; turn it on only where you trust the project's venv.
  workspace_venv = false,
  -- Start the server found as `toolhost serve --warm`: forked ready by a warm toolhost
  -- process kept for this user (docs/WARM.md). A `cmd` given adds "--warm" itself.
  warm = false,
  -- The first folder upwards from the current file (or cwd) holding one of these.
  root_markers = { ".toolhost.toml", ".git" },
  root_dir = nil,
  -- initializationOptions.toolhost.policy (same keys as [policy] in .toolhost.toml).
  policy = nil,
  -- Other config sections (limits, shell, edits, ...) sent in initializationOptions.toolhost.
  settings = {},
  -- Session id for :Toolhost call and M.call (nil: the server's "default").
  session = nil,
  autostart = true,
  -- Milliseconds that synchronous helpers (tools(), call_sync()) wait for the server.
  timeout_ms = 10000,
  max_activity = 200,
}

-- What a missing server is fixed by, for the start-up error and :checkhealth.
function M.install_fix(root)
  return {
    "install the toolhost command (Python >= 3.11): pipx install toolhost_runtime-VERSION-py3-none-any.whl"
      .. " (the wheel `./run dist` builds; or pip install it into a venv: see Install in toolhost's README)",
    -- The wheel of the distribution toolhost-runtime ("toolhost" on PyPI is another project).
    "or into the workspace: cd " .. root .. " && python3 -m venv .venv"
      .. " && .venv/bin/pip install /path/to/toolhost_runtime-VERSION-py3-none-any.whl"
      .. ", with require('toolhost').setup({ workspace_venv = true })",
    "or name it: require('toolhost').setup({ cmd = { '/path/to/toolhost', 'serve' } })",
  }
end

M.config = vim.deepcopy(defaults)

-- Runtime state (notifications received), kept for :Toolhost jobs / status.
M.state = {
  client_id = nil,
  root_dir = nil,
  server = nil, -- { cmd = {...}, found_by = "..." } of the running server
  jobs = {},
  activity = {},
  results = {}, -- callId -> the toolhost/call result of calls made from this editor
  presented = {},
  last_result = nil,
}

local function has(version)
  return vim.fn.has("nvim-" .. version) == 1
end

-- client:request (0.11+) versus client.request (0.9/0.10).
local function client_call(client, name, ...)
  if has("0.11") then
    return client[name](client, ...)
  end
  return client[name](...)
end

local function find_root(start)
  local cfg = M.config
  if cfg.root_dir then
    return vim.fs.normalize(cfg.root_dir)
  end
  local path = start ~= "" and start or vim.fn.getcwd()
  local found = vim.fs.find(cfg.root_markers, { upward = true, path = path })[1]
  if found then
    return vim.fs.dirname(found)
  end
  return vim.fn.getcwd()
end

--- The running toolhost client, or nil.
function M.client()
  local id = M.state.client_id
  if not id then
    return nil
  end
  local client = vim.lsp.get_client_by_id(id)
  if not client or (client.is_stopped and client_call(client, "is_stopped")) then
    return nil
  end
  return client
end

--- The server command for `root` and how it was found: the `cmd` setting (as given), the
--- workspace's .venv/bin/toolhost (only with the `workspace_venv` option), then `toolhost`
--- on PATH (both with "--warm" after "serve" when the `warm` option is on). Without one:
--- nil, what was looked at, and the fixes (lines for :checkhealth).
function M.find_server(root)
  if M.config.cmd then
    return M.config.cmd, "the cmd setting"
  end
  local function serve(toolhost)
    return M.config.warm and { toolhost, "serve", "--warm" } or { toolhost, "serve" }
  end
  local venv = root .. "/.venv/bin/toolhost"
  local venv_found = vim.fn.executable(venv) == 1
  if venv_found and M.config.workspace_venv then
    return serve(venv), "the workspace virtualenv (" .. venv .. ")"
  end
  local on_path = vim.fn.exepath("toolhost")
  if on_path ~= "" then
    return serve(on_path), "PATH (" .. on_path .. ")"
  end
  local looked = "toolhost was not found: no cmd setting, no " .. venv .. ", and not on PATH"
  if venv_found then
    looked = "toolhost was not found: no cmd setting and not on PATH; "
      .. venv
      .. " is not started on its own (an agent working in the workspace can change it, and the"
      .. " server runs outside the sandbox): setup({ workspace_venv = true }) uses it"
  end
  return nil, looked, M.install_fix(root)
end

local function in_root(bufnr)
  local root = M.state.root_dir
  if not root or vim.bo[bufnr].buftype ~= "" then
    return false
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" or name:match("^%a[%w+.-]*://") then
    return false
  end
  name = vim.fs.normalize(vim.fn.fnamemodify(name, ":p"))
  return name == root or name:sub(1, #root + 1) == root .. "/"
end

--- Attach a file buffer inside the workspace, so the server sees its unsaved text.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local id = M.state.client_id
  if id and vim.api.nvim_buf_is_loaded(bufnr) and in_root(bufnr) then
    vim.lsp.buf_attach_client(bufnr, id)
  end
end

local function on_did_call(_, params)
  local activity = M.state.activity
  params.time = os.time() -- when it finished, for :Toolhost activity
  table.insert(activity, params)
  while #activity > M.config.max_activity do
    local dropped = table.remove(activity, 1)
    M.state.results[dropped.callId] = nil
  end
end

local function on_job_update(_, params)
  if type(params) == "table" and params.jobId then
    M.state.jobs[params.jobId] = params
  end
end

local function on_present(_, params)
  -- The agent's declared deliverables: kept for :Toolhost status and announced once.
  if type(params) ~= "table" or type(params.files) ~= "table" then
    return
  end
  M.state.presented = params.files
  local names = {}
  for _, file in ipairs(params.files) do
    table.insert(names, file.path)
  end
  vim.notify("toolhost: the agent presented " .. table.concat(names, ", "), vim.log.levels.INFO)
end

local function client_config(root, cmd)
  local cfg = M.config
  local capabilities = vim.lsp.protocol.make_client_capabilities()
  capabilities.experimental = capabilities.experimental or {}
  capabilities.experimental.toolhost = vim.deepcopy(protocol.client_capabilities)
  -- Loosening settings come from setup() only (see trust.lua).
  local options = trust.section(cfg)
  return {
    name = cfg.name,
    cmd = cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fs.basename(root) } },
    capabilities = capabilities,
    init_options = { toolhost = options },
    handlers = {
      [methods.approve] = approve.handler,
      [methods.secret] = secret.handler,
      [methods.save_document] = buffers.save_document_handler,
      [methods.lsp_request] = lsp_proxy.handler,
      ["workspace/applyEdit"] = buffers.apply_edit_handler,
      [methods.did_call] = on_did_call,
      [methods.job_update] = on_job_update,
      [methods.present] = on_present,
      [methods.config_untrusted] = trust.on_config_untrusted,
      ["workspace/configuration"] = trust.configuration_handler,
    },
    on_exit = function()
      M.state.client_id = nil
    end,
  }
end

--- Start the server for the workspace (or return the running client's id).
function M.start()
  if M.client() then
    return M.state.client_id
  end
  local root = find_root(vim.api.nvim_buf_get_name(0))
  local cmd, found_by, fixes = M.find_server(root)
  if not cmd then
    vim.notify(
      "toolhost: " .. found_by .. ".\n" .. table.concat(fixes, "\n") .. "\n(:checkhealth toolhost)",
      vim.log.levels.ERROR
    )
    return nil
  end
  local config = client_config(root, cmd)
  local id
  if has("0.11") then
    id = vim.lsp.start(config, { attach = false })
  else
    id = vim.lsp.start_client(config)
  end
  if not id then
    vim.notify("toolhost: could not start " .. table.concat(cmd, " "), vim.log.levels.ERROR)
    return nil
  end
  M.state.client_id, M.state.root_dir = id, root
  M.state.server = { cmd = cmd, found_by = found_by }
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    M.attach(bufnr)
  end
  return id
end

function M.stop()
  local client = M.client()
  if client then
    client_call(client, "stop")
  end
  M.state.client_id = nil
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", vim.deepcopy(defaults), opts or {})
  require("toolhost.checkpoints").add_to_activity()
  local group = vim.api.nvim_create_augroup("toolhost", { clear = true })
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "BufFilePost" }, {
    group = group,
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  if M.config.autostart then
    M.start()
  end
end

local function request(method, params, on_result)
  local client = M.client()
  if not client then
    on_result(nil, { message = "toolhost is not running (call require('toolhost').setup())" })
    return
  end
  client_call(client, "request", method, params, function(err, result)
    on_result(result, err)
  end)
end

local function request_sync(method, params, timeout_ms)
  local done, result, err = false, nil, nil
  request(method, params, function(r, e)
    done, result, err = true, r, e
  end)
  if not vim.wait(timeout_ms or M.config.timeout_ms, function()
    return done
  end, 10) then
    return nil, { message = method .. " timed out" }
  end
  return result, err
end

local call_counter = 0

--- Call a tool. `on_result(result, err)` gets the toolhost/call result
--- ({callId, isError, content, error?, meta}) or a JSON-RPC error.
function M.call(name, args, on_result, opts)
  opts = opts or {}
  call_counter = call_counter + 1
  local params = {
    name = name,
    arguments = (args == nil or vim.tbl_isempty(args)) and vim.empty_dict() or args,
    callId = opts.callId or ("nvim-" .. call_counter),
    session = opts.session or M.config.session,
  }
  request(methods.call, params, function(result, err)
    if type(result) == "table" and result.callId then
      M.state.results[result.callId] = result -- for :Toolhost activity
    end
    if on_result then
      on_result(result, err)
    end
  end)
end

--- Call a tool and wait for its result (for scripts and commands).
function M.call_sync(name, args, timeout_ms, opts)
  local done, result, err = false, nil, nil
  M.call(name, args, function(r, e)
    done, result, err = true, r, e
  end, opts)
  if not vim.wait(timeout_ms or M.config.timeout_ms, function()
    return done
  end, 10) then
    return nil, { message = "toolhost/call " .. name .. " timed out" }
  end
  return result, err
end

--- The tools of a surface ("core", "full", "minimal"). With `on_result` the call is
--- asynchronous; without, it waits and returns the list ({name, description, readOnly,
--- inputSchema} each) or nil and an error.
function M.tools(surface, on_result)
  local params = { surface = surface or "core" }
  if on_result then
    request(methods.tools, params, function(result, err)
      on_result(result and result.tools, err)
    end)
    return nil
  end
  local result, err = request_sync(methods.tools, params)
  return result and result.tools, err
end

--- The server's status (sessions, jobs, language servers), waiting for it.
function M.status()
  return request_sync(methods.status, vim.empty_dict())
end

--- The text parts of a call result, joined.
function M.result_text(result)
  local parts = {}
  for _, part in ipairs((result and result.content) or {}) do
    if part.type == "text" then
      table.insert(parts, part.text)
    elseif part.type == "image" then
      table.insert(parts, "[image " .. tostring(part.mimeType) .. "]")
    end
  end
  return table.concat(parts, "\n")
end

--- Any toolhost/* request: asynchronous with `on_result(result, err)`, or waiting (sync).
M.request = request
M.request_sync = request_sync

M.command = function(args)
  return require("toolhost.commands").run(args)
end

return M
