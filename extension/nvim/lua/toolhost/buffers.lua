-- Edits that the server sends to open buffers, and saving them on request.
--
-- Neovim's default workspace/applyEdit handler skips a TextDocumentEdit whose version is
-- older than the buffer with only a print() and still answers applied = true. toolhost
-- relies on the editor refusing such an edit (the agent must not overwrite what the user
-- just typed), so this handler checks the version itself and answers applied = false.
-- Each agent edit is made its own undo step, so `u` undoes the agent and not the user.
local M = {}

local function buffer_version(bufnr)
  local versions = vim.lsp.util.buf_versions
  local version = versions and versions[bufnr]
  if version == nil then
    version = vim.api.nvim_buf_get_changedtick(bufnr)
  end
  return version
end

local function document_changes(edit)
  local changes = {}
  if type(edit.documentChanges) == "table" then
    for _, change in ipairs(edit.documentChanges) do
      if change.textDocument then
        table.insert(changes, change)
      end
    end
  end
  return changes
end

--- Check each versioned TextDocumentEdit against its buffer; return an error text or nil.
function M.stale_reason(edit)
  for _, change in ipairs(document_changes(edit)) do
    local version = change.textDocument.version
    if version ~= nil and version ~= vim.NIL then
      local bufnr = vim.uri_to_bufnr(change.textDocument.uri)
      if vim.api.nvim_buf_is_loaded(bufnr) then
        local current = buffer_version(bufnr)
        if current ~= version then
          return string.format(
            "the buffer %s is at version %d, the edit was made for version %d",
            change.textDocument.uri,
            current,
            version
          )
        end
      end
    end
  end
  return nil
end

-- Setting 'undolevels' to its own value closes the current undo block (:h undo-break).
local function break_undo(bufnr)
  vim.api.nvim_buf_call(bufnr, function()
    vim.cmd("let &l:undolevels = &l:undolevels")
    vim.cmd("let &g:undolevels = &g:undolevels")
  end)
end

local function flush_changes(client_id)
  -- Send the didChange for the edit before the answer, so the server sees the new text
  -- when it continues. _changetracking is internal: tolerate its absence or a new shape.
  local ok, changetracking = pcall(require, "vim.lsp._changetracking")
  local client = vim.lsp.get_client_by_id(client_id)
  if ok and client and type(changetracking.flush) == "function" then
    pcall(changetracking.flush, client)
  end
end

function M.apply_edit_handler(err, params, ctx)
  local reason = M.stale_reason(params.edit or {})
  if reason then
    return { applied = false, failureReason = reason }
  end
  local buffers = {}
  for _, change in ipairs(document_changes(params.edit)) do
    local bufnr = vim.uri_to_bufnr(change.textDocument.uri)
    if vim.api.nvim_buf_is_loaded(bufnr) then
      buffers[bufnr] = true
      break_undo(bufnr)
    end
  end
  local default = vim.lsp.handlers["workspace/applyEdit"]
  -- Without the label: the default handler print()s it on every agent edit.
  local unlabelled = vim.tbl_extend("force", {}, params)
  unlabelled.label = nil
  local result = default(err, unlabelled, ctx)
  for bufnr in pairs(buffers) do
    break_undo(bufnr)
  end
  flush_changes(ctx.client_id)
  return result
end

--- toolhost/saveDocument {uri} -> {saved}: write the buffer so the disk matches it.
function M.save_document_handler(_, params, _)
  local uri = params and params.uri
  if type(uri) ~= "string" then
    return { saved = false }
  end
  local bufnr = vim.uri_to_bufnr(uri)
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    return { saved = false }
  end
  local ok, err = pcall(vim.api.nvim_buf_call, bufnr, function()
    vim.cmd("silent keepalt update")
  end)
  if not ok then
    vim.notify("toolhost: could not save " .. uri .. ": " .. tostring(err), vim.log.levels.WARN)
    return { saved = false }
  end
  return { saved = not vim.bo[bufnr].modified }
end

return M
