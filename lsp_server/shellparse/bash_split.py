"""A command line split into simple commands by the bash grammar (tree-sitter-bash).

Policy rules and the read-only classifier look at one simple command at a time, so a chain
like `git status && rm -rf x` must never look like `git status`. The grammar finds the
simple commands (in pipelines, lists, subshells, `if`/`for`/`while`/`case` bodies and
inside substitutions, which are returned as `nested` segments so deny rules see them) and
their redirections; this module gives each word the value bash would pass to the program:

- `'...'`, `"..."` (with its backslash escapes), backslashes, `$'...'` (ANSI-C escapes:
  `\\n`, `\\x2d`, `\\055`, `\\u2028`, `\\cX` ...) and `$"..."` (locale quoting, taken as
  written) are decoded, and adjacent parts join into one word;
- a word holding `$name` or `${name}` has a value only known when the command runs: it is
  marked `expanding` (an opaque word), and its text is kept as written;
- whatever makes bash run code that the words do not show makes the whole line opaque
  (`reasons`): command and process substitutions, here-documents, function definitions,
  arithmetic (`$((...))`, `$[...]`, `((...))`, `let`, `[[ x -eq y ]]`: its operands are
  evaluated, and an array subscript inside them runs commands), parameter expansions other
  than plain `${name}` and `${#name}` (`${x@P}` expands prompts, `${x:a:1}` evaluates `a`,
  `${a[i]}` a subscript, `${x:-$(...)}` ...), array subscripts, and anything the grammar
  cannot parse.

Parsing goes through `bash_tree.parse` (non-ASCII text is mapped to letters first: the
grammar's external scanner can crash on some of it, and bash's syntax is ASCII).
"""

from __future__ import annotations

import re

import attrs
import tree_sitter

from lsp_server.shellparse.bash_tree import MAX_NODES, parse
from lsp_server.shellparse.segments import ParsedCommand, Redirect, Segment

Node = tree_sitter.Node

# Parameter expansions that only substitute a value.
_PLAIN_EXPANSION = re.compile(
    r"\$\{#?([A-Za-z_][A-Za-z0-9_]*(\[([0-9]+|[@*])\])?|[0-9]+|[@*#?$!-])\}"
)
_LITERAL_INDEX = re.compile(r"\[([0-9]+|[@*])\]")
_MAX_DEPTH = 150  # nesting the walk follows (Python's own stack is the limit beyond)
# Nodes that are (or hold) simple commands of their own.
_STATEMENTS = frozenset(
    (
        "command",
        "redirected_statement",
        "declaration_command",
        "unset_command",
        "variable_assignment",
        "variable_assignments",
        "test_command",
    )
)
_ARITHMETIC_TESTS = frozenset(("-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-v", "-R"))
_SINGLE_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_ANSI_C = re.compile(
    r"\\(?:(?P<octal>[0-7]{1,3})|x(?P<hex>[0-9A-Fa-f]{1,2})|u(?P<u>[0-9A-Fa-f]{1,4})"
    r"|U(?P<U>[0-9A-Fa-f]{1,8})|c(?P<ctl>.)|(?P<single>.))",
    re.DOTALL,
)


def decode_ansi_c(body: str) -> str:
    """The value of `$'body'` as bash computes it."""

    def one(match: re.Match[str]) -> str:
        if match["octal"] is not None:
            return chr(int(match["octal"], 8) & 0xFF)
        number = match["hex"] or match["u"] or match["U"]
        if number is not None:
            code = int(number, 16)
            return chr(code) if code <= 0x10FFFF else "\ufffd"
        if match["ctl"] is not None:
            return chr(ord(match["ctl"]) & 0x1F)
        single = match["single"]
        return _SINGLE_ESCAPES.get(single, "\\" + single)

    return _ANSI_C.sub(one, body)


def _unescape_bare(text: str) -> str:
    """An unquoted word's backslashes: `\\x` is `x`, a backslash-newline is nothing."""
    return re.sub(r"\\(.)", lambda m: "" if m[1] == "\n" else m[1], text, flags=re.DOTALL)


def _unescape_double(text: str) -> str:
    """Inside "...": a backslash escapes only $ ` " \\ and newline."""
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m[1] == "\n" else m[1], text)


@attrs.define
class _Word:
    parts: list[str] = attrs.field(factory=list)
    expanding: bool = False
    patterned: bool = False


