; Ruby definitions (extended from tree-sitter-ruby's tags.scm).

; Methods of a module (a function inside a class becomes a method by nesting).
(module
  body: (body_statement
    [
      (method
        name: (_) @name)
      (singleton_method
        name: (_) @name)
    ] @definition.method))

[
  (method
    name: (_) @name)
  (singleton_method
    name: (_) @name)
] @definition.function

(alias
  name: (_) @name) @definition.function

(class
  name: [
    (constant) @name
    (scope_resolution
      name: (_) @name)
  ]) @definition.class

(module
  name: [
    (constant) @name
    (scope_resolution
      name: (_) @name)
  ]) @definition.module

(assignment
  left: (constant) @name) @definition.const
