;;; toolhost-approve.el --- toolhost's requests to Emacs: approvals, passwords, edits, saves  -*- lexical-binding: t; -*-

;;; Commentary:

;; toolhost/approve: the change opens in *toolhost approval* at the top of the frame and
;; stays there while `read-multiple-choice' asks.  The choices keep one order and one key
;; for every tool (Deny is always the fourth, d); C-g is reported as a dismissal, never as
;; words the user did not say.  workspace/applyEdit from toolhost is applied without
;; eglot's second question; toolhost/saveDocument saves the buffer.
;;
;; toolhost/secret: a command the user allowed asks for a password (ssh, sudo, git);
;; `read-passwd' asks (the user name first, with `read-string', when git does not know
;; it).  The answer goes to the program only, never to the model.  C-g or an empty answer
;; cancels: the command fails and the agent is told the user cancelled.

;;; Code:

(require 'toolhost)

(defconst toolhost-approval-choices
  '((?o "once" "Allow once")
    (?s "session" "Allow for this session")
    (?a "always" "Always allow (the rule is shown, editable)")
    (?d "deny" "Deny (optional reason)"))
  "The choices of every approval, in this order.")

(defconst toolhost--read-first-choice '(?v "view" "Read the whole change first")
  "Offered after the others when the change does not fit its window.")

(defconst toolhost--approval-buffer "*toolhost approval*")

(defun toolhost--shell-p (params)
  (or (plist-get params :cwd) (equal (plist-get params :tool) "bash")))

(defun toolhost--seconds (ms)
  (if (zerop (% ms 1000)) (format "%d s" (/ ms 1000)) (format "%.1f s" (/ ms 1000.0))))

(defun toolhost--shell-lines (params)
  (let ((command (or (plist-get (plist-get params :arguments) :command) "?"))
        (timeout (plist-get params :timeoutMs)))
    (append
     (list "" "command:")
     (mapcar (lambda (line) (concat "    " line)) (split-string command "\n"))
     (list (concat "folder:     " (or (plist-get params :cwd) "(the session's folder)")))
     (if (eq (plist-get params :background) t)
         (list "background: yes, it keeps running after the call returns (job_output, job_kill)"
               "timeout:    none (a background job runs until it ends or is killed)")
       (list "background: no"
             (format "timeout:    %s, then the process group is stopped"
                     (if timeout (toolhost--seconds timeout) "the default"))))
     (list (concat "sandbox:    " (or (plist-get params :sandbox) "none"))))))

(defun toolhost-approval-lines (params)
  "The lines of the approval buffer for toolhost/approve PARAMS."
  (let ((risk (plist-get params :risk))
        (summary (plist-get params :summary))
        (client (plist-get params :client))
        (diff (plist-get params :diff)))
    (append
     (list (concat "toolhost asks: " (or (plist-get params :title) (plist-get params :tool))
                   (if risk (format "  [%s risk]" risk) "")))
     (when (and summary (not (string-empty-p summary))) (list summary))
     (when client (list (format "from: %s (session %s)" client (plist-get params :session))))
     (cond ((toolhost--shell-p params) (toolhost--shell-lines params))
           ((and diff (not (string-empty-p diff)))
            (cons "" (split-string (string-trim-right diff "\n") "\n")))
           (t (cons "" (append (plist-get params :paths) nil)))))))