class _Splitter:
    def __init__(self, text: str) -> None:
        self.text = text
        self.segments: list[Segment] = []
        self.reasons: list[str] = []
        self.seen = 0
        self.depth = 0

    def source(self, node: Node) -> str:
        # Offsets are the ASCII-mapped text's bytes, one per character of `text`.
        return self.text[node.start_byte : node.end_byte]

    def opaque(self, reason: str) -> None:
        if reason not in self.reasons:
            self.reasons.append(reason)

    # -- walking ---------------------------------------------------------------------------
    def walk(self, node: Node, nested: bool) -> None:
        self.seen += 1
        if self.seen > MAX_NODES:
            self.opaque("the command is too large to check")
            return
        kind = node.type
        if node.is_error or node.is_missing:
            self.opaque("the bash grammar cannot parse all of it")
            return
        if kind == "command":
            self.command(node, [], nested)
        elif kind == "redirected_statement":
            self.redirected(node, nested)
        elif kind == "declaration_command" or kind == "unset_command":
            self.declaration(node, nested)
        elif kind == "test_command":
            self.test_command(node, nested)
        elif kind == "variable_assignments" or kind == "variable_assignment":
            words = [node] if kind == "variable_assignment" else list(node.named_children)
            self.emit(self.words(words, nested), [], nested)
        else:
            self.scan(node, nested)

    def scan(self, node: Node, nested: bool) -> None:
        """Reasons of opacity in `node`, and the simple commands below it."""
        self.seen += 1
        if self.seen > MAX_NODES or self.depth > _MAX_DEPTH:
            self.opaque("the command is too large or too deeply nested to check")
            return
        self.depth += 1
        try:
            self._scan(node, nested)
        finally:
            self.depth -= 1

    def _scan(self, node: Node, nested: bool) -> None:
        kind = node.type
        if kind in ("command_substitution", "process_substitution"):
            self.opaque(kind.replace("_", " "))
            for child in node.children:
                self.walk(child, True)
            return
        if kind == "heredoc_redirect":
            self.opaque("here-document")
        elif kind == "function_definition":
            self.opaque("a shell function definition")
        elif kind in ("arithmetic_expansion", "c_style_for_statement") or (
            kind == "compound_statement" and self.source(node).startswith("((")
        ):
            self.opaque("arithmetic, which evaluates array subscripts")
        elif kind == "expansion" and not _PLAIN_EXPANSION.fullmatch(self.source(node)):
            self.opaque(f"the expansion {self.source(node)[:40]} is evaluated by bash")
        elif kind == "subscript" and not _LITERAL_INDEX.search(self.source(node)):
            self.opaque("an array subscript that bash evaluates")
        elif kind == "test_operator" and self.source(node) in _ARITHMETIC_TESTS:
            self.opaque(f"[[ {self.source(node)} ]] evaluates its operands as arithmetic")
        for child in node.children:
            if child.type in _STATEMENTS:
                self.walk(child, nested)
            elif child.is_error or child.is_missing:
                self.opaque("the bash grammar cannot parse all of it")
            else:
                self.scan(child, nested)

    # -- simple commands -------------------------------------------------------------------
    def redirected(self, node: Node, nested: bool) -> None:
        body = node.child_by_field_name("body")
        redirects = [c for c in node.children if c.type.endswith("redirect")]
        for child in node.children:
            if child.is_error or child.is_missing:
                self.opaque("the bash grammar cannot parse all of it")
        if body is not None and body.type == "command":
            self.command(body, redirects, nested)
            return
        first = len(self.segments)
        if body is not None:
            self.walk(body, nested)
        found, extra = self.redirects(redirects, nested)
        if body is not None and body.type in ("list", "pipeline"):
            # The grammar reads `a && b 2>&1 | c` as `(a && b) 2>&1 | c`; bash gives the
            # redirection to the last simple command, b.
            last = next(
                (
                    i
                    for i in range(len(self.segments) - 1, first - 1, -1)
                    if self.segments[i].nested == nested and self.segments[i].words
                ),
                None,
            )
            if last is not None:
                self.segments[last] = _extended(self.segments[last], found, extra)
                return
        # Redirections of a group (`{ ...; } > f`, a subshell, a loop): a segment without
        # words, which is never a read; one that only joins descriptors is dropped.
        if extra or any(r.writes or "<" in r.operator for r in found):
            self.emit(extra, found, nested)

    def command(self, node: Node, outer: list[Node], nested: bool) -> None:
        parts: list[Node] = []
        redirects: list[Node] = []
        for child in node.children:
            if child.type.endswith("redirect"):
                redirects.append(child)
            elif child.type == "command_name":
                parts.extend(child.children)
            elif child.is_error or child.is_missing:
                self.opaque("the bash grammar cannot parse all of it")
            else:
                parts.append(child)
        words = self.words(parts, nested)
        found, extra = self.redirects([*redirects, *outer], nested)
        self.emit(words + extra, found, nested)

    def declaration(self, node: Node, nested: bool) -> None:
        keyword = node.children[0] if node.children else None
        parts = [c for c in node.children[1:]]
        words = self.words(parts, nested)
        if keyword is not None:
            words.insert(0, _Word([self.source(keyword)]))
        self.emit(words, [], nested)

    def test_command(self, node: Node, nested: bool) -> None:
        """`[ -d x ]`, `[[ a == b ]]`: a command named `[` or `[[` with its words."""
        self.scan(node, nested)
        words: list[_Word] = []
        pending = list(reversed(node.children))
        while pending:
            child = pending.pop()
            if child.type.endswith("_expression"):
                pending.extend(reversed(child.children))
            elif child.is_named and child.type != "test_operator":
                word = _Word()
                self.value(child, word)
                words.append(word)
            else:
                words.append(_Word([self.source(child)]))
        self.emit(words, [], nested)

    def emit(self, words: list[_Word], redirects: list[Redirect], nested: bool) -> None:
        if not words and not redirects:
            return
        self.segments.append(
            Segment(
                tuple("".join(w.parts) for w in words),
                tuple(redirects),
                nested=nested,
                expanding=frozenset(i for i, w in enumerate(words) if w.expanding),
                patterned=frozenset(i for i, w in enumerate(words) if w.patterned),
            )
        )

    def redirects(self, nodes: list[Node], nested: bool) -> tuple[list[Redirect], list[_Word]]:
        """The redirections, and words the grammar took for extra targets (`>f x`: x is
        an argument)."""
        found: list[Redirect] = []
        extra: list[_Word] = []
        for node in nodes:
            self.scan(node, nested)
            if node.type == "heredoc_redirect":
                found.append(Redirect("<<", ""))
                continue
            operator = ""
            targets: list[Node] = []
            for child in node.children:
                if child.type == "file_descriptor" or not child.is_named:
                    operator += self.source(child)
                else:
                    targets.append(child)
            words = self.words(targets, nested, scan=False)
            target = words[0] if words else _Word()
            text = "".join(target.parts)
            if target.expanding:
                text = self.source(targets[0]) if targets else text
            found.append(Redirect(operator, text))
            extra.extend(words[1:])
        return found, extra

    # -- words -----------------------------------------------------------------------------
    def words(self, nodes: list[Node], nested: bool, scan: bool = True) -> list[_Word]:
        """One word per run of adjacent nodes (`$"a"b` is one word: `ab`)."""
        words: list[_Word] = []
        previous_end = -1
        for node in nodes:
            if scan:
                self.scan(node, nested)
            if node.start_byte != previous_end or not words:
                words.append(_Word())
            self.value(node, words[-1])
            previous_end = node.end_byte
        return words

    def value(self, node: Node, word: _Word) -> None:
        self.seen += 1
        if self.seen > MAX_NODES:
            self.opaque("the command is too large to check")
            word.expanding = True
            return
        kind = node.type
        text = self.source(node)
        if kind == "$":
            return  # `$"..."`: the `$` of locale quoting (the grammar splits it off)
        if kind in ("word", "number", "variable_name", "special_variable_name"):
            word.patterned = word.patterned or bool(re.search(r"(?<!\\)[*?\[{]", text))
            word.patterned = word.patterned or (not word.parts and text.startswith("~"))
            word.parts.append(_unescape_bare(text))
        elif kind == "raw_string":
            word.parts.append(text[1:-1])
        elif kind == "ansi_c_string":
            word.parts.append(decode_ansi_c(text[2:-1]))
        elif kind in ("string", "translated_string"):
            self.string(node, word)
        elif kind in ("concatenation", "variable_assignment"):
            for child in node.children:
                self.value(child, word)
        elif kind == "=":
            word.parts.append("=")
        elif kind == "brace_expression":
            word.patterned = True
            word.parts.append(text)
        else:  # expansions, substitutions, anything else: only known when it runs
            word.expanding = True
            word.parts.append(text)

    def string(self, node: Node, word: _Word) -> None:
        """ "..." : escapes decoded between the expansions it holds."""
        start = node.start_byte + (2 if self.source(node).startswith("$") else 1)
        end = node.end_byte - 1
        position = start
        for child in node.named_children:
            if child.type == "string_content":
                continue
            word.parts.append(_unescape_double(self.text[position : child.start_byte]))
            word.parts.append(self.source(child))
            word.expanding = True
            position = child.end_byte
        word.parts.append(_unescape_double(self.text[position:end]))


def _extended(segment: Segment, redirects: list[Redirect], extra: list[_Word]) -> Segment:
    """`segment` with more redirections and the words the grammar took for their targets."""
    count = len(segment.words)
    return attrs.evolve(
        segment,
        words=segment.words + tuple("".join(w.parts) for w in extra),
        redirects=segment.redirects + tuple(redirects),
        expanding=segment.expanding | {count + i for i, w in enumerate(extra) if w.expanding},
        patterned=segment.patterned | {count + i for i, w in enumerate(extra) if w.patterned},
    )


def split_command(command: str) -> ParsedCommand:
    """Segments of a command line, as bash would run them (see the module docstring)."""
    splitter = _Splitter(command)
    if "\x00" in command:
        splitter.opaque("a NUL byte, which bash cannot pass")
    tree = parse(command)
    if tree is None:
        return ParsedCommand((), True, ("the command is too long to check",))
    root = tree.root_node
    if root.has_error:
        splitter.opaque("the bash grammar cannot parse all of it")
    for child in root.children:
        splitter.walk(child, False)
    return ParsedCommand(tuple(splitter.segments), bool(splitter.reasons), tuple(splitter.reasons))
