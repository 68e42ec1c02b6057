;;; screen_init.el --- Emacs on a real terminal (tmux), as a user runs it  -*- lexical-binding: t; -*-
;; toolhost started for the fixture workspace, then tool calls that wait for the user's
;; answer at the real prompt (no advice on it).  Each result goes to
;; $TOOLHOST_TEST_OUT.<n>.json as it arrives.
(load (expand-file-name "harness.el" (file-name-directory load-file-name)))

(defun th-save (n result)
  (with-temp-file (format "%s.%d.json" (getenv "TOOLHOST_TEST_OUT") n)
    (insert (json-encode result))))

;; A fresh home compiles eglot's dependencies natively in the background: their warnings
;; would pop up a *Warnings* window over the screen at any moment.
(setq native-comp-async-report-warnings-errors 'silent)

(th-start "notes.txt")
;; First a write (its diff fits), then a command wider than the terminal, whose summary
;; is only the agent's description: on 80 columns its lines wrap and the details do not
;; all fit in the window.
(toolhost-call-async
 "write_file" '(:path "made.txt" :content "made\n")
 (lambda (result)
   (th-save 1 result)
   (run-at-time
    0 nil #'toolhost-call-async
    "bash" `(:command ,(concat "echo " (string-join (make-list 14 "padding") " ")
                               " && touch the-end-of-the-command.txt")
                      :description "Print some padding" :sandbox "off")
    (lambda (result) (th-save 2 result)))))
