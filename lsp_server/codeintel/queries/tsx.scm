; TypeScript definitions (extended from tree-sitter-typescript's and -javascript's tags.scm).

[
  (class_declaration
    name: (_) @name)
  (abstract_class_declaration
    name: (_) @name)
] @definition.class

[
  (method_definition
    name: (_) @name)
  (abstract_method_signature
    name: (_) @name)
] @definition.method

[
  (function_declaration
    name: (identifier) @name)
  (generator_function_declaration
    name: (identifier) @name)
  (function_signature
    name: (identifier) @name)
] @definition.function

(interface_body
  (method_signature
    name: (_) @name) @definition.method)

(interface_declaration
  name: (_) @name) @definition.interface

(type_alias_declaration
  name: (_) @name) @definition.type

(enum_declaration
  name: (_) @name) @definition.enum

[
  (internal_module
    name: (_) @name)
  (module
    name: (_) @name)
] @definition.module

(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function

(variable_declarator
  name: (identifier) @name
  value: (class)) @definition.class

(public_field_definition
  name: (_) @name) @definition.field

; Members of interfaces and of object types given a name.
(interface_body
  (property_signature
    name: (_) @name) @definition.field)

(type_alias_declaration
  value: (object_type
    (property_signature
      name: (_) @name) @definition.field))

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
