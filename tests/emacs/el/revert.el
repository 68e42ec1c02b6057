;;; revert.el --- Revert this call from Emacs, after seeing what will change  -*- lexical-binding: t; -*-
(th-run
 (lambda ()
   (th-start "notes.txt")
   (th-answer-with (list ?o ?o))
   (th-put "made" (toolhost-call-sync "write_file" '(:path "made.txt" :content "new\n")))
   (th-put "listed" (vconcat (toolhost-checkpoints)))
   (th-put "actions" (mapcar #'car toolhost-activity-actions))
   (advice-add 'yes-or-no-p :override
               (lambda (&rest _)
                 (th-put "shown" (with-current-buffer "*toolhost revert*" (buffer-string)))
                 t)
               '((name . th-yes)))
   (let ((call-id (plist-get (car (toolhost-checkpoints)) :callId)))
     (th-put "result" (toolhost-revert call-id)))
   (th-put "exists" (th-bool (file-exists-p (expand-file-name "made.txt" th-workspace))))
   (th-put "buffer" (with-current-buffer "*toolhost revert*" (buffer-string)))))
