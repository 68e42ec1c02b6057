"""Policy: who may run which tool call, and how the user is asked.

- rules.py, engine.py: rules (`Tool(spec)`, groups) and the decision allow / ask / deny;
- readonly_commands.py, guards.py: which shell commands are plain reads, protected places;
- authorizer.py, approver.py: the policy service and the Approver the runtime calls
  (the seam is lsp_server/runtime/approvals/verdicts.py);
- prompt.py, answers.py, tty_prompt.py: asking the editor (or a terminal) and reading the
  answer; suggest.py: the rules offered for "always allow"; persist.py: saving them;
- client_approvals.py: an MCP client's own permission step as the approval
  (`toolhost mcp --approvals client`), and forms a client answered without showing;
- audit.py: the audit log of every decision;
- commands/: the shell-command analysis the rules and the engine rely on.
"""
