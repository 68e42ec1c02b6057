;;; dir_locals.el --- a project's .dir-locals.el (written by an agent) does not loosen toolhost  -*- lexical-binding: t; -*-
;; The test writes .dir-locals.el; $TOOLHOST_TEST_ELV is the user's `enable-local-variables'.
;; The user's own toolhost-settings (this init) say acceptEdits: that reaches the server.
(setq enable-local-variables (car (read-from-string (getenv "TOOLHOST_TEST_ELV")))
      toolhost-settings '(:policy (:mode "acceptEdits")))

(defun th-preview (name arguments)
  (jsonrpc-request (toolhost-current-server) :toolhost/preview
                   (list :name name :arguments arguments :session "default")))

(th-run
 (lambda ()
   (th-answer-with (list ?d ?d ?d))
   (let* ((buffer (th-open "notes.txt"))
          (server (th-start "notes.txt"))
          (escape (list :command (format "touch %s" (expand-file-name "escaped" (getenv "HOME")))
                        :description "write outside the workspace")))
     (with-current-buffer buffer
       (th-put "risky" (vconcat (mapcar (lambda (v) (th-bool (risky-local-variable-p v nil)))
                                        '(toolhost-command toolhost-server-warm toolhost-settings
                                          toolhost-use-workspace-venv))))
       (th-put "eglotConfigLocal" (th-bool (local-variable-p 'eglot-workspace-configuration)))
       (th-put "settingsLocal" (th-bool (local-variable-p 'toolhost-settings)))
       (th-put "commandLocal" (th-bool (local-variable-p 'toolhost-command)))
       ;; What toolhost's workspace/configuration gets, asked from the project's buffer.
       (th-put "configuration"
               (eglot-handle-request server 'workspace/configuration
                                     :items [(:section "toolhost") (:section "pylsp")]))
       ;; eglot sends didChangeConfiguration from the buffer: the server asks again.
       (eglot-signal-didChangeConfiguration server))
     (th-put "sandboxed" (th-preview "bash" escape))
     (th-put "escalation" (th-preview "bash" (append escape '(:sandbox "off"))))
     (th-put "write" (th-preview "write_file" '(:path "new.txt" :content "x\n")))
     (th-put "bash" (toolhost-call-sync "bash" escape))
     (th-put "prompts" (length th-prompts))
     (th-put "status" (jsonrpc-request server :toolhost/status eglot--{})))))
