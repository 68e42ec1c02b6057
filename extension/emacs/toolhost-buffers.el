;;; toolhost-buffers.el --- toolhost sees the buffers of other eglot servers  -*- lexical-binding: t; -*-

;;; Commentary:

;; Eglot gives a buffer one server, so a Python buffer that eglot manages with pyright is
;; not one toolhost hears about.  Its text goes to toolhost too: didOpen when eglot opens
;; it, the whole text when eglot has sent a change (eglot's idle timer, or before a call),
;; didClose when eglot closes it.  The version numbers are eglot's own
;; (`eglot--versioned-identifier'), so the agent reads the unsaved text, its edits reach
;; the buffer as versioned workspace/applyEdit, and an answer of the buffer's own server
;; (toolhost/lspRequest) names the version the user sees.

;;; Code:

(require 'toolhost)

(defvar-local toolhost--mirrored nil
  "(SERVER . VERSION): the toolhost server that has this buffer, and its version there.")

(defun toolhost--other-server ()
  "The running eglot server of this buffer when it is not toolhost, else nil."
  (let ((server (and buffer-file-name eglot--managed-mode (eglot-current-server))))
    (and server (not (cl-typep server 'toolhost-server)) (jsonrpc-running-p server)
         server)))

(defun toolhost--mirror-target ()
  (let ((server (car toolhost--mirrored)))
    (if (and server (jsonrpc-running-p server)) server (toolhost-current-server))))

(defun toolhost--mirror-text ()
  (eglot--widening (buffer-substring-no-properties (point-min) (point-max))))

(defun toolhost--mirror-close ()
  "Tell toolhost this buffer is closed (its server stopped managing it)."
  (let ((server (car toolhost--mirrored)))
    (when (and server (jsonrpc-running-p server))
      (jsonrpc-notify server :textDocument/didClose
                      (list :textDocument (eglot--TextDocumentIdentifier))))
    (setq toolhost--mirrored nil)))

(defun toolhost--mirror (&optional server)
  "Send this buffer to SERVER (toolhost) unless it has eglot's current version."
  (let ((server (or server (toolhost--mirror-target))))
    (when (and server (jsonrpc-running-p server) (toolhost--other-server))
      (let ((sent (and (eq (car toolhost--mirrored) server) (cdr toolhost--mirrored)))
            (version eglot--versioned-identifier))
        (unless (eql sent version)
          (when (and sent (< version sent)) ; eglot opened it again: versions restart
            (toolhost--mirror-close)
            (setq sent nil))
          (if sent
              (jsonrpc-notify server :textDocument/didChange
                              (list :textDocument (eglot--VersionedTextDocumentIdentifier)
                                    :contentChanges (vector (list :text (toolhost--mirror-text)))))
            (jsonrpc-notify server :textDocument/didOpen
                            (list :textDocument (eglot--TextDocumentItem))))
          (setq toolhost--mirrored (cons server version)))))))

(defun toolhost--mirrored-buffers (server)
  "Live buffers whose text SERVER has."
  (cl-remove-if-not (lambda (buffer)
                      (eq (car (buffer-local-value 'toolhost--mirrored buffer)) server))
                    (buffer-list)))

(defun toolhost--flush-mirrored (server)
  "Send SERVER the pending changes of the buffers other eglot servers manage."
  (dolist (buffer (toolhost--mirrored-buffers server))
    (with-current-buffer buffer
      (with-demoted-errors "toolhost: could not send the buffer's changes: %S"
        (eglot--signal-textDocument/didChange) ; sends to the buffer's server ...
        (toolhost--mirror server)))))          ; ... and to toolhost, when it had not

(defun toolhost--mirror-project (server)
  "On connecting: send SERVER the project's buffers other eglot servers manage."
  (when (cl-typep server 'toolhost-server)
    (let ((root (expand-file-name (project-root (eglot--project server)))))
      (dolist (buffer (buffer-list))
        (with-current-buffer buffer
          (when (and buffer-file-name (file-in-directory-p buffer-file-name root))
            (toolhost--mirror server)))))))

(defun toolhost--after-eglot-change (&rest _)
  (when toolhost--mirrored (toolhost--mirror)))

(defun toolhost--after-eglot-open (&rest _)
  (when (toolhost--other-server) (toolhost--mirror)))

(defun toolhost--before-eglot-close (&rest _)
  (when toolhost--mirrored (toolhost--mirror-close)))

(defun toolhost--managed-mode-changed ()
  "A buffer eglot no longer manages is closed for toolhost too."
  (when (and toolhost--mirrored (not eglot--managed-mode))
    (toolhost--mirror-close)))

(advice-add 'eglot--signal-textDocument/didChange :after #'toolhost--after-eglot-change)
(advice-add 'eglot--signal-textDocument/didOpen :after #'toolhost--after-eglot-open)
(advice-add 'eglot--signal-textDocument/didClose :before #'toolhost--before-eglot-close)
(add-hook 'eglot-managed-mode-hook #'toolhost--managed-mode-changed)
(add-hook 'eglot-connect-hook #'toolhost--mirror-project)

(provide 'toolhost-buffers)
;;; toolhost-buffers.el ends here
