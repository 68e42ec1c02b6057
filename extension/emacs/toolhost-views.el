;;; toolhost-views.el --- toolhost's status and activity in Emacs  -*- lexical-binding: t; -*-

;;; Commentary:

;; M-x toolhost-status: the server's status as text.  M-x toolhost-activity: one row per
;; finished call (toolhost/didCall), newest first; RET on a row offers its actions
;; (`toolhost-activity-actions'), the first of which shows the call's result.

;;; Code:

(require 'toolhost)

;;;; Notifications

(cl-defmethod eglot-handle-notification
  ((server toolhost-server) (_method (eql (toolhost-method did-call))) &rest params)
  "Record a finished call for `toolhost-activity'."
  (let ((entry (append (list :time (float-time)) params)))
    (push entry (toolhost--activity server))
    (when (> (length (toolhost--activity server)) toolhost-max-activity)
      (let ((dropped (car (last (toolhost--activity server)))))
        (remhash (plist-get dropped :callId) (toolhost--results server)))
      (setf (toolhost--activity server) (butlast (toolhost--activity server))))))

(cl-defmethod eglot-handle-notification
  ((_server toolhost-server) (_method (eql (toolhost-method job-update))) &rest _params)
  "Job updates: `toolhost-status' asks the server for the current list.")

(cl-defmethod eglot-handle-notification
  ((_server toolhost-server) (_method (eql (toolhost-method present)))
   &key files &allow-other-keys)
  "The agent presented deliverables."
  (message "toolhost: the agent presented %s"
           (mapconcat (lambda (file) (plist-get file :path)) files ", ")))

;;;; Status

(defun toolhost--clock (epoch)
  "EPOCH (seconds) as \"14:03:12 (5 min ago)\"."
  (let ((ago (max 0 (floor (- (float-time) epoch)))))
    (format "%s (%s)" (format-time-string "%H:%M:%S" (seconds-to-time epoch))
            (cond ((< ago 60) (format "%d s ago" ago))
                  ((< ago 3600) (format "%d min ago" (/ ago 60)))
                  (t (format "%.1f h ago" (/ ago 3600.0)))))))

(defun toolhost--relative (path root)
  (let ((root (directory-file-name root)))
    (cond ((not (stringp path)) (format "%s" path))
          ((equal path root) ".")
          ((string-prefix-p (concat root "/") path) (substring path (1+ (length root))))
          (t path))))

(defun toolhost--section (title rows empty)
  (append (list "" title) (or rows (list (concat "  " empty)))))

(defun toolhost--lsp-answer-lines (answers)
  "The lspAnswers of toolhost/status: who answers the lsp_* tools, per language."
  (when answers
    (let (rows)
      (cl-loop for (language info) on (plist-get answers :languages) by #'cddr
               do (push (format "  %-12s %s %s" (substring (symbol-name language) 1)
                                (if (equal (plist-get info :answeredBy) "editor")
                                    "the editor's" "toolhost's")
                                (plist-get info :server))
                        rows))
      (toolhost--section (format "lsp_* answers: %s" (plist-get answers :summary))
                         (nreverse rows) "no question asked yet"))))

(defun toolhost-status-lines (status)
  "The toolhost/status result STATUS as lines."
  (let ((root (or (aref (plist-get status :roots) 0) "")))
    (append
     (list (format "toolhost %s, workspace %s" (plist-get status :version) root))
     (toolhost--section
      "Sessions"
      (mapcar (lambda (s)
                (format "  %-12s %d calls, %d files read, folder %s" (plist-get s :id)
                        (or (plist-get s :calls) 0) (or (plist-get s :observedFiles) 0)
                        (toolhost--relative (plist-get s :cwd) root)))
              (plist-get status :sessions))
      "none yet")
     (toolhost--section
      "Background jobs"
      (mapcar (lambda (job)
                (format "  %s  %s%s  %s, started %s" (plist-get job :jobId)
                        (plist-get job :status)
                        (if (plist-get job :exitCode)
                            (format " (exit %s)" (plist-get job :exitCode)) "")
                        (plist-get job :command) (toolhost--clock (plist-get job :startedAt))))
              (plist-get status :jobs))
      "none")
     (toolhost--section
      "Language servers"
      (mapcar (lambda (ls) (format "  %s  pid %s" (plist-get ls :language) (plist-get ls :pid)))
              (plist-get status :languageServers))
      "none started (they start on first use)")
     (toolhost--lsp-answer-lines (plist-get status :lspAnswers))
     (toolhost--section
      "Config files"
      (append
       (let ((managed (plist-get status :managedConfig)))
         (when managed
           (list (format "  managed file %s: %s" (plist-get managed :path)
                         (if (equal (plist-get managed :state) "invalid")
                             (concat "INVALID: " (plist-get managed :message))
                           (concat "locks " (mapconcat #'identity
                                                       (plist-get managed :locked) ", ")))))))
       (mapcar (lambda (file)
                 (format "  %s: %s (%s)" (plist-get file :path)
                         (if (equal (plist-get file :state) "trusted") "trusted" "NOT TRUSTED")
                         (plist-get file :reason)))
               (plist-get status :workspaceConfig)))
      "no managed or workspace config file")
     (toolhost--section
      "Policy values set by"
      (cl-loop for (key source) on (plist-get status :policySources) by #'cddr
               collect (format "  %-28s %s" (substring (symbol-name key) 1) source))
      "defaults only")
     (toolhost--section
      "Configuration problems"
      (mapcar (lambda (problem) (concat "  " problem)) (plist-get status :configProblems))
      "none"))))

