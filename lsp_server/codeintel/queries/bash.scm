; Bash definitions (tree-sitter-bash ships no tags.scm).

(function_definition
  name: (word) @name) @definition.function

(program
  (variable_assignment
    name: (variable_name) @name) @definition.var)

(program
  (declaration_command
    (variable_assignment
      name: (variable_name) @name)) @definition.var)
