;;; toolhost-checkpoints.el --- Revert this call  -*- lexical-binding: t; -*-

;;; Commentary:

;; M-x toolhost-revert: pick a call that changed files (newest first), read what reverting
;; it will change, confirm, and see the result (conflicts come with the diff of what
;; changed since the call).  Also "Revert this call" among a row's actions in
;; `toolhost-activity'.  See docs/CHECKPOINTS.md.

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

(add-to-list 'toolhost-activity-actions
             (list "Revert this call"
                   (lambda (entry) (toolhost-revert (plist-get entry :callId))))
             t)

(provide 'toolhost-checkpoints)
;;; toolhost-checkpoints.el ends here
