;;; secret_prompt.el --- a command's password prompt answered in Emacs  -*- lexical-binding: t; -*-
;; The real server sends toolhost/secret for `git clone'; toolhost.el's own handler asks
;; with `read-string' (the user name) and `read-passwd' (the password), stood in for here
;; by the user's typing, as the approval tests stand in for `read-multiple-choice'.
;; TOOLHOST_TEST_MODE "cancel": the user presses C-g at the password.
(setq toolhost-settings '(:shell (:sandbox_network t)))
(defvar th-secret-prompts nil)
(defvar th-name-prompts nil)
(th-run
 (lambda ()
   (th-start "notes.txt")
   (th-answer-with (list ?o))
   (advice-add 'read-string :override
               (lambda (prompt &rest _) (push prompt th-name-prompts) (getenv "TOOLHOST_TEST_USER"))
               '((name . th-user)))
   (advice-add 'read-passwd :override
               (lambda (prompt &rest _)
                 (push prompt th-secret-prompts)
                 (if (equal (getenv "TOOLHOST_TEST_MODE") "cancel")
                     (signal 'quit nil)
                   (getenv "TOOLHOST_TEST_PASSWORD")))
               '((name . th-user)))
   (th-put "result" (toolhost-call-sync
                     "bash" (list :command (concat "git clone " (getenv "TOOLHOST_TEST_GIT_URL")))))
   (th-put "secret_prompts" (vconcat (reverse th-secret-prompts)))
   (th-put "name_prompts" (vconcat (reverse th-name-prompts)))
   (th-put "approvals" (length th-prompts))
   (th-put "readme" (th-bool (file-exists-p (expand-file-name "repo/README.md" th-workspace))))))
