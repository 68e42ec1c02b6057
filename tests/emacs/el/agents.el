;;; agents.el --- One agent's changes reviewed and reverted from Emacs  -*- lexical-binding: t; -*-
(th-run
 (lambda ()
   (th-start "notes.txt")
   (th-answer-with (list ?o ?o ?o ?o))
   (th-put "a1" (toolhost-call-sync "write_file" '(:path "by-a.txt" :content "from A\n") "agent-a"))
   (th-put "b1" (toolhost-call-sync "write_file" '(:path "by-b.txt" :content "from B\n") "agent-b"))
   (th-put "agents" (vconcat (mapcar (lambda (e) (list :session (plist-get e :session)
                                                        :agent (plist-get e :agent)
                                                        :calls (plist-get e :calls)))
                                     (toolhost-agents))))
   (toolhost-review-agent "agent-a")
   (th-put "review" (with-current-buffer "*toolhost agent changes*" (buffer-string)))
   (advice-add 'yes-or-no-p :override
               (lambda (prompt) (th-put "asked" prompt) t)
               '((name . th-yes)))
   (th-put "result" (toolhost-revert-agent "agent-a"))
   (th-put "by-a" (th-bool (file-exists-p (expand-file-name "by-a.txt" th-workspace))))
   (th-put "by-b" (th-disk "by-b.txt"))))
