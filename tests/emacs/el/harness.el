;;; harness.el --- shared by the Emacs test scripts  -*- lexical-binding: t; -*-
;; Loads eglot (Debian's elpa-eglot on Emacs 28, built in from 29) and toolhost.el,
;; starts toolhost for the fixture workspace, and writes what a script observed as JSON
;; to $TOOLHOST_TEST_OUT.  Scripted answers stand in for the keys a user would press.
(require 'package)
(add-to-list 'package-directory-list "/usr/share/emacs/site-lisp/elpa")
(package-initialize)
(require 'eglot)
(require 'json)
(add-to-list 'load-path (getenv "TOOLHOST_TEST_PACKAGE"))
(require 'toolhost)

(setq eglot-sync-connect t
      eglot-connect-timeout 90
      toolhost-command (append (json-parse-string (getenv "TOOLHOST_TEST_CMD") :array-type 'list) nil)
      toolhost-major-modes '(text-mode)
      make-backup-files nil)

(defvar th-out (make-hash-table :test #'equal) "What the script observed.")
(defvar th-workspace (file-name-as-directory (getenv "TOOLHOST_TEST_WORKSPACE")))

(defun th-put (key value) (puthash key value th-out))
(defun th-bool (value) (if value t :json-false))

(defun th-wait (what predicate &optional seconds)
  (let ((deadline (+ (float-time) (or seconds 60))))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (unless (funcall predicate) (error "timed out waiting for %s" what))))

(defun th-open (file)
  "Visit FILE of the workspace in `text-mode'."
  (find-file (expand-file-name file th-workspace))
  (text-mode)
  (current-buffer))

(defun th-start (file)
  "Visit FILE and start toolhost for the workspace; return the server."
  (let ((buffer (th-open file)))
    (toolhost)
    (th-wait "the buffer to be managed by toolhost"
             (lambda () (buffer-local-value 'eglot--managed-mode buffer)))
    (toolhost-current-server)))

(defun th-disk (file)
  (with-temp-buffer
    (insert-file-contents (expand-file-name file th-workspace))
    (buffer-string)))

(defvar th-prompts nil "Each approval as the user saw it, newest first.")
(defvar th-confirmations 0 "How many times eglot asked \"Server wants to edit\".")

(defun th-answer-with (keys &optional confirm)
  "Answer approvals with KEYS in order (a char, or `quit' for C-g); y-or-n-p with CONFIRM."
  (advice-add
   'read-multiple-choice :override
   (lambda (prompt choices &rest _)
     (let ((window (get-buffer-window "*toolhost approval*")))
       (push (list :prompt prompt
                   :keys (mapconcat (lambda (c) (string (car c))) choices "")
                   :window (th-bool window)
                   :lines (and window (with-current-buffer (window-buffer window)
                                        (split-string (buffer-string) "\n"))))
             th-prompts))
     (let ((key (pop keys)))
       (if (eq key 'quit) (signal 'quit nil) (assq key choices))))
   '((name . th-answers)))
  (advice-add 'read-string :override (lambda (&rest _) "") '((name . th-answers)))
  (advice-add 'y-or-n-p :override
              (lambda (&rest _) (setq th-confirmations (1+ th-confirmations)) confirm)
              '((name . th-answers))))

(defun th--read (file)
  "FILE's text (a file of /proc: read to its end whatever size it claims)."
  (with-temp-buffer
    (set-buffer-multibyte nil)
    (insert-file-contents-literally file)
    (buffer-string)))

(defun th--channels (pid)
  "The pipes and sockets PID holds, as /proc names them."
  (delq nil (mapcar (lambda (fd)
                      (let ((target (file-symlink-p (format "/proc/%s/fd/%s" pid fd))))
                        (and target (string-match-p "\\`\\(pipe\\|socket\\):" target) target)))
                    (ignore-errors (directory-files (format "/proc/%s/fd" pid) nil "\\`[0-9]+\\'")))))

(defun th-server-processes ()
  "What the editor's server is, read while it runs (tests/warm/editor_servers.py): this
process's pipes and sockets, the socket pairs of the machine (`ss'), and those of each
process that is its child or a toolhost."
  (let ((me (emacs-pid)) processes)
    (dolist (name (directory-files "/proc" nil "\\`[0-9]+\\'"))
      (let* ((stat (ignore-errors (th--read (format "/proc/%s/stat" name))))
             (cmdline (and stat (ignore-errors (th--read (format "/proc/%s/cmdline" name))))))
        (when cmdline
          (setq cmdline (string-trim (subst-char-in-string ?\0 ?\s cmdline)))
          (let ((ppid (string-to-number
                       (nth 1 (split-string (substring stat (+ 2 (cl-position ?\) stat :from-end t))))))))
            (when (or (= ppid me) (string-match-p "toolhost\\|lsp_server" cmdline))
              (push `((pid . ,(string-to-number name)) (ppid . ,ppid) (cmdline . ,cmdline)
                      (channels . ,(vconcat (th--channels name))))
                    processes))))))
    `((editorPid . ,me) (channels . ,(vconcat (th--channels me)))
      (unixSockets . ,(with-output-to-string (call-process "ss" nil standard-output nil "-xnH")))
      (processes . ,(vconcat processes)))))

(defun th-run (body)
  "Run BODY; record an error; write the observations; exit."
  (condition-case err
      (funcall body)
    (error (th-put "error" (format "%S" err))))
  (with-temp-file (getenv "TOOLHOST_TEST_OUT")
    (insert (json-encode th-out)))
  (let ((server (toolhost-current-server)))
    (when server (ignore-errors (eglot-shutdown server))))
  (kill-emacs 0))
