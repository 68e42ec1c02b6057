; C++ definitions (extended from tree-sitter-cpp's tags.scm).

; `void Foo::bar() {}` defined outside its class: Foo is the parent.
(function_definition
  declarator: (function_declarator
    declarator: (qualified_identifier
      scope: (_) @parent
      name: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name))) @definition.method

(function_definition
  declarator: (reference_declarator
    (function_declarator
      declarator: (qualified_identifier
        scope: (_) @parent
        name: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name)))) @definition.method

(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator
      declarator: (qualified_identifier
        scope: (_) @parent
        name: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name)))) @definition.method

(function_definition
  declarator: [
    (function_declarator
      declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name)
    (pointer_declarator
      declarator: (function_declarator
        declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name))
    (reference_declarator
      (function_declarator
        declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name))
  ]) @definition.function

; Member functions declared in a class body.
(field_declaration_list
  [
    (field_declaration
      declarator: (function_declarator
        declarator: [(field_identifier) (destructor_name) (operator_name)] @name))
    (declaration
      declarator: (function_declarator
        declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name))
  ] @definition.method)

(class_specifier
  name: (type_identifier) @name
  body: (_)) @definition.class

(struct_specifier
  name: (type_identifier) @name
  body: (_)) @definition.struct

(union_specifier
  name: (type_identifier) @name
  body: (_)) @definition.struct

(enum_specifier
  name: (type_identifier) @name
  body: (_)) @definition.enum

(namespace_definition
  name: (_) @name) @definition.module

(type_definition
  declarator: [
    (type_identifier) @name
    (pointer_declarator declarator: (type_identifier) @name)
  ]) @definition.type

(alias_declaration
  name: (type_identifier) @name) @definition.type

(preproc_def
  name: (identifier) @name) @definition.const

(preproc_function_def
  name: (identifier) @name) @definition.function

(translation_unit
  (declaration
    (type_qualifier) @_const
    declarator: (init_declarator declarator: (identifier) @name)) @definition.const
  (#eq? @_const "const"))

(translation_unit
  (declaration
    declarator: [
      (identifier) @name
      (init_declarator declarator: (identifier) @name)
      (init_declarator declarator: (pointer_declarator declarator: (identifier) @name))
      (pointer_declarator declarator: (identifier) @name)
    ]) @definition.var)

(declaration_list
  (declaration
    (type_qualifier) @_const
    declarator: (init_declarator declarator: (identifier) @name)) @definition.const
  (#eq? @_const "const"))

(declaration_list
  (declaration
    declarator: [
      (identifier) @name
      (init_declarator declarator: (identifier) @name)
      (init_declarator declarator: (pointer_declarator declarator: (identifier) @name))
      (pointer_declarator declarator: (identifier) @name)
    ]) @definition.var)

(field_declaration
  declarator: [
    (field_identifier) @name
    (pointer_declarator declarator: (field_identifier) @name)
    (array_declarator declarator: (field_identifier) @name)
  ]) @definition.field

(enumerator
  name: (identifier) @name) @definition.field
