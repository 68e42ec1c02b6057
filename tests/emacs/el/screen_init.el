;;; screen_init.el --- Emacs on a real terminal (tmux), as a user runs it  -*- lexical-binding: t; -*-
;; toolhost started for the fixture workspace, then tool calls that wait for the user's
;; answer at the real prompt (no advice on it).  Each result goes to
;; $TOOLHOST_TEST_OUT.<n>.json as it arrives.
(load (expand-file-name "harness.el" (file-name-directory load-file-name)))

(defun th-save (n result)
  (with-temp-file (format "%s.%d.json" (getenv "TOOLHOST_TEST_OUT") n)
    (insert (json-encode result))))

(th-start "notes.txt")
(toolhost-call-async "write_file" '(:path "made.txt" :content "made\n")
                     (lambda (result) (th-save 1 result)))
