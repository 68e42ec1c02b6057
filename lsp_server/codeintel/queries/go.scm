; Go definitions (extended from tree-sitter-go's tags.scm).

(function_declaration
  name: (identifier) @name) @definition.function

; Methods: the receiver's type is the parent.
(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: [
        (type_identifier) @parent
        (pointer_type (type_identifier) @parent)
        (generic_type type: (type_identifier) @parent)
        (pointer_type (generic_type type: (type_identifier) @parent))
      ]))
  name: (field_identifier) @name) @definition.method

(method_declaration
  name: (field_identifier) @name) @definition.method

(type_spec
  name: (type_identifier) @name
  type: (struct_type)) @definition.struct

(type_spec
  name: (type_identifier) @name
  type: (interface_type)) @definition.interface

(type_spec
  name: (type_identifier) @name) @definition.type

(type_alias
  name: (type_identifier) @name) @definition.type

(const_spec
  name: (identifier) @name) @definition.const

(source_file
  (var_declaration
    (var_spec
      name: (identifier) @name) @definition.var))

(source_file
  (var_declaration
    (var_spec_list
      (var_spec
        name: (identifier) @name) @definition.var)))

(field_declaration
  name: (field_identifier) @name) @definition.field

(method_elem
  name: (field_identifier) @name) @definition.method
