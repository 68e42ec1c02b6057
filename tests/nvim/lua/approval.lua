-- toolhost/approve sent by the real server, answered through a stubbed vim.ui.select that
-- records the screen while it waits: an edit allowed once, a bash command whose prompt is
-- dismissed, a second edit denied with a reason typed into a stubbed vim.ui.input.
local H = dofile(assert(os.getenv("TOOLHOST_TEST_HARNESS")))

H.run(function()
  local toolhost = H.start()
  local approve = require("toolhost.approve")
  H.stub_ui({ approve.choices.allow_once, H.DISMISS, approve.choices.deny }, { "not this one" })
  assert(toolhost.call_sync("read_file", { path = "hello.txt" }))
  local allowed = assert(toolhost.call_sync("edit_file", {
    path = "hello.txt",
    old_string = "hello",
    new_string = "goodbye",
  }, 60000))
  H.out.allowed = allowed
  H.out.disk_after_allow = H.read("hello.txt")

  H.out.dismissed = assert(toolhost.call_sync("bash", { command = "touch dismissed.txt", sandbox = "off" }, 60000))
  H.out.dismissed_ran = vim.fn.filereadable(H.workspace .. "/dismissed.txt") == 1

  local denied = assert(toolhost.call_sync("edit_file", {
    path = "hello.txt",
    old_string = "goodbye",
    new_string = "farewell",
  }, 60000))
  H.out.denied = denied
  H.out.disk_after_deny = H.read("hello.txt")
end)