(defun toolhost--show-approval (params)
  "Show what PARAMS asks in a window at the top of the frame; return the window."
  (let ((buffer (get-buffer-create toolhost--approval-buffer))
        (lines (toolhost-approval-lines params)))
    (with-current-buffer buffer
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (string-join lines "\n") "\n")
        (goto-char (point-min)))
      (if (and (not (toolhost--shell-p params)) (plist-get params :diff))
          (diff-mode)
        (fundamental-mode))
      (setq buffer-read-only t))
    (display-buffer buffer
                    `((display-buffer-in-side-window)
                      (side . top)
                      ;; Sized to the lines as wrapped on screen; kept at that height
                      ;; while a long prompt makes the echo area grow.
                      (window-height . toolhost--fit-approval)
                      (preserve-size . (nil . t))))))

(defun toolhost--fit-approval (window)
  "Make WINDOW as high as its wrapped lines, at most 60% of the frame."
  (fit-window-to-buffer window (max 4 (floor (* 0.6 (frame-height))))))

(defun toolhost--first-rule (params)
  (let ((rules (plist-get params :suggestedRules)))
    (if (> (length rules) 0) (aref rules 0) (plist-get params :tool))))

(defun toolhost--answer (key params)
  "The ApproveResult for the choice KEY; nil to ask again."
  (pcase key
    (?o (list :decision "allow_once"))
    (?s (list :decision "allow_session" :rule (toolhost--first-rule params)))
    (?a (let ((rule (read-string "Always allow rule: " (toolhost--first-rule params))))
          (unless (string-empty-p rule) (list :decision "allow_always" :rule rule))))
    ;; The user chose Deny: C-g at the optional reason still denies, without a reason
    ;; (not "dismissed", which says nobody decided).
    (?d (let ((reason (condition-case nil
                          (read-string "Reason for denying (optional): ")
                        (quit ""))))
          (if (string-empty-p reason)
              (list :decision "deny")
            (list :decision "deny" :reason reason))))))

(defun toolhost--fits-p (window)
  "Whether WINDOW shows its whole buffer."
  (with-current-buffer (window-buffer window)
    (<= (count-screen-lines (point-min) (point-max) nil window) (window-body-height window))))

(defun toolhost--read-first (window)
  "Let the user scroll the approval in WINDOW; \[exit-recursive-edit] asks again."
  (with-selected-window window
    (message "toolhost: read the change, then C-M-c to decide")
    (recursive-edit)))

(defun toolhost-decide (params)
  "Ask about toolhost/approve PARAMS; return the ApproveResult plist."
  (let* ((window (toolhost--show-approval params))
         (choices (if (toolhost--fits-p window)
                      toolhost-approval-choices
                    (append toolhost-approval-choices (list toolhost--read-first-choice))))
         (prompt (format "toolhost: %s (%s above)" (plist-get params :title)
                         (if (toolhost--shell-p params) "the command details are"
                           "the change is")))
         answer)
    (unwind-protect
        (condition-case nil
            ;; The request is handled in eglot's process filter, where quitting is
            ;; inhibited: C-g would be read as a key ("Invalid choice") and never deny.
            (let ((inhibit-quit nil))
              (while (not answer)
                (let ((key (car (read-multiple-choice prompt choices))))
                  (if (eq key ?v)
                      (toolhost--read-first window)
                    (setq answer (toolhost--answer key params))))))
          ;; C-g: closed without a choice.  Deny, and say so.
          (quit (setq answer (list :decision "deny" :dismissed t))))
      (when (window-live-p window)
        (delete-window window)))
    answer))

(cl-defmethod eglot-handle-request
  ((_server toolhost-server) (_method (eql (toolhost-method approve))) &rest params)
  "Handle toolhost/approve."
  (toolhost-decide params))

(defun toolhost-read-secret (params)
  "Ask for the password toolhost/secret PARAMS describe; return the SecretResult."
  (let ((header (format "toolhost: `%s' asks: " (plist-get params :command)))
        (prompt (or (plist-get params :prompt) "Password:"))
        (username (plist-get params :username))
        (result nil))
    (condition-case nil
        (progn
          (when (and (equal (plist-get params :kind) "credential")
                     (not (and (stringp username) (> (length username) 0))))
            (let ((name (read-string (concat header prompt " -- user name: "))))
              (when (string-empty-p name) (signal 'quit nil))
              (setq result (list :username name)
                    header "")))
          (let ((secret (read-passwd (concat header prompt " "))))
            (if (or (null secret) (string-empty-p secret))
                (list :cancelled t)
              (append (list :secret secret) result))))
      (quit (list :cancelled t)))))

(cl-defmethod eglot-handle-request
  ((_server toolhost-server) (_method (eql (toolhost-method secret))) &rest params)
  "Handle toolhost/secret."
  (toolhost-read-secret params))

(cl-defmethod eglot-handle-request
  ((_server toolhost-server) (_method (eql (toolhost-method save-document))) &key uri)
  "Handle toolhost/saveDocument: save the buffer of URI so the disk matches it."
  (let ((buffer (find-buffer-visiting (eglot--uri-to-path uri))))
    (if (not buffer)
        (list :saved :json-false)
      (with-current-buffer buffer (save-buffer))
      (list :saved (if (buffer-modified-p buffer) :json-false t)))))

(cl-defmethod eglot-handle-request
  ((server toolhost-server) (_method (eql workspace/applyEdit)) &rest _params)
  "Apply toolhost's edit without eglot's question: toolhost asked already.
If eglot declines it (a buffer at another version, or the user says no with
`toolhost-confirm-edits'), eglot answers with an error, which toolhost reports
as editor.refused.  The edited text is sent at once, not on eglot's idle
timer: toolhost waits for it."
  (let ((answer (let ((eglot-confirm-server-initiated-edits toolhost-confirm-edits))
                  (cl-call-next-method))))
    (toolhost--flush-changes server)
    answer))

(provide 'toolhost-approve)
;;; toolhost-approve.el ends here
