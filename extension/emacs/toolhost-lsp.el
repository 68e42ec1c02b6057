;;; toolhost-lsp.el --- The agent's lsp_* questions answered by your eglot servers  -*- lexical-binding: t; -*-

;;; Commentary:

;; toolhost/lspRequest: instead of starting a second copy of a language server Emacs
;; already runs warm (with the interpreter and settings you chose), toolhost asks Emacs.
;; The request goes to the eglot server of the file's buffer (the file is visited, not
;; shown, when no buffer has it), after eglot's pending didChange, so the answer is for
;; the text you see; diagnostics are eglot's for the buffer, once they are for its current
;; version.  No eglot server for the buffer: handled false, and toolhost asks its own.
;; Every wait is bounded by `toolhost-lsp-timeout'.

;;; Code:

(require 'toolhost)
(require 'flymake)

(defvar-local toolhost--diagnostics-version nil
  "The buffer version eglot's diagnostics for this buffer are for, when known.")

(defconst toolhost--lsp-capabilities
  '(("textDocument/definition" . :definitionProvider)
    ("textDocument/references" . :referencesProvider)
    ("textDocument/hover" . :hoverProvider))
  "Requests asked of the buffer's server, with the capability each needs.")

(defun toolhost--lsp-buffer (uri)
  "The buffer of URI, visited without showing it when no buffer has it; or nil."
  (let ((path (eglot--uri-to-path uri))
        ;; Eglot binds this to toolhost while it handles toolhost's request, and a buffer
        ;; visited now would take it as its server: let it find its own.
        (eglot--cached-server nil))
    (or (find-buffer-visiting path)
        (and (file-regular-p path) (file-readable-p path)
             (find-file-noselect path t)))))

(defun toolhost--server-name (server)
  "SERVER's name for the provenance line: its serverInfo, else its program."
  (let ((info (plist-get (eglot--server-info server) :name))
        (program (car (process-command (jsonrpc--process server)))))
    (cond ((and (stringp info) (not (string-empty-p info))) info)
          ((stringp program)
           (replace-regexp-in-string "-\\(langserver\\|language-server\\)\\'" ""
                                     (file-name-nondirectory program)))
          (t (jsonrpc-name server)))))

(defun toolhost--utf16-position (position)
  "The buffer position of the LSP POSITION, whose character counts UTF-16 units."
  (save-excursion
    (save-restriction
      (widen)
      (goto-char (point-min))
      (forward-line (plist-get position :line))
      (let ((units (plist-get position :character)) (end (line-end-position)))
        (while (and (> units 0) (< (point) end))
          (setq units (- units (if (> (char-after) #xFFFF) 2 1)))
          (forward-char 1)))
      (point))))

(defun toolhost--utf16-column (pos)
  "UTF-16 units from the start of POS's line to POS."
  (save-excursion
    (goto-char pos)
    (cl-loop for char across (buffer-substring-no-properties (line-beginning-position) pos)
             sum (if (> char #xFFFF) 2 1))))

(defun toolhost--answered (server result)
  (list :handled t :result result :server (toolhost--server-name server)))

(defun toolhost--ask-server (server method params)
  "Ask SERVER (the current buffer's) METHOD with PARAMS, positions in its encoding."
  (if (not (eglot--server-capable (cdr (assoc method toolhost--lsp-capabilities))))
      (list :handled :json-false)
    (let ((position (plist-get params :position))
          (params (copy-sequence params)))
      (setq params (plist-put params :textDocument (eglot--TextDocumentIdentifier)))
      (when position
        (setq params (plist-put params :position
                                (eglot--pos-to-lsp-position
                                 (toolhost--utf16-position position)))))
      (toolhost--answered
       server (jsonrpc-request server (intern (concat ":" method)) params
                               :timeout toolhost-lsp-timeout)))))

(defun toolhost--held-diagnostics ()
  "Eglot's flymake diagnostics of this buffer.
Eglot 1.9 keeps a list; newer ones a list and the version it is for."
  (let ((held eglot--diagnostics))
    (if (and (consp held) (listp (car held)) (not (consp (cdr held))))
        (car held)
      held)))

(defun toolhost--lsp-diagnostic (diagnostic)
  "DIAGNOSTIC (flymake's, made by eglot) as an LSP Diagnostic with UTF-16 columns."
  (let* ((spec (alist-get 'eglot-lsp-diag (flymake-diagnostic-data diagnostic)))
         (beg (flymake-diagnostic-beg diagnostic))
         (start (list :line (1- (line-number-at-pos beg t))
                      :character (toolhost--utf16-column beg))))
    (list :range (list :start start :end start)
          :severity (or (plist-get spec :severity)
                        (pcase (flymake-diagnostic-type diagnostic)
                          ('eglot-error 1) ('eglot-warning 2) (_ 3)))
          :message (or (plist-get spec :message) (flymake-diagnostic-text diagnostic))
          :source (plist-get spec :source)
          :code (plist-get spec :code))))

(defun toolhost--diagnostics (server)
  "This buffer's diagnostics from SERVER, once they are for its current text."
  (let ((deadline (+ (float-time) toolhost-lsp-timeout)))
    (while (and (not (eql toolhost--diagnostics-version eglot--versioned-identifier))
                (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (unless (eql toolhost--diagnostics-version eglot--versioned-identifier)
      (jsonrpc-error "%s sent no diagnostics for version %s of %s within %s s"
                     (toolhost--server-name server) eglot--versioned-identifier
                     (buffer-name) toolhost-lsp-timeout))
    (toolhost--answered
     server (list :kind "full"
                  :items (vconcat (mapcar #'toolhost--lsp-diagnostic
                                          (toolhost--held-diagnostics)))))))

(defun toolhost-lsp-answer (method params)
  "The toolhost/lspRequest result for METHOD with PARAMS (standard LSP params)."
  (let* ((uri (plist-get (plist-get params :textDocument) :uri))
         (known (or (equal method "textDocument/diagnostic")
                    (assoc method toolhost--lsp-capabilities)))
         (buffer (and toolhost-answer-lsp-requests known (stringp uri)
                      (toolhost--lsp-buffer uri)))
         (server (and buffer (with-current-buffer buffer (toolhost--other-server)))))
    (if (not server)
        (list :handled :json-false)
      (with-current-buffer buffer
        (when eglot--recent-changes ; diagnostics from before this change do not count
          (setq toolhost--diagnostics-version nil))
        (eglot--signal-textDocument/didChange)
        (if (equal method "textDocument/diagnostic")
            (toolhost--diagnostics server)
          (toolhost--ask-server server method params))))))

(cl-defmethod eglot-handle-request
  ((_server toolhost-server) (_method (eql (toolhost-method lsp-request))) &key method params)
  "Handle toolhost/lspRequest: ask the eglot server of the document's buffer."
  (condition-case err
      (toolhost-lsp-answer method params)
    (jsonrpc-error (signal (car err) (cdr err)))
    (error (jsonrpc-error "toolhost.el could not answer %s: %s"
                          method (error-message-string err)))))

(cl-defmethod eglot-handle-notification :before
  (_server (_method (eql textDocument/publishDiagnostics)) &key uri version
           &allow-other-keys)
  "Note which version of the buffer the diagnostics are for.
The server's word, else the version the buffer has as they arrive."
  (let ((buffer (find-buffer-visiting (eglot--uri-to-path uri))))
    (when buffer
      (with-current-buffer buffer
        (setq toolhost--diagnostics-version
              (if (integerp version) version eglot--versioned-identifier))))))

(provide 'toolhost-lsp)
;;; toolhost-lsp.el ends here
