-- toolhost/approve sent by the real server, answered through a stubbed vim.ui.select:
-- first "Show diff" (opens the diff in a scratch split and asks again), then "Allow once";
-- a second edit is denied with a reason typed into a stubbed vim.ui.input.
local H = dofile(assert(os.getenv("TOOLHOST_TEST_HARNESS")))

H.run(function()
  local toolhost = H.start()
  local approve = require("toolhost.approve")
  H.stub_ui(
    { approve.choices.show_diff, approve.choices.allow_once, approve.choices.deny },
    { "not this one" }
  )
  assert(toolhost.call_sync("read_file", { path = "hello.txt" }))
  local allowed = assert(toolhost.call_sync("edit_file", {
    path = "hello.txt",
    old_string = "hello",
    new_string = "goodbye",
  }, 60000))
  H.out.allowed = allowed
  H.out.disk_after_allow = H.read("hello.txt")
  local diff_buf = vim.fn.bufnr("toolhost://diff/" .. tostring(allowed.callId))
  H.out.diff_lines = diff_buf ~= -1 and H.lines(diff_buf) or vim.NIL

  local denied = assert(toolhost.call_sync("edit_file", {
    path = "hello.txt",
    old_string = "goodbye",
    new_string = "farewell",
  }, 60000))
  H.out.denied = denied
  H.out.disk_after_deny = H.read("hello.txt")
end)
