-- The toolhost/approve handler in Neovim, run inside a coroutine exactly as
-- vim/lsp/rpc.lua runs server->client request handlers, with a picker that answers from
-- the event loop (as real pickers do): "Show diff" opens the diff and asks again.
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
  }
  local c = approve.choices
  H.stub_ui({ c.show_diff, c.allow_once })
  H.out.once = handle(params)
  H.out.once_prompts, H.out.once_items = H.out.prompts, H.out.items
  H.out.diff_lines = H.lines(vim.fn.bufnr("toolhost://diff/c-7"))

  H.stub_ui({ c.allow_session })
  H.out.session = handle(params)
  H.stub_ui({ c.allow_always }, { "Edit(docs/**)" })
  H.out.always = handle(params)
  H.stub_ui({ c.deny }, { "not now" })
  H.out.deny = handle(params)
  H.stub_ui({ nil })
  H.out.dismissed = handle(params)
  local no_diff = vim.deepcopy(params)
  no_diff.diff = vim.NIL
  H.stub_ui({ c.allow_once })
  handle(no_diff)
  H.out.no_diff_items = H.out.items[1]
end)
