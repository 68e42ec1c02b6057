; Java definitions (extended from tree-sitter-java's tags.scm).

[
  (class_declaration
    name: (identifier) @name)
  (record_declaration
    name: (identifier) @name)
] @definition.class

[
  (interface_declaration
    name: (identifier) @name)
  (annotation_type_declaration
    name: (identifier) @name)
] @definition.interface

(enum_declaration
  name: (identifier) @name) @definition.enum

[
  (method_declaration
    name: (identifier) @name)
  (constructor_declaration
    name: (identifier) @name)
  (compact_constructor_declaration
    name: (identifier) @name)
] @definition.method

(field_declaration
  declarator: (variable_declarator
    name: (identifier) @name)) @definition.field

(enum_constant
  name: (identifier) @name) @definition.field
