;;; trust.el --- M-x toolhost-trust-config against the real server  -*- lexical-binding: t; -*-
;; A workspace .toolhost.toml with a loosening entry: the server's toolhost/configUntrusted
;; is remembered and said; toolhost-trust-config shows exactly that content and, answered
;; yes, sends toolhost/trustConfig with its sha256.  With $TOOLHOST_TEST_CHANGE the file
;; changes while the user reads it (as an agent could): nothing is trusted.
(defvar th-messages nil)
(advice-add 'message :before
            (lambda (format &rest args)
              (when format (push (apply #'format-message format args) th-messages))))
(th-run
 (lambda ()
   (let ((server (th-start "notes.txt"))
         (file (expand-file-name ".toolhost.toml" th-workspace)))
     (th-wait "toolhost/configUntrusted" (lambda () toolhost--untrusted-configs) 30)
     (th-put "untrusted" (car toolhost--untrusted-configs))
     (advice-add 'yes-or-no-p :override
                 (lambda (prompt)
                   (th-put "question" prompt)
                   (when (getenv "TOOLHOST_TEST_CHANGE")
                     (with-temp-buffer
                       (insert "[shell]\nsandbox_network = true\n")
                       (append-to-file (point-min) (point-max) file)))
                   t))
     (th-put "result" (or (toolhost-trust-config) :json-false))
     (th-put "review" (with-current-buffer (format "*toolhost review: %s*" file) (buffer-string)))
     (th-put "after" (plist-get (jsonrpc-request server :toolhost/status eglot--{}) :workspaceConfig))
     (th-put "messages" (vconcat (reverse th-messages))))))
