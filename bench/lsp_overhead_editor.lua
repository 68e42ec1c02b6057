-- The editor of bench/lsp_overhead.py's editor arm: a headless Neovim that runs the language
-- server for the buffer (vim.lsp.start, as a user's config does) and the toolhost plugin.
-- Once its own server answers, it writes $TOOLHOST_BENCH_READY and serves a control pipe:
-- each line "own" times one definition request of its own (the editor's latency, measured
-- in Neovim) and answers {"ns": ..., "found": ...}; "quit" ends it.
local cfg = vim.json.decode(assert(os.getenv("TOOLHOST_BENCH_EDITOR")))

local function fail(message)
  io.stderr:write("lsp_overhead_editor: " .. message .. "\n")
  vim.cmd("cquit!")
end

local function wait(condition, what, timeout_ms)
  if not vim.wait(timeout_ms, condition, 5) then
    fail("timed out waiting for " .. what)
  end
end

local function empty(result)
  return result == nil or result == vim.NIL or (type(result) == "table" and vim.tbl_isempty(result))
end

vim.cmd("edit " .. vim.fn.fnameescape(cfg.workspace .. "/" .. cfg.file))
local bufnr = vim.api.nvim_get_current_buf()
local server_id = assert(vim.lsp.start({
  name = cfg.server_name,
  cmd = cfg.server_cmd,
  root_dir = cfg.workspace,
  settings = { python = { analysis = { diagnosticMode = "openFilesOnly" } } },
}, { bufnr = bufnr }))
local server = vim.lsp.get_client_by_id(server_id)
wait(function()
  return server.initialized == true
end, cfg.server_name .. " to initialize", 120000)

local params = {
  textDocument = { uri = vim.uri_from_bufnr(bufnr) },
  position = { line = cfg.line, character = cfg.character },
}

--- One definition request of the editor's own; on_answer(nanoseconds, found).
local function own_request(on_answer)
  local started = vim.uv.hrtime()
  server:request("textDocument/definition", params, function(_, result)
    on_answer(vim.uv.hrtime() - started, not empty(result))
  end, bufnr)
end

-- Warm: the editor asks until its server knows the answer (it may answer empty while loading).
local own_first_ns, found = nil, false
local started = vim.uv.hrtime()
while not found do
  local answered = false
  own_request(function(_, ok)
    found, answered = ok, true
  end)
  wait(function()
    return answered
  end, "the editor's own definition", 60000)
end
own_first_ns = vim.uv.hrtime() - started

vim.opt.rtp:prepend(cfg.plugin)
vim.cmd("runtime plugin/toolhost.lua")
local toolhost = require("toolhost")
toolhost.setup({ cmd = cfg.toolhost_cmd, root_dir = cfg.workspace })
wait(function()
  local client = toolhost.client()
  return client ~= nil and client.initialized == true
end, "the toolhost server to initialize", 120000)

local done = false
local control = assert(vim.uv.new_pipe(false))
assert(control:bind(cfg.control))
assert(control:listen(1, function()
  local connection = assert(vim.uv.new_pipe(false))
  control:accept(connection)
  local pending = ""
  connection:read_start(function(err, data)
    if err or not data then
      done = true
      return
    end
    pending = pending .. data
    for line in pending:gmatch("([^\n]*)\n") do
      if line == "own" then
        vim.schedule(function()
          own_request(function(ns, ok)
            connection:write(vim.json.encode({ ns = ns, found = ok }) .. "\n")
          end)
        end)
      elseif line == "quit" then
        done = true
      end
    end
    pending = pending:match("[^\n]*$")
  end)
end))

local ready = assert(io.open(cfg.ready .. ".part", "w"))
ready:write(vim.json.encode({ own_first_ns = own_first_ns, pid = vim.fn.getpid() }))
ready:close()
assert(os.rename(cfg.ready .. ".part", cfg.ready))
wait(function()
  return done
end, "the bench to finish", 3600000)
toolhost.stop()
vim.lsp.stop_client(server_id)
vim.cmd("qall!")
