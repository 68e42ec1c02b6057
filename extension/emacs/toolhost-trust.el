;;; toolhost-trust.el --- What a project may not set, and review of its .toolhost.toml  -*- lexical-binding: t; -*-

;;; Commentary:

;; Two things keep a project's files (which an agent can write) from loosening toolhost:
;;
;; - toolhost's workspace/configuration is answered from `toolhost-settings' (its global
;;   value), never from `eglot-workspace-configuration', which eglot reads from
;;   .dir-locals.el and treats as a safe local variable;
;; - a workspace .toolhost.toml whose settings loosen policy is applied only once you
;;   approved its exact content: the server says so (toolhost/configUntrusted), and
;;   M-x toolhost-trust-config shows that content read-only and, when you agree, sends
;;   toolhost/trustConfig with the sha256 of what you read.

;;; Code:

(require 'toolhost)

(defvar toolhost--untrusted-configs nil
  "The last toolhost/configUntrusted of each file.
Plists (:path :sha256 :reason :ignored).")

(cl-defmethod eglot-handle-request
  ((_server toolhost-server) (_method (eql workspace/configuration)) &key items)
  "Answer toolhost's workspace/configuration from `toolhost-settings' alone.
Section \"toolhost\" gets its global value; any other section null."
  (apply #'vector
         (mapcar (lambda (item)
                   (if (equal (plist-get item :section) "toolhost") (toolhost--settings) nil))
                 items)))

(defun toolhost--ignored-text (params)
  (let ((ignored (append (plist-get params :ignored) nil)))
    (if ignored (string-join ignored ", ") "settings that loosen policy")))

(cl-defmethod eglot-handle-notification
  ((_server toolhost-server) (_method (eql (toolhost-method config-untrusted))) &rest params)
  "A workspace .toolhost.toml waits for review: remember it and say so."
  (let ((path (plist-get params :path)))
    (setq toolhost--untrusted-configs
          (cons params (cl-remove path toolhost--untrusted-configs
                                  :key (lambda (entry) (plist-get entry :path)) :test #'equal)))
    ;; format, not message's format-message: the quote stays a plain one.
    (message "%s" (format "toolhost ignored %s's %s until you review it (%s): M-x toolhost-trust-config"
                          (file-name-nondirectory path) (toolhost--ignored-text params)
                          (plist-get params :reason)))))

(defun toolhost--untrusted-from-status (server)
  "The untrusted files toolhost/status of SERVER lists."
  (let ((status (jsonrpc-request server (toolhost-method status) eglot--{})))
    (cl-remove-if-not (lambda (entry) (equal (plist-get entry :state) "untrusted"))
                      (append (plist-get status :workspaceConfig) nil))))

(defun toolhost--file-bytes (path)
  "PATH's bytes as a unibyte string, or nil when it cannot be read."
  (ignore-errors
    (with-temp-buffer
      (set-buffer-multibyte nil)
      (insert-file-contents-literally path)
      (buffer-string))))

(defun toolhost-trust-config (&optional path)
  "Review a workspace .toolhost.toml toolhost ignores; trust exactly that content.
PATH: the file (asked when several wait).  Its content is shown read-only; only
when it still hashes to what the server reported, and you agree, is
toolhost/trustConfig sent with that sha256."
  (interactive)
  (let* ((server (toolhost--server-or-lose))
         (waiting (or (toolhost--untrusted-from-status server) toolhost--untrusted-configs))
         (path (or path
                   (cond ((null waiting)
                          (user-error "toolhost: no workspace .toolhost.toml waits for review"))
                         ((null (cdr waiting)) (plist-get (car waiting) :path))
                         (t (completing-read "Review: " (mapcar (lambda (e) (plist-get e :path)) waiting)
                                             nil t)))))
         (entry (or (cl-find path waiting :key (lambda (e) (plist-get e :path)) :test #'equal)
                    (user-error "toolhost: %s does not wait for review" path)))
         (bytes (toolhost--file-bytes path)))
    (if (not (and bytes (equal (secure-hash 'sha256 bytes) (plist-get entry :sha256))))
        (message "toolhost: %s changed since toolhost read it; it stays ignored until you review the new content"
                 path)
      (toolhost--show (format "*toolhost review: %s*" path)
                      (split-string (string-remove-suffix "\n" (decode-coding-string bytes 'utf-8))
                                    "\n"))
      (if (not (yes-or-no-p (format "Trust this content of %s? Its %s then apply: "
                                    path (toolhost--ignored-text entry))))
          (message "toolhost: %s stays ignored" path)
        (let ((result (jsonrpc-request server (toolhost-method trust-config)
                                       (list :path path :sha256 (plist-get entry :sha256)))))
          (message "toolhost: %s" (plist-get result :message))
          result)))))

(provide 'toolhost-trust)
;;; toolhost-trust.el ends here
