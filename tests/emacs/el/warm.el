;;; warm.el --- toolhost-server-warm: the server found is started as `serve --warm'  -*- lexical-binding: t; -*-
;; The command is the one toolhost.el finds (the workspace's .venv/bin/toolhost), not the
;; harness's; what /proc says of the server while a call goes through.
(setq toolhost-command nil
      toolhost-use-workspace-venv t
      toolhost-server-warm t)
(th-run
 (lambda ()
   (let* ((server (th-start "notes.txt"))
          (result (toolhost-call-sync "read_file" '(:path "notes.txt"))))
     (th-put "command" (vconcat (process-command (jsonrpc--process server))))
     (th-put "read" result)
     (th-put "seen" (th-server-processes)))))
