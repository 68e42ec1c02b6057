-- The toolhost/* method names (generated from lsp_server/protocol/) and the capabilities
-- this plugin declares. tests/protocol/test_protocol_tables.py compares them with the server.
local generated = require("toolhost.protocol_generated")

local M = {}

M.methods = generated.methods

-- What the client can do, sent as capabilities.experimental.toolhost in initialize.
M.client_capabilities = {
  approvals = true,
  saveDocument = true,
  lspProxy = true,
  -- Only a client that confirms calls itself (VS Code's tool dialog) pre-approves.
  preApproved = false,
  -- It asks the user for a password a command needs (secret.lua, inputsecret).
  secrets = true,
}

return M
