;;; refused.el --- eglot declines toolhost's edit: editor.refused  -*- lexical-binding: t; -*-
(th-run
 (lambda ()
   (let ((buffer (th-open "notes.txt")))
     (th-start "notes.txt")
     (setq toolhost-confirm-edits t) ; the user wants eglot to ask too, and says no
     (th-answer-with (list ?o) nil)
     (toolhost-call-sync "read_file" '(:path "notes.txt"))
     (th-put "edit" (toolhost-call-sync "edit_file" '(:path "notes.txt" :old_string "beta"
                                                     :new_string "BETA")))
     (th-put "confirmations" th-confirmations)
     (th-put "buffer" (with-current-buffer buffer (buffer-string)))
     (th-put "disk" (th-disk "notes.txt"))
     (th-put "after" (toolhost-call-sync "read_file" '(:path "notes.txt"))))))
