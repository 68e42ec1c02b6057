;;; lsp_proxy.el --- lsp_* answered by the pyright eglot runs for Python buffers  -*- lexical-binding: t; -*-
;; eglot manages Python buffers with pyright (the user's own server, started here as a
;; user's config would); toolhost manages text-mode buffers.  The agent's questions about
;; Python files go to that pyright; toolhost starts none of its own.

(defvar th-answers nil "What toolhost.el answered to each toolhost/lspRequest, newest first.")

(defun th-python (file)
  "Visit FILE of the workspace (python-mode) without showing it."
  (find-file-noselect (expand-file-name file th-workspace)))

(defun th-start-pyright (buffer)
  "Start the user's pyright for Python buffers of the project; return its eglot server."
  (with-current-buffer buffer
    (let ((command (list (getenv "TOOLHOST_TEST_PYRIGHT") "--stdio")))
      (if (toolhost--eglot-lists-p)
          (eglot '(python-mode) (project-current) 'eglot-lsp-server command '("python"))
        (eglot '(python-mode) (project-current) 'eglot-lsp-server command "python")))
    (th-wait "pyright to manage main.py" (lambda () eglot--managed-mode) 90)
    (eglot-current-server)))

(defun th-call (name arguments)
  (let ((result (toolhost-call-sync name arguments)))
    (list :isError (th-bool (eq (plist-get result :isError) t))
          :text (toolhost-result-text result))))

(defun th-process-tree (pid)
  "The processes below PID (from /proc), parents first."
  (let ((all (mapcar (lambda (p) (cons p (process-attributes p))) (list-system-processes)))
        (below (list pid)) found)
    (let ((added t))
      (while added
        (setq added nil)
        (dolist (entry all)
          (let ((parent (alist-get 'ppid (cdr entry))))
            (when (and (memq parent below) (not (memq (car entry) below)))
              (push (car entry) below)
              (setq added t)
              (push (list :pid (car entry) :parent parent
                          :name (alist-get 'comm (cdr entry))
                          :args (or (alist-get 'args (cdr entry)) ""))
                    found))))))
    (vconcat (nreverse found))))

(defvar th-landed nil "The text at each position toolhost asked about, newest first.")
(advice-add 'toolhost--utf16-position :filter-return
            (lambda (pos)
              (push (buffer-substring-no-properties pos (min (point-max) (+ pos 15))) th-landed)
              pos)
            '((name . th-record)))

(advice-add 'toolhost-lsp-answer :filter-return
            (lambda (answer) (push answer th-answers) answer) '((name . th-record)))

(th-run
 (lambda ()
   (let* ((main (th-python "main.py"))
          (pyright (th-start-pyright main))
          (server (th-start "notes.txt")))
     (th-put "client_capabilities" (toolhost--capabilities))
     (th-put "definition" (th-call "lsp_definition" '(:file "main.py" :line 8 :symbol "make_circle")))

     ;; A file no buffer has: visited (not shown), pyright manages it, and it answers.
     (th-put "unicode" (th-call "lsp_definition" '(:file "unicode_names.py" :line 3 :symbol "make_circle")))
     (let ((loaded (find-buffer-visiting (expand-file-name "unicode_names.py" th-workspace))))
       (th-put "unicode_loaded" (th-bool loaded))
       (th-put "unicode_shown" (th-bool (and loaded (get-buffer-window loaded t)))))

     ;; Unsaved text: a function that exists only in the buffer is found there.
     (with-current-buffer main
       (goto-char (point-max))
       (insert "\n\ndef added_in_buffer() -> int:\n    return 1\n\n\nadded = added_in_buffer()\n"))
     (th-put "added" (th-call "lsp_definition" '(:file "main.py" :line 17 :symbol "added_in_buffer")))
     (th-put "read_main" (th-call "read_file" '(:path "main.py")))
     (th-put "main_version" (buffer-local-value 'eglot--versioned-identifier main))
     (th-put "main_disk" (th-disk "main.py"))

     ;; Diagnostics of an unsaved buffer: eglot's, for its current version.
     (let ((bad (th-python "bad_types.py")))
       (with-current-buffer bad
         (goto-char (point-max))
         (insert "\n\ndef other() -> str:\n    return 42\n"))
       (th-put "diagnostics" (th-call "lsp_diagnostics" '(:file "bad_types.py")))
       (th-put "bad_version" (buffer-local-value 'eglot--versioned-identifier bad))
       (th-put "bad_modified" (th-bool (buffer-modified-p bad)))
       (th-put "bad_disk" (th-disk "bad_types.py")))

     (let ((status (jsonrpc-request server :toolhost/status eglot--{})))
       (th-put "language_servers" (or (plist-get status :languageServers) []))
       (th-put "lsp_answers" (plist-get status :lspAnswers)))
     (toolhost-status)
     (th-put "status_view" (with-current-buffer "*toolhost status*" (buffer-string)))
     (th-put "emacs_pid" (emacs-pid))
     (th-put "toolhost_pid" (process-id (jsonrpc--process server)))
     (th-put "pyright_pid" (process-id (jsonrpc--process pyright)))
     (th-put "processes" (th-process-tree (emacs-pid)))
     (th-put "answers" (vconcat (reverse th-answers)))
     (th-put "landed" (vconcat (reverse th-landed)))
     (setq th-answers nil)

     ;; The agent edits a buffer pyright manages, with unsaved text: the edit lands in it.
     (th-answer-with (list ?o))
     (th-put "edit" (th-call "edit_file" '(:path "main.py" :old_string "big = Circle(10.0)"
                                            :new_string "big = Circle(20.0)")))
     (th-put "edited_buffer" (with-current-buffer main (buffer-string)))
     (th-put "edited_disk" (th-disk "main.py"))
     (th-put "confirmations" th-confirmations)

     ;; The editor's pyright hangs (stopped): Emacs waits `toolhost-lsp-timeout', no longer,
     ;; and toolhost's own server answers.
     (let ((node (cl-find (process-id (jsonrpc--process pyright)) (th-process-tree (emacs-pid))
                          :key (lambda (p) (plist-get p :parent))))
           (toolhost-lsp-timeout 2))
       (with-current-buffer main
         (goto-char (point-max))
         (insert "late: str = 1\n"))
       (signal-process (plist-get node :pid) 'SIGSTOP)
       (unwind-protect
           (progn
             (th-put "hung_diagnostics" (th-call "lsp_diagnostics" '(:file "main.py")))
             (th-put "hung_definition"
                     (th-call "lsp_definition" '(:file "main.py" :line 8 :symbol "make_circle"))))
         (signal-process (plist-get node :pid) 'SIGCONT))
       (th-put "hung_version" (buffer-local-value 'eglot--versioned-identifier main))
       (th-put "hung_answers" (length th-answers)))

     ;; No eglot server for the buffer any more: handled false, toolhost's own answer.
     (setq th-answers nil)
     (eglot-shutdown pyright)
     (th-put "unmanaged" (th-call "lsp_definition" '(:file "main.py" :line 8 :symbol "make_circle")))
     (th-put "unmanaged_answers" (vconcat (reverse th-answers))))))
