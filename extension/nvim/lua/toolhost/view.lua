-- Scratch buffers and the windows that show them: command output at the bottom, approval
-- requests at the top (where no picker covers them).
local M = {}

--- The scratch buffer `name` (reused when it exists) holding `lines`; not shown.
function M.buffer(name, lines, filetype)
  local bufnr = vim.fn.bufnr(name)
  if bufnr == -1 or not vim.api.nvim_buf_is_valid(bufnr) then
    bufnr = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(bufnr, name)
  end
  vim.bo[bufnr].bufhidden = "hide"
  vim.bo[bufnr].swapfile = false
  vim.bo[bufnr].modifiable = true
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].filetype = filetype or ""
  return bufnr
end

--- Show `lines` in a split at the bottom (reused when the buffer is already shown).
function M.scratch(name, lines, filetype)
  local bufnr = M.buffer(name, lines, filetype)
  if vim.fn.bufwinid(bufnr) == -1 then
    vim.cmd("botright split")
    vim.api.nvim_win_set_buf(0, bufnr)
  end
  return bufnr
end

--- Show `lines` in a window across the top of the screen, sized to them (at most 60% of
--- the screen), without moving the cursor; returns the buffer and the window.
function M.open_top(name, lines, filetype)
  local bufnr = M.buffer(name, lines, filetype)
  local win = vim.fn.bufwinid(bufnr)
  if win == -1 then
    local previous = vim.api.nvim_get_current_win()
    vim.cmd("topleft split")
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, bufnr)
    if vim.api.nvim_win_is_valid(previous) then
      vim.api.nvim_set_current_win(previous)
    end
  end
  local most = math.max(3, math.floor(vim.o.lines * 0.6))
  vim.api.nvim_win_set_height(win, math.min(#lines, most))
  vim.wo[win].winfixheight = true
  vim.wo[win].wrap = false
  vim.cmd("redraw")
  return bufnr, win
end

--- Whether the whole buffer is visible in the window.
function M.fits(win, bufnr)
  return vim.api.nvim_buf_line_count(bufnr) <= vim.api.nvim_win_get_height(win)
end

--- Close a window unless it is the last one.
function M.close(win)
  if win and vim.api.nvim_win_is_valid(win) and #vim.api.nvim_tabpage_list_wins(0) > 1 then
    vim.api.nvim_win_close(win, true)
  end
end

return M
