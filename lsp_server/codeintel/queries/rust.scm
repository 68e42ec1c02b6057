; Rust definitions (extended from tree-sitter-rust's tags.scm).

(struct_item
  name: (type_identifier) @name) @definition.struct

(union_item
  name: (type_identifier) @name) @definition.struct

(enum_item
  name: (type_identifier) @name) @definition.enum

(type_item
  name: (type_identifier) @name) @definition.type

(trait_item
  name: (type_identifier) @name) @definition.trait

(mod_item
  name: (identifier) @name) @definition.module

[
  (function_item
    name: (identifier) @name)
  (function_signature_item
    name: (identifier) @name)
] @definition.function

(macro_definition
  name: (identifier) @name) @definition.function

(const_item
  name: (identifier) @name) @definition.const

(static_item
  name: (identifier) @name) @definition.var

(field_declaration
  name: (field_identifier) @name) @definition.field

; An impl block names the parent of its functions (which become methods).
(impl_item
  type: [
    (type_identifier) @name
    (generic_type type: (type_identifier) @name)
    (scoped_type_identifier name: (type_identifier) @name)
  ]) @scope
