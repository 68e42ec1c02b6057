;;; long_change.el --- a change longer than its window: read it first, then decide  -*- lexical-binding: t; -*-
(th-run
 (lambda ()
   (let ((lines (mapconcat (lambda (i) (format "+line %d" i)) (number-sequence 1 200) "\n"))
         (focused nil))
     (th-answer-with (list ?v ?o))
     (advice-add 'recursive-edit :override
                 (lambda () (setq focused (buffer-name (window-buffer (selected-window))))))
     (th-put "answer"
             (toolhost-decide
              (list :callId "c-9" :tool "edit_file" :title "Edit notes.txt" :risk "medium"
                    :diff (concat "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,200 +1,200 @@\n" lines)
                    :paths ["notes.txt"] :suggestedRules ["edit_file(notes.txt)"])))
     (th-put "focused" focused)
     (th-put "prompts" (vconcat (reverse th-prompts))))))
