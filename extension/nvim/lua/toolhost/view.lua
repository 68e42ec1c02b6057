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

--- The columns of text a line of `win` shows (without its number or sign columns).
local function text_width(win)
  local info = vim.fn.getwininfo(win)[1]
  return info.width - info.textoff
end

--- The screen rows the buffer takes in `win`: a wrapped line counts each of its rows.
function M.rows(win, bufnr)
  if vim.api.nvim_win_text_height then -- 0.10+
    return vim.api.nvim_win_text_height(win, {}).all
  end
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  if not vim.wo[win].wrap then
    return #lines
  end
  local width, rows = math.max(1, text_width(win)), 0
  for _, line in ipairs(lines) do
    rows = rows + math.max(1, math.ceil(vim.fn.strdisplaywidth(line) / width))
  end
  return rows
end

--- Show `lines` in a window across the top of the screen, sized to them (at most 60% of
--- the screen), without moving the cursor; returns the buffer and the window. With `wrap`
--- a long line continues on the next rows (indented further); without, it is cut at the
--- window's edge (see M.fits).
function M.open_top(name, lines, filetype, wrap)
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
  vim.wo[win].wrap = wrap == true
  vim.wo[win].breakindent = wrap == true
  vim.wo[win].breakindentopt = "shift:2"
  local most = math.max(3, math.floor(vim.o.lines * 0.6))
  vim.api.nvim_win_set_height(win, math.min(M.rows(win, bufnr), most))
  vim.wo[win].winfixheight = true
  vim.cmd("redraw")
  return bufnr, win
end

--- Whether the whole buffer is visible in the window: every row, and (without 'wrap')
--- every line to its end.
function M.fits(win, bufnr)
  if M.rows(win, bufnr) > vim.api.nvim_win_get_height(win) then
    return false
  end
  if vim.wo[win].wrap then
    return true
  end
  local width = text_width(win)
  for _, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    if vim.fn.strdisplaywidth(line) > width then
      return false
    end
  end
  return true
end

--- Close a window unless it is the last one.
function M.close(win)
  if win and vim.api.nvim_win_is_valid(win) and #vim.api.nvim_tabpage_list_wins(0) > 1 then
    vim.api.nvim_win_close(win, true)
  end
end

return M