(defun toolhost-status ()
  "Show the server's status."
  (interactive)
  (let ((status (jsonrpc-request (toolhost--server-or-lose) (toolhost-method status)
                                 eglot--{})))
    (toolhost--show "*toolhost status*" (toolhost-status-lines status) #'special-mode)))

;;;; Activity

(defvar toolhost-activity-actions
  (list (list "Show the result" #'toolhost-show-result))
  "Actions of an activity row: (LABEL FUNCTION [AVAILABLE-P]), each called with the
didCall entry (a plist).  Other features add theirs here.")

(defun toolhost-activity-agent (entry)
  "Who made the call of ENTRY: its agent and session."
  (let ((agent (plist-get entry :agent)))
    (if (stringp agent)
        (format "%s (%s)" agent (plist-get entry :session))
      (format "session %s" (plist-get entry :session)))))

(defun toolhost-activity-grouped (entries)
  "ENTRIES (newest first) grouped by session, the group of the newest call first."
  (let (sessions)
    (dolist (entry entries)
      (cl-pushnew (plist-get entry :session) sessions :test #'equal))
    (mapcan (lambda (session)
              (cl-remove-if-not (lambda (entry) (equal (plist-get entry :session) session))
                                entries))
            (nreverse sessions))))

(defun toolhost-activity-row (entry root)
  "The columns of an activity ENTRY."
  (vector (toolhost-activity-agent entry)
          (format-time-string "%H:%M:%S" (seconds-to-time (plist-get entry :time)))
          (plist-get entry :tool)
          (if (eq (plist-get entry :isError) t) (format "error %s" (plist-get entry :code)) "ok")
          (format "%.0f ms" (or (plist-get entry :durationMs) 0))
          (mapconcat (lambda (path) (toolhost--relative path root)) (plist-get entry :paths) ", ")
          (or (plist-get entry :decision) "")))

(defun toolhost-result-lines (server entry)
  "The lines of ENTRY's result, or nil when this Emacs did not make the call."
  (let ((result (gethash (plist-get entry :callId) (toolhost--results server))))
    (when result
      (append (list (format "# %s %s: %s" (plist-get entry :tool) (plist-get entry :callId)
                            (if (eq (plist-get result :isError) t)
                                (format "error %s" (plist-get (plist-get result :error) :code))
                              "ok"))
                    (format "session %s, %.0f ms" (plist-get entry :session)
                            (or (plist-get entry :durationMs) 0))
                    "")
              (split-string (toolhost-result-text result) "\n")))))

(defun toolhost-show-result (entry)
  "Show the result of the call of activity ENTRY."
  (let ((lines (toolhost-result-lines (toolhost--server-or-lose) entry)))
    (if lines
        (toolhost--show (format "*toolhost result %s*" (plist-get entry :callId)) lines
                        #'special-mode)
      (message "toolhost: the result of %s is not kept here: session %s made the call from another client"
               (plist-get entry :callId) (plist-get entry :session)))))

(defun toolhost-activity-act (entry)
  "Offer the actions of ENTRY."
  (let* ((actions (cl-remove-if-not (lambda (action) (or (null (nth 2 action))
                                                         (funcall (nth 2 action) entry)))
                                    toolhost-activity-actions))
         (label (completing-read "Action: " (mapcar #'car actions) nil t nil nil
                                 (caar actions))))
    (funcall (nth 1 (assoc label actions)) entry)))

(defvar toolhost-activity-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") (lambda () (interactive)
                                  (toolhost-activity-act (tabulated-list-get-id))))
    map))

(define-derived-mode toolhost-activity-mode tabulated-list-mode "toolhost-activity"
  "The calls toolhost ran by agent, newest first.
RET: the actions of the call at point."
  (setq tabulated-list-format [("agent" 24 nil) ("time" 9 nil) ("tool" 14 nil) ("outcome" 24 nil)
                               ("duration" 9 nil) ("files" 30 nil) ("approval" 12 nil)])
  (tabulated-list-init-header))

(defun toolhost-activity ()
  "List the calls toolhost ran."
  (interactive)
  (let* ((server (toolhost--server-or-lose))
         (root (project-root (eglot--project server)))
         (buffer (get-buffer-create "*toolhost activity*")))
    (with-current-buffer buffer
      (toolhost-activity-mode)
      (setq tabulated-list-entries
            (mapcar (lambda (entry) (list entry (toolhost-activity-row entry root)))
                    (toolhost-activity-grouped (toolhost--activity server))))
      (tabulated-list-print))
    (display-buffer buffer)
    buffer))

(provide 'toolhost-views)
;;; toolhost-views.el ends here
