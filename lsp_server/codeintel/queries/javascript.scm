; JavaScript definitions (extended from tree-sitter-javascript's tags.scm).

(class_declaration
  name: (_) @name) @definition.class

(method_definition
  name: (_) @name) @definition.method

[
  (function_declaration
    name: (identifier) @name)
  (generator_function_declaration
    name: (identifier) @name)
] @definition.function

(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function

(variable_declarator
  name: (identifier) @name
  value: (class)) @definition.class

(field_definition
  property: (property_identifier) @name) @definition.field

; Top-level bindings: `const` ones are constants, `let`/`var` variables.
(program
  (lexical_declaration
    "const"
    (variable_declarator
      name: (identifier) @name) @definition.const))

(program
  (export_statement
    (lexical_declaration
      "const"
      (variable_declarator
        name: (identifier) @name) @definition.const)))

(program
  (lexical_declaration
    (variable_declarator
      name: (identifier) @name) @definition.var))

(program
  (variable_declaration
    (variable_declarator
      name: (identifier) @name) @definition.var))
