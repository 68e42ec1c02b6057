; C# definitions (extended from tree-sitter-c-sharp's tags.scm).

[
  (class_declaration
    name: (identifier) @name)
  (record_declaration
    name: (identifier) @name)
] @definition.class

(struct_declaration
  name: (identifier) @name) @definition.struct

(interface_declaration
  name: (identifier) @name) @definition.interface

(enum_declaration
  name: (identifier) @name) @definition.enum

(delegate_declaration
  name: (identifier) @name) @definition.type

[
  (method_declaration
    name: (identifier) @name)
  (constructor_declaration
    name: (identifier) @name)
  (destructor_declaration
    name: (identifier) @name)
  (operator_declaration) @name
] @definition.method

[
  (namespace_declaration
    name: (_) @name)
  (file_scoped_namespace_declaration
    name: (_) @name)
] @definition.module

(field_declaration
  (modifier) @_const
  (variable_declaration
    (variable_declarator
      name: (identifier) @name))
  (#eq? @_const "const")) @definition.const

(field_declaration
  (variable_declaration
    (variable_declarator
      name: (identifier) @name))) @definition.field

[
  (property_declaration
    name: (identifier) @name)
  (event_field_declaration
    (variable_declaration
      (variable_declarator
        name: (identifier) @name)))
] @definition.field

(enum_member_declaration
  name: (identifier) @name) @definition.field
