;;; toolhost.el --- Agent tools of toolhost in Emacs, on eglot  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: tools, languages

;;; Commentary:

;; toolhost is a language server that hosts the tools of coding agents (read_file,
;; edit_file, bash, grep, code intelligence ...).  This package connects `toolhost serve'
;; to the project through eglot and makes Emacs its editor:
;;
;; - approvals (toolhost/approve) are answered with `read-multiple-choice', with the
;;   change (a diff, or a command with its folder, background flag, timeout and sandbox)
;;   shown in a window at the top of the frame while you choose;
;; - before each call, pending changes of managed buffers are sent to the server, so it
;;   sees your unsaved text;
;; - the agent's lsp_* questions are answered by the eglot server of the file's buffer
;;   (pyright, say), which toolhost hears about too (see toolhost-lsp.el);
;; - an edit the agent makes to an open file arrives as workspace/applyEdit; toolhost has
;;   already asked you about it, so eglot's own "Server wants to edit" question is not
;;   asked a second time (see `toolhost-confirm-edits');
;; - `M-x toolhost' takes over eglot's server for the buffers of that file's major mode
;;   (`toolhost-major-modes'): eglot gives a buffer one server, so they talk to toolhost
;;   instead of, say, pyright; other modes keep their eglot server;
;; - M-x toolhost, toolhost-call, toolhost-tools (RET on a tool, or
;;   toolhost-describe-tool: its parameters), toolhost-status, toolhost-activity,
;;   toolhost-revert.
;;
;; See docs/EMACS.md in the toolhost repository.

;;; Code:

(require 'cl-lib)
(require 'eglot)
(require 'jsonrpc)
(require 'project)
(require 'rmc)
(require 'subr-x)
(require 'tabulated-list)
(require 'toolhost-protocol)

(defgroup toolhost nil
  "Agent tools of toolhost, through eglot."
  :group 'tools
  :prefix "toolhost-")

(defcustom toolhost-command nil
  "The server command, a list such as (\"toolhost\" \"serve\"), used as given.
nil: toolhost on `exec-path' (first <project>/.venv/bin/toolhost with
`toolhost-use-workspace-venv').  With
`toolhost-server-warm' add \"--warm\" to a command of yours yourself."
  :type '(choice (const :tag "Find it" nil) (repeat string)))

(defcustom toolhost-use-workspace-venv nil
  "Non-nil: start <project>/.venv/bin/toolhost when there is one.
Off by default: an agent working in the project can rewrite that file (or
the venv's packages), and the server runs outside the sandbox.  Turn it on
only where you trust the project's venv."
  :type 'boolean)

(defcustom toolhost-server-warm nil
  "Non-nil: start the server found as `toolhost serve --warm'.
A warm toolhost process kept for your user forks it ready, so it answers in
~80 ms instead of ~0.5 s and its first call does not wait for imports; the
cost is that process (~100 MB) waiting for 15 idle minutes after the last
start.  Takes effect when the server next starts.  Not applied to
`toolhost-command', which is used as given."
  :type 'boolean)

(defcustom toolhost-major-modes nil
  "Major modes whose buffers in the project talk to toolhost.
nil: the major mode of the buffer where \\[toolhost] runs.  Eglot gives a
buffer one server: buffers of these modes use toolhost (which runs its own
language servers for the lsp_* tools); other modes keep their eglot server."
  :type '(repeat symbol))

(defcustom toolhost-settings nil
  "Sent as initializationOptions.toolhost.
A plist such as (:policy (:mode \"default\")).  Set it in your init file:
a directory-local or file-local value is ignored (a project must not
loosen its own rules)."
  :type 'sexp)

(defcustom toolhost-session nil
  "Session id of `toolhost-call' (nil: the server's \"default\")."
  :type '(choice (const nil) string))

(defcustom toolhost-confirm-edits nil
  "Non-nil: eglot also asks before applying an edit toolhost sends.
toolhost sends an edit only after its policy or you allowed it, so the
default is not to ask twice."
  :type 'boolean)

(defcustom toolhost-call-timeout 600
  "Seconds `toolhost-call-sync' waits for a result (an approval can take a while)."
  :type 'integer)

(defcustom toolhost-answer-lsp-requests t
  "Non-nil: the agent's lsp_* questions go to the eglot server of the file.
That server is warm and knows your settings; toolhost starts its own server only
for files no eglot server manages.  nil: toolhost always uses its own."
  :type 'boolean)

(defcustom toolhost-lsp-timeout 25
  "Seconds Emacs waits for its language server when answering toolhost.
Less than toolhost's own bound (lsp.editor_timeout_seconds, 30), so that an
answer that comes in time is not thrown away."
  :type 'number)

;; The settings that loosen policy or choose the program that runs come from your init
;; file only, never from a project's .dir-locals.el or a file's local variables (which an
;; agent can write): they are risky (Emacs never applies them without asking, and never
;; offers to remember them as safe), and toolhost reads their global value besides.  Their
;; workspace/configuration answer ignores `eglot-workspace-configuration', which eglot
;; takes from .dir-locals.el as safe (toolhost-trust.el).
(dolist (variable '(toolhost-command toolhost-server-warm toolhost-settings
                                     toolhost-use-workspace-venv))
  (put variable 'risky-local-variable t))

(defun toolhost--capabilities ()
  "What this client declares in capabilities.experimental.toolhost."
  (list :approvals t :saveDocument t
        :lspProxy (if toolhost-answer-lsp-requests t :json-false)
        :preApproved :json-false :secrets t))

(defclass toolhost-server (eglot-lsp-server)
  ((activity :initform nil :accessor toolhost--activity
             :documentation "toolhost/didCall entries, newest first.")
   (results :initform (make-hash-table :test #'equal) :accessor toolhost--results
            :documentation "callId -> result of the calls made from this Emacs."))
  :documentation "A `toolhost serve' connection.")

(defvar toolhost-max-activity 200 "Activity entries kept per server.")

;;;; Finding and starting the server

(defun toolhost--install-fix (root)
  "The ways to make toolhost findable for ROOT.
The wheel of the distribution toolhost-runtime
\(\"toolhost\" on PyPI is another project)."
  (format (concat "install the toolhost command (Python >= 3.11): pipx install "
                  "toolhost_runtime-VERSION-py3-none-any.whl (the wheel `./run dist' builds; "
                  "see Install in toolhost's README); or into the workspace: cd %s && python3 "
                  "-m venv .venv && .venv/bin/pip install "
                  "/path/to/toolhost_runtime-VERSION-py3-none-any.whl "
                  "and set `toolhost-use-workspace-venv'; or set `toolhost-command'")
          root))

(defun toolhost--serve (toolhost)
  "The command that starts TOOLHOST as a server (warm with `toolhost-server-warm')."
  (append (list toolhost "serve") (and (default-value 'toolhost-server-warm) '("--warm"))))

(defun toolhost-find-command (root)
  "The server command for ROOT: `toolhost-command', the venv, then PATH; or nil.
The global value of `toolhost-command': a buffer-local one never chooses
what runs."
  (let ((venv (expand-file-name ".venv/bin/toolhost" root))
        (command (default-value 'toolhost-command)))
    (cond (command command)
          ((and (default-value 'toolhost-use-workspace-venv) (file-executable-p venv))
           (toolhost--serve venv))
          ((executable-find "toolhost") (toolhost--serve (executable-find "toolhost"))))))

(defun toolhost--not-found (root)
  "Signal that no server was found for ROOT, with the fix."
  (let ((venv (expand-file-name ".venv/bin/toolhost" root)))
    (if (file-executable-p venv)
        (user-error "toolhost was not found on `exec-path'; %s is not started on its own (an agent working in the project can change it, and the server runs outside the sandbox): set `toolhost-use-workspace-venv' to use it"
                    venv)
      (user-error "toolhost was not found: %s" (toolhost--install-fix root)))))

(defun toolhost--project ()
  (or (project-current) (user-error "toolhost: not in a project (no .git or project root)")))

(defun toolhost--eglot-lists-p ()
  "Whether `eglot' takes lists of modes and language ids (eglot 1.10+, Emacs 29)."
  (eq (car (help-function-arglist 'eglot)) 'managed-major-modes))

;;;###autoload
(defun toolhost ()
  "Start toolhost for the current project (or return the running server)."
  (interactive)
  (let* ((project (toolhost--project))
         (root (project-root project))
         (command (or (toolhost-find-command root)
                      (toolhost--not-found root)))
         (modes (or toolhost-major-modes (list major-mode))))
    (or (toolhost-current-server project)
        (progn
          (if (toolhost--eglot-lists-p)
              (eglot modes project 'toolhost-server command
                     (make-list (length modes) "plaintext"))
            (eglot modes project 'toolhost-server command "plaintext"))
          (toolhost-current-server project)))))

(defun toolhost-current-server (&optional project)
  "The running toolhost server of PROJECT (default: the current one), or nil."
  (let ((project (or project (project-current))))
    (and project
         (cl-find-if (lambda (server) (and (cl-typep server 'toolhost-server)
                                           (jsonrpc-running-p server)))
                     (gethash project eglot--servers-by-project)))))

(defun toolhost--server-or-lose ()
  (or (toolhost-current-server) (user-error "toolhost is not running here: M-x toolhost")))

(cl-defmethod eglot-client-capabilities :around ((_server toolhost-server))
  (let ((capabilities (cl-call-next-method)))
    (plist-put capabilities :experimental (list :toolhost (toolhost--capabilities)))))

(defun toolhost--settings ()
  "The global value of `toolhost-settings' (never a directory-local one)."
  (or (default-value 'toolhost-settings) eglot--{}))

(cl-defmethod eglot-initialization-options ((_server toolhost-server))
  (list :toolhost (toolhost--settings)))

;;;; Calls

(declare-function toolhost--flush-mirrored "toolhost-buffers" (server))

(defun toolhost--flush-changes (server)
  "Send the pending didChange of SERVER's buffers now.
Eglot sends them on an idle timer; a call must see the text as it is.  The
buffers other eglot servers manage are sent too (see toolhost-buffers.el)."
  (dolist (buffer (eglot--managed-buffers server))
    (when (buffer-live-p buffer)
      (with-current-buffer buffer
        (eglot--signal-textDocument/didChange))))
  (toolhost--flush-mirrored server))

(defvar toolhost--call-counter 0)

(defun toolhost--call-params (name arguments session)
  (list :name name
        :arguments (or arguments eglot--{})
        :session (or session toolhost-session "default")
        :callId (format "emacs-%d" (cl-incf toolhost--call-counter))))

(defun toolhost--remember (server result)
  (let ((id (plist-get result :callId)))
    (when id
      (puthash id result (toolhost--results server)))
    result))

(defun toolhost-call-async (name arguments callback &optional session)
  "Call tool NAME with ARGUMENTS (a plist or hash table).
CALLBACK gets the toolhost/call result (:callId :isError :content :error
:meta).  SESSION defaults to `toolhost-session'."
  (let ((server (toolhost--server-or-lose)))
    (toolhost--flush-changes server)
    (jsonrpc-async-request
     server (toolhost-method call) (toolhost--call-params name arguments session)
     :success-fn (lambda (result) (funcall callback (toolhost--remember server result)))
     :error-fn (lambda (error) (message "toolhost/call %s failed: %S" name error))
     :timeout toolhost-call-timeout)))

(defun toolhost-call-sync (name arguments &optional session)
  "Call tool NAME with ARGUMENTS in SESSION and return the result.
See `toolhost-call-async'."
  (let ((server (toolhost--server-or-lose)))
    (toolhost--flush-changes server)
    (toolhost--remember
     server (jsonrpc-request server (toolhost-method call)
                             (toolhost--call-params name arguments session)
                             :timeout toolhost-call-timeout))))

(defun toolhost-result-text (result)
  "The text parts of RESULT, joined."
  (mapconcat (lambda (part)
               (if (equal (plist-get part :type) "text")
                   (plist-get part :text)
                 (format "[image %s]" (plist-get part :mimeType))))
             (plist-get result :content) "\n"))

(defun toolhost--show (name lines &optional mode)
  "Show LINES in the buffer NAME (read-only, MODE) and return it."
  (let ((buffer (get-buffer-create name)))
    (with-current-buffer buffer
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (string-join lines "\n") "\n")
        (goto-char (point-min)))
      (when mode (funcall mode))
      (setq buffer-read-only t))
    (display-buffer buffer)
    buffer))

(defun toolhost--tool-names (server)
  (mapcar (lambda (tool) (plist-get tool :name))
          (plist-get (jsonrpc-request server (toolhost-method tools) '(:surface "full"))
                     :tools)))

(defun toolhost--result-lines (result)
  (let ((error (plist-get result :error)))
    (append (when (eq (plist-get result :isError) t)
              (list (format "ERROR %s" (plist-get error :code)) ""))
            (split-string (toolhost-result-text result) "\n"))))

(defun toolhost-call (name json)
  "Call tool NAME with JSON arguments and show the result in *toolhost result*."
  (interactive
   (let ((server (toolhost--server-or-lose)))
     (list (completing-read "Tool: " (toolhost--tool-names server) nil t)
           (read-string "Arguments (JSON object): " "{}"))))
  (let ((arguments (json-parse-string json :object-type 'hash-table
                                      :null-object nil :false-object :json-false)))
    (unless (hash-table-p arguments)
      (user-error "toolhost: the arguments must be a JSON object"))
    (toolhost-call-async name arguments
                         (lambda (result)
                           (toolhost--show "*toolhost result*" (toolhost--result-lines result)
                                           #'special-mode)))))

(provide 'toolhost)
(require 'toolhost-approve)
(require 'toolhost-buffers)
(require 'toolhost-lsp)
(require 'toolhost-views)
(require 'toolhost-checkpoints)
(require 'toolhost-trust)
(require 'toolhost-tools)
;;; toolhost.el ends here
