-- "Revert this call" on a file open and dirty in Neovim: the revert goes through the buffer
-- (one undo step), the user's unsaved text elsewhere survives, the confirmation names
-- what will change.
local H = dofile(assert(os.getenv("TOOLHOST_TEST_HARNESS")))

local function type_keys(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "xt", false)
end

H.run(function()
  local toolhost = H.start({ policy = { mode = "acceptEdits" } })
  H.stub_ui({ "Revert this call" })
  local checkpoints = require("toolhost.checkpoints")

  vim.cmd("edit " .. H.workspace .. "/notes.md")
  local notes = vim.api.nvim_get_current_buf()
  type_keys("ggOtyped by the user, not saved<Esc>")
  assert(toolhost.call_sync("read_file", { path = "notes.md" }))
  H.out.edit = assert(toolhost.call_sync("edit_file", {
    path = "notes.md",
    old_string = "line four",
    new_string = "line four, edited by the agent",
  }, nil, { callId = "nv-edit" }))
  type_keys("Gomore unsaved text<Esc>")
  H.out.before_revert = H.lines(notes)

  H.out.listed = checkpoints.list()
  -- :Toolhost activity offers it among the call's actions.
  H.wait(function()
    return #toolhost.state.activity >= 2
  end, "the didCall of the edit")
  local function labels(entry)
    return vim.tbl_map(function(action)
      return action.label
    end, require("toolhost.activity").actions_for(entry))
  end
  for _, entry in ipairs(toolhost.state.activity) do
    if entry.callId == "nv-edit" then
      H.out.activity_actions = labels(entry)
    elseif entry.tool == "read_file" then
      H.out.read_actions = labels(entry)
    end
  end
  -- A call another client made (its result is not here) that wrote nothing: no menu.
  H.out.foreign_actions = labels({ callId = "elsewhere", tool = "read_file", written = {} })
  local done, outcome = false, nil
  checkpoints.revert("nv-edit", function(result, err)
    done, outcome = true, result or err
  end)
  H.wait(function()
    return done
  end, "the revert")
  H.out.outcome = outcome
  H.out.after_revert = H.lines(notes)
  H.out.modified_after_revert = vim.bo[notes].modified
  H.out.disk_after_revert = H.read("notes.md")
  vim.api.nvim_buf_call(notes, function()
    vim.cmd("undo")
  end)
  H.out.after_undo = H.lines(notes)
end)
