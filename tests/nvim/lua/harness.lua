-- Shared by the Lua test scripts: starts the plugin against the real server and writes
-- what the script observed as JSON to $TOOLHOST_TEST_OUT.
local H = { out = {} }

H.workspace = assert(os.getenv("TOOLHOST_TEST_WORKSPACE"))

function H.wait(condition, what, timeout_ms)
  if not vim.wait(timeout_ms or 20000, condition, 10) then
    error("timed out waiting for " .. what)
  end
end

--- Load the plugin from the repository, call setup(opts) as a user does and wait for the
--- server; returns require("toolhost").
function H.setup(opts)
  vim.opt.rtp:prepend(assert(os.getenv("TOOLHOST_TEST_PLUGIN")))
  vim.cmd("runtime plugin/toolhost.lua")
  local toolhost = require("toolhost")
  toolhost.setup(opts)
  H.wait(function()
    local client = toolhost.client()
    return client ~= nil and client.initialized == true
  end, "the toolhost server to initialize", 90000)
  return toolhost
end

--- H.setup with this checkout's server command and the fixture workspace as root.
function H.start(opts)
  return H.setup(vim.tbl_deep_extend("force", {
    cmd = vim.json.decode(assert(os.getenv("TOOLHOST_TEST_CMD"))),
    root_dir = H.workspace,
  }, opts or {}))
end

-- An answer for stub_ui: the picker is closed without a choice (Escape).
H.DISMISS = "<dismiss>"

--- Replace vim.ui.select / vim.ui.input with scripted answers, recording each prompt.
--- `answers` is a list of choices (item labels, or H.DISMISS) taken in order; `inputs`
--- likewise.
function H.stub_ui(answers, inputs)
  H.out.prompts, H.out.items, H.out.screens = {}, {}, {}
  vim.ui.select = function(items, opts, on_choice)
    table.insert(H.out.prompts, opts.prompt)
    table.insert(H.out.items, items)
    table.insert(H.out.screens, H.screen())
    local answer = table.remove(answers, 1)
    if answer == H.DISMISS then
      answer = nil
    end
    -- Answer from the event loop, as a real picker does.
    vim.schedule(function()
      on_choice(answer)
    end)
  end
  vim.ui.input = function(opts, on_confirm)
    local answer = table.remove(inputs or {}, 1)
    vim.schedule(function()
      on_confirm(answer)
    end)
  end
end

--- The windows on screen now: {name, height, lines} each (what the user can see).
function H.screen()
  local windows = {}
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local bufnr = vim.api.nvim_win_get_buf(win)
    local top = vim.fn.line("w0", win)
    local height = vim.api.nvim_win_get_height(win)
    table.insert(windows, {
      name = vim.api.nvim_buf_get_name(bufnr),
      height = height,
      lines = vim.api.nvim_buf_get_lines(bufnr, top - 1, top - 1 + height, false),
    })
  end
  return windows
end

function H.read(path)
  local file = assert(io.open(H.workspace .. "/" .. path, "rb"))
  local text = file:read("*a")
  file:close()
  return text
end

function H.lines(bufnr)
  return vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
end

local function read_file(path)
  local file = io.open(path, "rb")
  if not file then
    return nil
  end
  local text = file:read("*a")
  file:close()
  return text
end

--- What the editor's server is, read while it runs (tests/warm/editor_servers.py): this
--- process's pipes and sockets, the socket pairs of the machine (`ss`), and those of each
--- process that is its child or a toolhost.
function H.server_processes()
  local uv = vim.uv or vim.loop
  local function channels(pid)
    local found = {}
    for _, fd in ipairs(vim.fn.readdir("/proc/" .. pid .. "/fd")) do
      local target = uv.fs_readlink("/proc/" .. pid .. "/fd/" .. fd) -- nil once closed
      if target and (target:find("^pipe:") or target:find("^socket:")) then
        table.insert(found, target)
      end
    end
    return found
  end
  local me = vim.fn.getpid()
  local processes = {}
  for _, name in ipairs(vim.fn.readdir("/proc")) do
    local stat = name:match("^%d+$") and read_file("/proc/" .. name .. "/stat")
    local cmdline = stat and read_file("/proc/" .. name .. "/cmdline")
    if cmdline then
      cmdline = vim.trim((cmdline:gsub("%z", " ")))
      local ppid = tonumber(stat:match(".*%)%s+%S+%s+(%d+)"))
      if ppid == me or cmdline:find("toolhost", 1, true) or cmdline:find("lsp_server", 1, true) then
        local ok, held = pcall(channels, name)
        table.insert(processes, { pid = tonumber(name), ppid = ppid, cmdline = cmdline, channels = ok and held or {} })
      end
    end
  end
  return { editorPid = me, channels = channels(me), unixSockets = vim.fn.system({ "ss", "-xnH" }), processes = processes }
end

local function write_out()
  local ok, encoded = pcall(vim.json.encode, H.out)
  if not ok then
    encoded = vim.json.encode({ error = "the observations could not be encoded: " .. tostring(encoded) })
  end
  local file = assert(io.open(assert(os.getenv("TOOLHOST_TEST_OUT")), "w"))
  file:write(encoded)
  file:close()
end

--- Run the test body; record an error with its traceback; always write the output.
function H.run(body)
  local ok, err = xpcall(body, debug.traceback)
  if not ok then
    H.out.error = tostring(err)
  end
  write_out()
  local toolhost = package.loaded["toolhost"]
  if toolhost then
    toolhost.stop()
  end
  vim.cmd(ok and "qall!" or "cquit!")
end

return H
