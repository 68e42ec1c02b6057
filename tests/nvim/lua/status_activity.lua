-- :Toolhost status with a running background job, and :Toolhost activity, whose rows show
-- a call's result.
local H = dofile(assert(os.getenv("TOOLHOST_TEST_HARNESS")))

H.run(function()
  local toolhost = H.start({ policy = { mode = "bypass" } })
  local job = assert(toolhost.call_sync("bash", { command = "sleep 30", run_in_background = true }))
  H.out.job = job
  local read = assert(toolhost.call_sync("read_file", { path = "notes.md" }))
  H.wait(function()
    return #toolhost.state.activity >= 2
  end, "the didCall notifications")

  vim.cmd("Toolhost status")
  H.out.status_lines = H.lines(vim.fn.bufnr("toolhost://output"))

  vim.cmd("Toolhost activity")
  local activity = vim.fn.bufnr("toolhost://activity")
  H.out.activity_lines = H.lines(activity)
  -- <CR> on the newest row (the read), then the first action.
  vim.api.nvim_set_current_win(vim.fn.bufwinid(activity))
  vim.api.nvim_win_set_cursor(0, { 4, 0 }) -- below the header and the session's line
  vim.ui.select = function(items, opts, on_choice)
    H.out.action_labels = vim.tbl_map(opts.format_item, items)
    vim.schedule(function()
      on_choice(items[1])
    end)
  end
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
  H.wait(function()
    return vim.fn.bufnr("toolhost://result/" .. read.callId) ~= -1
  end, "the result buffer")
  H.out.result_lines = H.lines(vim.fn.bufnr("toolhost://result/" .. read.callId))
  H.out.read_call_id = read.callId
end)
