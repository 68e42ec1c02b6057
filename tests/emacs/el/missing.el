;;; missing.el --- M-x toolhost where no toolhost can be found: what the user is told  -*- lexical-binding: t; -*-
(setq toolhost-command nil)
(th-run
 (lambda ()
   (th-open "notes.txt")
   (condition-case err
       (progn (toolhost) (th-put "started" t))
     (user-error (th-put "message" (error-message-string err))))))
