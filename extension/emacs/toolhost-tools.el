;;; toolhost-tools.el --- toolhost's tools, one line each  -*- lexical-binding: t; -*-

;;; Commentary:

;; M-x toolhost-tools: one line per tool of the full surface: its name, read-only or
;; writes, and its parameters (`?' marks an optional one).  RET on a line, or
;; M-x toolhost-describe-tool, shows the tool in full: its description and each
;; parameter with its type, bounds and default.

;;; Code:

(require 'json)
(require 'seq)
(require 'toolhost)

(defvar-local toolhost--tools nil "The tools the buffer lists.")

(defun toolhost--full-tools (server)
  "The tools of the full surface, as SERVER lists them."
  (append (plist-get (jsonrpc-request server (toolhost-method tools) '(:surface "full"))
                     :tools)
          nil))

(defun toolhost--tool-parameters (tool)
  "TOOL's parameters as (NAME REQUIRED PROPERTY): the required ones in the schema's
order, then the optional ones alphabetically."
  (let* ((schema (plist-get tool :inputSchema))
         (properties (plist-get schema :properties))
         (required (mapcar #'identity (plist-get schema :required)))
         (optional nil))
    (cl-loop for (key _value) on properties by #'cddr
             for name = (substring (symbol-name key) 1)
             unless (member name required) do (push name optional))
    (mapcar (lambda (name)
              (list name (and (member name required) t)
                    (plist-get properties (intern (concat ":" name)))))
            (append required (sort optional #'string<)))))

(defun toolhost--tool-mark (tool)
  (if (eq (plist-get tool :readOnly) t) "read-only" "writes"))

(defun toolhost--tool-line (tool)
  "One line: TOOL's name, its mark, its parameter names (optional ones end with ?)."
  (format "%-18s %-9s  %s" (plist-get tool :name) (toolhost--tool-mark tool)
          (mapconcat (lambda (parameter)
                       (if (nth 1 parameter) (car parameter) (concat (car parameter) "?")))
                     (toolhost--tool-parameters tool) ", ")))

(defun toolhost--takes (property required)
  "What PROPERTY takes, in words: its type or choices, REQUIRED, bounds, default."
  (let ((type (plist-get property :type))
        (items (plist-get property :items))
        (parts nil))
    (push (cond ((plist-get property :enum)
                 (concat "one of " (mapconcat #'json-encode (plist-get property :enum) ", ")))
                ((vectorp type) (mapconcat #'identity type " or "))
                ((and (equal type "array") (plist-get items :type))
                 (concat "array of " (plist-get items :type)))
                (type type)
                (t "any"))
          parts)
    (push (if required "required" "optional") parts)
    (dolist (bound '((:minimum . "at least") (:maximum . "at most") (:minLength . "min length")))
      (when (numberp (plist-get property (car bound)))
        (push (format "%s %s" (cdr bound) (plist-get property (car bound))) parts)))
    (when (plist-member property :default)
      (push (concat "default " (json-encode (plist-get property :default))) parts))
    (string-join (nreverse parts) ", ")))

(defun toolhost--tool-details (tool)
  "TOOL's whole description and every parameter, as lines."
  (let ((parameters (toolhost--tool-parameters tool)))
    (append (list (format "%s  (%s)" (plist-get tool :name) (toolhost--tool-mark tool)) "")
            (split-string (plist-get tool :description) "\n")
            (list "" (if parameters "Parameters:" "No parameters."))
            (apply #'append
                   (mapcar (lambda (parameter)
                             (let* ((property (nth 2 parameter))
                                    (about (plist-get property :description)))
                               (cons (format "  %s (%s)" (car parameter)
                                             (toolhost--takes property (nth 1 parameter)))
                                     (and (stringp about) (not (string-empty-p about))
                                          (list (concat "      " about))))))
                           parameters))
            (list "" "M-x toolhost-tools lists every tool"))))

(defvar toolhost-tools-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'toolhost-describe-tool)
    map)
  "Keys of `toolhost-tools-mode'.")

(define-derived-mode toolhost-tools-mode special-mode "toolhost-tools"
  "The tools of toolhost, one per line; RET shows the tool of the line in full.")

(defun toolhost-tools ()
  "List the tools of the full surface, one line each; RET on one shows it in full."
  (interactive)
  (let ((tools (toolhost--full-tools (toolhost--server-or-lose))))
    (with-current-buffer
        (toolhost--show "*toolhost tools*"
                        (append (list "RET on a tool (or M-x toolhost-describe-tool): its description and parameters" "")
                                (mapcar #'toolhost--tool-line tools))
                        #'toolhost-tools-mode)
      (setq-local toolhost--tools tools)
      (pop-to-buffer (current-buffer))
      (current-buffer))))

(defun toolhost--tool-at-point ()
  "The tool of this line in a `toolhost-tools-mode' buffer, or nil."
  (when (derived-mode-p 'toolhost-tools-mode)
    (let ((name (car (split-string (buffer-substring (line-beginning-position)
                                                     (line-end-position))))))
      (seq-find (lambda (tool) (equal (plist-get tool :name) name)) toolhost--tools))))

(defun toolhost--show-tool (tool)
  (let ((buffer (toolhost--show (format "*toolhost tool %s*" (plist-get tool :name))
                                (toolhost--tool-details tool) #'special-mode)))
    (with-current-buffer buffer (visual-line-mode 1))
    (pop-to-buffer buffer)
    buffer))

(defun toolhost-describe-tool (name)
  "Show the tool NAME in full: its description and each parameter.
In the list of `toolhost-tools', the tool of the line."
  (interactive
   (list (let ((here (toolhost--tool-at-point)))
           (if here
               (plist-get here :name)
             (completing-read "Tool: " (toolhost--tool-names (toolhost--server-or-lose))
                              nil t)))))
  (let ((tool (or (seq-find (lambda (tool) (equal (plist-get tool :name) name)) toolhost--tools)
                  (seq-find (lambda (tool) (equal (plist-get tool :name) name))
                            (toolhost--full-tools (toolhost--server-or-lose))))))
    (unless tool (user-error "toolhost: no tool named %s" name))
    (toolhost--show-tool tool)))

(provide 'toolhost-tools)
;;; toolhost-tools.el ends here
