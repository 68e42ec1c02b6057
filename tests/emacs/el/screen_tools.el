;;; screen_tools.el --- Emacs on a real terminal (tmux), toolhost started, nothing asked  -*- lexical-binding: t; -*-
;; The test types M-x toolhost-tools and reads the screen.  $TOOLHOST_TEST_OUT.ready.json
;; is written once the server has answered; M-x th-report writes
;; $TOOLHOST_TEST_OUT.report.json: what the server wrote to stderr and the *Messages*.
(load (expand-file-name "harness.el" (file-name-directory load-file-name)))

(setq native-comp-async-report-warnings-errors 'silent)

(defun th-save-as (suffix value)
  (with-temp-file (format "%s.%s.json" (getenv "TOOLHOST_TEST_OUT") suffix)
    (insert (json-encode value))))

(defun th-report ()
  "Write what the server wrote to stderr, and the *Messages* buffer."
  (interactive)
  (let ((server (toolhost-current-server)))
    (th-save-as "report"
                `((stderr . ,(with-current-buffer (jsonrpc-stderr-buffer server)
                               (buffer-string)))
                  (messages . ,(with-current-buffer "*Messages*" (buffer-string)))))))

(let ((server (th-start "notes.txt")))
  (jsonrpc-request server (toolhost-method tools) '(:surface "full"))
  (th-save-as "ready" '((ready . t))))
