"""The toolhost/* method names (and the executeCommand command), as lsprotocol spells its
own (types.TEXT_DOCUMENT_DID_OPEN ...), in a module that imports nothing: `toolhost serve`
registers its handlers under these names before it answers initialize, without loading the
message types (lsp_server/protocol/, re-exported there and typed in its method table)."""

TOOLHOST_TOOLS = "toolhost/tools"
TOOLHOST_CALL = "toolhost/call"
TOOLHOST_RESULT = "toolhost/result"
TOOLHOST_STATUS = "toolhost/status"
TOOLHOST_CHECKPOINTS = "toolhost/checkpoints"
TOOLHOST_REVERT = "toolhost/revert"
TOOLHOST_SESSION_CHANGES = "toolhost/sessionChanges"
TOOLHOST_REVERT_SESSION = "toolhost/revertSession"
TOOLHOST_PREVIEW = "toolhost/preview"
TOOLHOST_APPROVE = "toolhost/approve"
TOOLHOST_SAVE_DOCUMENT = "toolhost/saveDocument"
TOOLHOST_LSP_REQUEST = "toolhost/lspRequest"
TOOLHOST_DID_CALL = "toolhost/didCall"
TOOLHOST_JOB_UPDATE = "toolhost/jobUpdate"
TOOLHOST_PRESENT = "toolhost/present"
TOOLHOST_CONFIG_UNTRUSTED = "toolhost/configUntrusted"
TOOLHOST_TRUST_CONFIG = "toolhost/trustConfig"
TOOLHOST_SECRET = "toolhost/secret"
EXECUTE_COMMAND_CALL = "toolhost.call"

PREFIX = "toolhost/"
"""Every toolhost/* method starts so: the server loads the message types for the first."""
