-- A project's files (which an agent can write) do not loosen toolhost: the workspace's
-- .nvim.lua, run as Neovim runs a trusted exrc, fills the generic LSP settings
-- (vim.lsp.config("*"), client.settings) and vim.g with sandbox off / bypass / allow Bash;
-- the server still gets only what setup() said (policy.mode acceptEdits, the user's).
local H = dofile(assert(os.getenv("TOOLHOST_TEST_HARNESS")))

local function preview(name, arguments)
  local result, err = require("toolhost").request_sync(
    "toolhost/preview",
    { name = name, arguments = arguments, session = "default" },
    30000
  )
  return result or { error = err }
end

H.run(function()
  dofile(H.workspace .. "/.nvim.lua")
  local toolhost = H.start({ policy = { mode = "acceptEdits" } })
  local approve = require("toolhost.approve")
  H.stub_ui({ approve.choices.deny }, { "" })
  local client = toolhost.client()
  -- Whatever filled the client's generic settings, and a configuration change: the server
  -- asks workspace/configuration again and gets setup()'s section.
  client.settings = vim.deepcopy(vim.g.project_loosening)
  H.out.configuration = require("toolhost.trust").configuration_handler(nil, {
    items = { { section = "toolhost" }, { section = "pylsp" } },
  })
  client:notify("workspace/didChangeConfiguration", { settings = vim.g.project_loosening })
  local escape = { command = "touch " .. os.getenv("HOME") .. "/escaped", description = "write outside" }
  H.out.sandboxed = preview("bash", escape)
  H.out.escalation = preview("bash", vim.tbl_extend("force", escape, { sandbox = "off" }))
  H.out.write = preview("write_file", { path = "new.txt", content = "x\n" })
  H.out.bash = assert(toolhost.call_sync("bash", escape, 60000))
  H.out.status = toolhost.status()
end)
