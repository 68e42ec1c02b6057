-- An MCP agent attached to this Neovim: it reads the unsaved buffer and edits it, the
-- approval is answered by the plugin's own handler (the picker answers "Allow once").
local H = dofile(assert(os.getenv("TOOLHOST_TEST_HARNESS")))

local function type_keys(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "xt", false)
end

H.run(function()
  H.start({ policy = { mode = "default" } })
  H.stub_ui({ "Allow once" })
  vim.cmd("edit " .. H.workspace .. "/notes.md")
  local notes = vim.api.nvim_get_current_buf()
  type_keys("ggOtyped by the user, not saved<Esc>")
  -- The agent runs outside Neovim; the editor keeps serving while it waits.
  local done
  vim.system(vim.json.decode(assert(os.getenv("TOOLHOST_TEST_AGENT"))), { text = true }, function(out)
    done = out
  end)
  H.wait(function()
    return done ~= nil
  end, "the MCP agent", 180000)
  H.out.agent_code = done.code
  H.out.agent_stderr = done.stderr:sub(-3000)
  H.out.agent = done.code == 0 and vim.json.decode(done.stdout) or vim.NIL
  H.out.buffer = H.lines(notes)
  H.out.modified = vim.bo[notes].modified
  H.out.disk = H.read("notes.md")
end)
