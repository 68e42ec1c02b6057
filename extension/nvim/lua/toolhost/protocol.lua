-- The toolhost/* method names and the capabilities this plugin declares, in one place.
-- tests/nvim/test_protocol_names.py compares these names with lsp_server/protocol.py.
local M = {}

M.methods = {
  tools = "toolhost/tools",
  call = "toolhost/call",
  result = "toolhost/result",
  status = "toolhost/status",
  preview = "toolhost/preview",
  approve = "toolhost/approve",
  save_document = "toolhost/saveDocument",
  did_call = "toolhost/didCall",
  job_update = "toolhost/jobUpdate",
  present = "toolhost/present",
}

-- What the client can do, sent as capabilities.experimental.toolhost in initialize.
M.client_capabilities = {
  approvals = true,
  saveDocument = true,
  lspProxy = false,
  -- Only a client that confirms calls itself (VS Code's tool dialog) pre-approves.
  preApproved = false,
}

return M
