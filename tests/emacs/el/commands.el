;;; commands.el --- the package's interactive commands, as M-x completes them  -*- lexical-binding: t; -*-
(th-run
 (lambda ()
   (let (commands)
     (mapatoms (lambda (symbol)
                 (when (and (commandp symbol) (not (string-suffix-p "-mode" (symbol-name symbol)))
                            (string-match-p "\\`toolhost\\(-\\|\\'\\)" (symbol-name symbol)))
                   (push (symbol-name symbol) commands))))
     (th-put "commands" (vconcat (sort commands #'string<))))))
