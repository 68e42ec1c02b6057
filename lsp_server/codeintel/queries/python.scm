; Python definitions (extended from tree-sitter-python's tags.scm).

(class_definition
  name: (identifier) @name) @definition.class

(function_definition
  name: (identifier) @name) @definition.function

; A lambda given a name is a function, wherever it is.
(assignment
  left: (identifier) @name
  right: (lambda)) @definition.function

; Module-level assignments: UPPER_CASE names are constants, others variables.
(module
  (expression_statement
    (assignment
      left: (identifier) @name) @definition.const)
  (#match? @name "^[A-Z_][A-Z0-9_]*$"))

(module
  (expression_statement
    (assignment
      left: (identifier) @name) @definition.var))

; Class-level assignments and annotations are fields.
(class_definition
  body: (block
    (expression_statement
      (assignment
        left: (identifier) @name) @definition.field)))
