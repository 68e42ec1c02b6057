-- Answers toolhost/lspRequest: the agent's lsp_* questions go to the language servers this
-- Neovim already runs for the buffer (warm, with the user's settings), instead of a second
-- copy started by toolhost. No client for the buffer: handled = false, and toolhost asks
-- its own server.
--
-- toolhost sends positions in UTF-16 code units (LSP's default); each client gets them in
-- its own offset encoding, and diagnostics come back in UTF-16.
local await = require("toolhost.await")

local M = {}

-- Less than the server's bound (lsp.editorTimeoutSeconds, default 30 s), so that an
-- answer that comes is not thrown away.
M.timeout_ms = 25000

local function is_toolhost(client)
  local ok, toolhost = pcall(require, "toolhost")
  return client.name == "toolhost" or (ok and client.id == toolhost.state.client_id)
end

local function get_clients(filter)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients(filter)
  end
  return vim.lsp.get_active_clients(filter)
end

local function supports(client, method, bufnr)
  if vim.fn.has("nvim-0.11") == 1 then
    return client:supports_method(method, bufnr)
  end
  return client.supports_method(method, { bufnr = bufnr })
end

--- The buffer for `uri`, loaded (with its filetype) if it was not.
local function load_buffer(uri)
  local bufnr = vim.uri_to_bufnr(uri)
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    vim.fn.bufload(bufnr)
  end
  if vim.bo[bufnr].filetype == "" then
    local filetype = vim.filetype.match({ buf = bufnr })
    if filetype then
      vim.bo[bufnr].filetype = filetype
    end
  end
  return bufnr
end

--- Language clients (not toolhost) for the buffer; a running client for the same root and
--- filetype is attached to a buffer it has not seen yet (the buffer was just loaded).
local function clients_for(bufnr, method)
  local found = {}
  for _, client in ipairs(get_clients({ bufnr = bufnr })) do
    if not is_toolhost(client) and supports(client, method, bufnr) then
      table.insert(found, client)
    end
  end
  if #found > 0 then
    return found
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  local filetype = vim.bo[bufnr].filetype
  for _, client in ipairs(get_clients()) do
    local root = client.root_dir or (client.config and client.config.root_dir)
    local inside = root and vim.startswith(name, root .. "/")
    local same_type = false
    for attached in pairs(client.attached_buffers or {}) do
      if vim.api.nvim_buf_is_valid(attached) and vim.bo[attached].filetype == filetype then
        same_type = true
      end
    end
    if not is_toolhost(client) and inside and same_type then
      vim.lsp.buf_attach_client(bufnr, client.id)
      if supports(client, method, bufnr) then
        table.insert(found, client)
      end
    end
  end
  return found
end

local function line_text(bufnr, line)
  return vim.api.nvim_buf_get_lines(bufnr, line, line + 1, false)[1] or ""
end

-- Character offsets between encodings, on one line of text.
local function byte_of(text, encoding, index)
  if vim.fn.has("nvim-0.11") == 1 then
    return vim.str_byteindex(text, encoding, index, false)
  end
  return vim.str_byteindex(text, index, encoding == "utf-16")
end

local function index_of(text, encoding, byte)
  if encoding == "utf-8" then
    return byte
  end
  if vim.fn.has("nvim-0.11") == 1 then
    return vim.str_utfindex(text, encoding, byte, false)
  end
  local utf32, utf16 = vim.str_utfindex(text, byte)
  return encoding == "utf-16" and utf16 or utf32
end

local function params_for(client, bufnr, params)
  local copy = vim.deepcopy(params)
  local encoding = client.offset_encoding or "utf-16"
  if copy.position and encoding ~= "utf-16" then
    local text = line_text(bufnr, copy.position.line)
    copy.position.character = index_of(text, encoding, byte_of(text, "utf-16", copy.position.character))
  end
  return copy
end

local function request(client, method, params, bufnr)
  return await.await(function(done)
    local function on_answer(err, result)
      done({ err = err, result = result })
    end
    local ok
    if vim.fn.has("nvim-0.11") == 1 then
      ok = client:request(method, params, on_answer, bufnr)
    else
      ok = client.request(method, params, on_answer, bufnr)
    end
    if not ok then
      done({ err = { message = client.name .. " is not running" } })
    end
  end, M.timeout_ms)
end

local function empty(result)
  return result == nil or result == vim.NIL or (type(result) == "table" and vim.tbl_isempty(result))
end

--- Diagnostics Neovim holds for the buffer from `clients`, as LSP diagnostics in UTF-16.
local function held_diagnostics(bufnr, clients)
  local items = {}
  for _, client in ipairs(clients) do
    local namespace = vim.lsp.diagnostic.get_namespace(client.id)
    for _, d in ipairs(vim.diagnostic.get(bufnr, { namespace = namespace })) do
      local text = line_text(bufnr, d.lnum)
      local start = index_of(text, "utf-16", math.min(d.col, #text))
      table.insert(items, {
        range = {
          start = { line = d.lnum, character = start },
          ["end"] = { line = d.end_lnum or d.lnum, character = start },
        },
        severity = d.severity,
        message = d.message,
        source = d.source,
        code = d.code,
      })
    end
  end
  return { kind = "full", items = items }
end

-- The buffer's changedtick when diagnostics last changed for it: the ones Neovim holds are
-- for the current text when it has not changed since.
local ticks = vim.api.nvim_create_augroup("toolhost_diagnostic_ticks", { clear = true })
vim.api.nvim_create_autocmd("DiagnosticChanged", {
  group = ticks,
  callback = function(event)
    if vim.api.nvim_buf_is_valid(event.buf) then
      vim.b[event.buf].toolhost_diagnostics_tick = vim.api.nvim_buf_get_changedtick(event.buf)
    end
  end,
})

--- Wait (bounded) until the diagnostics Neovim holds are for the buffer's current text.
local function wait_for_current(bufnr)
  vim.wait(M.timeout_ms, function()
    return vim.b[bufnr].toolhost_diagnostics_tick == vim.api.nvim_buf_get_changedtick(bufnr)
  end, 20)
end

--- Pulled diagnostics' start columns, from the client's encoding into UTF-16.
local function in_utf16(bufnr, client, items)
  local encoding = client.offset_encoding or "utf-16"
  if encoding == "utf-16" then
    return items
  end
  for _, item in ipairs(items) do
    local start = item.range and item.range.start
    if start then
      local text = line_text(bufnr, start.line)
      start.character = index_of(text, "utf-16", byte_of(text, encoding, start.character))
    end
  end
  return items
end

local function answer_diagnostics(bufnr, clients)
  for _, client in ipairs(clients) do
    if supports(client, "textDocument/diagnostic", bufnr) then
      local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) } }
      local answer = request(client, "textDocument/diagnostic", params, bufnr)
      if answer and not answer.err and type(answer.result) == "table" then
        local items = in_utf16(bufnr, client, answer.result.items or {})
        return { handled = true, result = { kind = "full", items = items }, server = client.name }
      end
    end
  end
  wait_for_current(bufnr)
  return { handled = true, result = held_diagnostics(bufnr, clients), server = clients[1].name }
end

function M.answer(method, params)
  local uri = params and params.textDocument and params.textDocument.uri
  if type(uri) ~= "string" then
    return { handled = false }
  end
  local bufnr = load_buffer(uri)
  if method == "textDocument/diagnostic" then
    -- Servers that only push diagnostics count too: any client of the buffer.
    local clients = clients_for(bufnr, "textDocument/hover")
    if #clients == 0 then
      return { handled = false }
    end
    return answer_diagnostics(bufnr, clients)
  end
  local clients = clients_for(bufnr, method)
  if #clients == 0 then
    return { handled = false }
  end
  local last
  for _, client in ipairs(clients) do
    local answer = request(client, method, params_for(client, bufnr, params), bufnr)
    if answer and not answer.err then
      last = { handled = true, result = answer.result, server = client.name }
      if not empty(answer.result) then
        return last
      end
    end
  end
  return last or { handled = false }
end

--- The LSP request handler for toolhost/lspRequest.
function M.handler(_, params, _)
  local ok, answer = pcall(M.answer, params.method, params.params)
  if not ok then
    vim.notify("toolhost: answering a language question failed: " .. tostring(answer), vim.log.levels.WARN)
    return { handled = false }
  end
  return answer
end

return M
