-- The toolhost/approve handler in Neovim, run inside a coroutine exactly as
-- vim/lsp/rpc.lua runs server->client request handlers, with a picker that answers from
-- the event loop (as real pickers do). The harness records the screen at each prompt.
local H = dofile(assert(os.getenv("TOOLHOST_TEST_HARNESS")))

local function handle(params)
  local answer
  vim.schedule(coroutine.wrap(function()
    answer = require("toolhost.approve").handler(nil, params, { method = "toolhost/approve" })
  end))
  H.wait(function()
    return answer ~= nil
  end, "the approval handler to answer")
  return answer
end

H.run(function()
  vim.opt.rtp:prepend(assert(os.getenv("TOOLHOST_TEST_PLUGIN")))
  local approve = require("toolhost.approve")
  local params = {
    callId = "c-7",
    session = "default",
    tool = "edit_file",
    readOnly = false,
    title = "Edit notes.md",
    summary = "replace one line",
    arguments = { path = "notes.md" },
    paths = { H.workspace .. "/notes.md" },
    diff = "--- a/notes.md\n+++ b/notes.md\n@@ -1 +1 @@\n-old\n+new\n",
    risk = "medium",
    suggestedRules = { "edit_file(notes.md)", "Edit(**)" },
    client = "Test Chat",
  }
  local c = approve.choices
  H.stub_ui({ c.allow_once })
  H.out.once = handle(params)
  H.out.once_prompts, H.out.once_items, H.out.once_screens = H.out.prompts, H.out.items, H.out.screens
  H.out.windows_after = #vim.api.nvim_tabpage_list_wins(0)

  H.stub_ui({ c.allow_session })
  H.out.session = handle(params)
  H.stub_ui({ c.allow_always }, { "Edit(docs/**)" })
  H.out.always = handle(params)
  H.stub_ui({ c.deny }, { "not now" })
  H.out.deny = handle(params)
  H.stub_ui({ H.DISMISS })
  H.out.dismissed = handle(params)

  local bash = {
    callId = "c-8",
    session = "default",
    tool = "bash",
    readOnly = false,
    title = "Run: npm test",
    summary = "Run the tests.",
    arguments = { command = "npm test\nnpm run lint" },
    paths = {},
    diff = vim.NIL,
    risk = "medium",
    suggestedRules = { "bash(npm test)" },
    cwd = H.workspace .. "/web",
    background = true,
    timeoutMs = vim.NIL,
    sandbox = "none",
  }
  H.stub_ui({ c.allow_once })
  H.out.bash = handle(bash)
  H.out.bash_items, H.out.bash_screens = H.out.items, H.out.screens

  -- A change longer than the window: one more item after Deny, which lets the user read
  -- it all (the test presses <CR> in the window at once) and then asks again.
  local long = vim.deepcopy(params)
  local lines = { "--- a/notes.md", "+++ b/notes.md", "@@ -1,200 +1,200 @@" }
  for i = 1, 200 do
    table.insert(lines, "+line " .. i)
  end
  long.diff = table.concat(lines, "\n")
  H.stub_ui({ c.read_first, c.allow_once })
  local answer
  vim.schedule(coroutine.wrap(function()
    answer = approve.handler(nil, long, {})
  end))
  H.wait(function()
    return #H.out.prompts >= 1 and vim.api.nvim_buf_get_name(0):match("toolhost://approve/") ~= nil
  end, "the approval window to take the focus")
  H.out.long_focused = vim.api.nvim_buf_get_name(0)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
  H.wait(function()
    return answer ~= nil
  end, "the long approval to be answered")
  H.out.long = answer
  H.out.long_items = H.out.items
end)
