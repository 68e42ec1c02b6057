;;; toolhost-checkpoints.el --- Revert this call  -*- lexical-binding: t; -*-

;;; Commentary:

;; M-x toolhost-revert: pick a call that changed files (newest first), read what reverting
;; it will change, confirm, and see the result (conflicts come with the diff of what
;; changed since the call).  Also "Revert this call" among a row's actions in
;; `toolhost-activity'.  See docs/CHECKPOINTS.md.
;;
;; Each agent's changes: M-x toolhost-review-agent picks a session (its agent named) and
;; shows one diff of everything it changed; M-x toolhost-revert-agent asks, then reverts
;; each of its calls, newest first (docs/AGENTS.md).

;;; Code:

(require 'toolhost)

(defun toolhost-checkpoints (&optional limit)
  "The checkpoints of the server, newest first (a list of plists)."
  (append (plist-get (jsonrpc-request (toolhost--server-or-lose)
                                      (toolhost-method checkpoints)
                                      (list :limit (or limit 100)))
                     :checkpoints)
          nil))

(defun toolhost-revert-description (checkpoint)
  "What reverting CHECKPOINT will change, as lines."
  (let ((label (plist-get checkpoint :label)))
    (append
     (list (format "Revert call %s (%s%s)? It will change:"
                   (plist-get checkpoint :callId) (plist-get checkpoint :tool)
                   (if (and (stringp label) (not (string-empty-p label))) (concat ": " label) "")))
     (mapcar (lambda (file)
               (let ((change (plist-get file :change))
                     (from (plist-get file :fromPath)))
                 (format "  %-8s %s%s%s -> %s" change (plist-get file :path)
                         (if (stringp from) (format " (from %s)" from) "")
                         (if (eq (plist-get file :notStored) t) " (not stored)" "")
                         (pcase change ("created" "removed") ("deleted" "restored")
                                ("moved" "moved back") (_ "put back")))))
             (append (plist-get checkpoint :files) nil))
     (list "Files changed since by someone else are left alone and listed as conflicts."))))

(defun toolhost-revert-lines (result)
  "The lines of a toolhost/revert RESULT, with each conflict's diff."
  (append (split-string (plist-get result :text) "\n")
          (mapcan (lambda (conflict)
                    (let ((diff (plist-get conflict :diff)))
                      (when (and (stringp diff) (not (string-empty-p diff)))
                        (cons "" (cons (format "changed since the call: %s"
                                               (plist-get conflict :path))
                                       (split-string diff "\n"))))))
                  (append (plist-get result :conflicts) nil))))

(defun toolhost-revert (call-id)
  "Revert what call CALL-ID changed, after showing what will change and asking."
  (interactive
   (let* ((checkpoints (toolhost-checkpoints))
          (choices (mapcar (lambda (c) (cons (format "%s  %s  %s" (plist-get c :callId)
                                                     (plist-get c :tool) (plist-get c :label))
                                             (plist-get c :callId)))
                           checkpoints)))
     (unless choices (user-error "toolhost: no checkpoints yet (no call changed a file)"))
     (list (cdr (assoc (completing-read "Revert this call: " choices nil t) choices)))))
  (let ((checkpoint (cl-find call-id (toolhost-checkpoints 500)
                             :key (lambda (c) (plist-get c :callId)) :test #'equal)))
    (unless checkpoint
      (user-error "toolhost: no checkpoint of call %s (M-x toolhost-revert lists them)" call-id))
    (toolhost--show "*toolhost revert*" (toolhost-revert-description checkpoint) #'special-mode)
    (when (yes-or-no-p (format "Revert this call (%s)? " call-id))
      (let ((result (jsonrpc-request (toolhost--server-or-lose) (toolhost-method revert)
                                     (list :callId call-id) :timeout 60)))
        (toolhost--show "*toolhost revert*" (toolhost-revert-lines result) #'special-mode)
        result))))

;;; Each agent's changes

(defun toolhost-agents ()
  "The sessions that changed files, newest first.
Each is a plist (:session :agent :calls :files)."
  (let (order)
    (dolist (checkpoint (toolhost-checkpoints 1000))
      (let* ((session (plist-get checkpoint :session))
             (entry (cl-find session order :key (lambda (e) (plist-get e :session))
                             :test #'equal))
             (agent (plist-get checkpoint :agent)))
        (unless entry
          (setq entry (list :session session :agent nil :calls 0 :files nil))
          (setq order (append order (list entry))))
        (plist-put entry :calls (1+ (plist-get entry :calls)))
        (when (and (stringp agent) (not (plist-get entry :agent)))
          (plist-put entry :agent agent))
        (dolist (file (append (plist-get checkpoint :files) nil))
          (unless (member (plist-get file :path) (plist-get entry :files))
            (plist-put entry :files (append (plist-get entry :files)
                                            (list (plist-get file :path))))))))
    order))

(defun toolhost--agent-name (entry)
  (if (plist-get entry :agent)
      (format "%s (session %s)" (plist-get entry :agent) (plist-get entry :session))
    (format "session %s" (plist-get entry :session))))

(defun toolhost--read-agent (prompt)
  (let* ((entries (toolhost-agents))
         (choices (mapcar (lambda (e)
                            (cons (format "%s: %d call(s), %d file(s)" (toolhost--agent-name e)
                                          (plist-get e :calls) (length (plist-get e :files)))
                                  (plist-get e :session)))
                          entries)))
    (unless choices (user-error "toolhost: no agent changed a file yet"))
    (list (cdr (assoc (completing-read prompt choices nil t) choices)))))

(defun toolhost-review-agent (session)
  "Show one diff of everything SESSION (an agent) changed."
  (interactive (toolhost--read-agent "Review this agent's changes: "))
  (let ((result (jsonrpc-request (toolhost--server-or-lose) (toolhost-method session-changes)
                                 (list :session session) :timeout 60)))
    (toolhost--show "*toolhost agent changes*"
                    (append (list (concat "# " (plist-get result :text)))
                            (mapcar (lambda (file) (format "# %s %s" (plist-get file :change)
                                                           (plist-get file :path)))
                                    (append (plist-get result :files) nil))
                            (split-string (plist-get result :diff) "\n"))
                    #'diff-mode)
    result))

(defun toolhost-revert-agent (session)
  "Revert every call of SESSION (an agent), newest first, after asking."
  (interactive (toolhost--read-agent "Revert all of this agent's changes: "))
  (let ((entry (cl-find session (toolhost-agents) :key (lambda (e) (plist-get e :session))
                        :test #'equal)))
    (unless entry
      (user-error "toolhost: no checkpoint of session %s (M-x toolhost-review-agent)" session))
    (when (yes-or-no-p (format "Revert all %d call(s) of %s? "
                               (plist-get entry :calls) (toolhost--agent-name entry)))
      (let ((result (jsonrpc-request (toolhost--server-or-lose) (toolhost-method revert-session)
                                     (list :session session :by "emacs") :timeout 120)))
        (toolhost--show "*toolhost revert*" (toolhost-revert-lines result) #'special-mode)
        result))))

(add-to-list 'toolhost-activity-actions
             (list "Revert this call"
                   (lambda (entry) (toolhost-revert (plist-get entry :callId))))
             t)

(provide 'toolhost-checkpoints)
;;; toolhost-checkpoints.el ends here
