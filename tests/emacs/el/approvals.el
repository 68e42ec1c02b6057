;;; approvals.el --- an edit of a dirty buffer, one prompt; bash denied; a dismissal  -*- lexical-binding: t; -*-
(th-run
 (lambda ()
   (let ((buffer (th-open "notes.txt")))
     (th-start "notes.txt")
     ;; The user types; eglot's idle timer has not sent it (no idle time in batch).
     (with-current-buffer buffer
       (goto-char (point-min))
       (insert "typed by the user\n"))
     (th-answer-with (list ?o ?d 'quit))
     (th-put "read" (toolhost-call-sync "read_file" '(:path "notes.txt")))
     (th-put "edit" (toolhost-call-sync "edit_file" '(:path "notes.txt" :old_string "beta"
                                                     :new_string "BETA")))
     (th-put "buffer" (with-current-buffer buffer (buffer-string)))
     (th-put "modified" (th-bool (with-current-buffer buffer (buffer-modified-p))))
     (th-put "disk" (th-disk "notes.txt"))
     (th-put "bash" (toolhost-call-sync "bash" '(:command "touch denied.txt" :timeout_ms 30000 :sandbox "off")))
     (th-put "dismissed" (toolhost-call-sync "bash" '(:command "touch dismissed.txt" :sandbox "off")))
     (th-put "ran" (th-bool (or (file-exists-p (expand-file-name "denied.txt" th-workspace))
                       (file-exists-p (expand-file-name "dismissed.txt" th-workspace)))))
     (th-put "prompts" (vconcat (reverse th-prompts)))
     (th-put "confirmations" th-confirmations)
     (th-put "approval_window_after" (th-bool (get-buffer-window "*toolhost approval*"))))))
