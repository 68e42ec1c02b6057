"""Allow lists of command-line shapes: which options keep a program read-only.

A deny list of hazardous options is never complete (`sort --compress-program`, `rg -z`,
`git log --output` were all missed once). So each read-only program names the options it
may be given -- short letters with and without a value, long names with and without one
-- and a command using anything else is not a plain read. Long options must be written
in full: getopt_long and git accept any unambiguous prefix (`--out=f` is `--output=f`),
and telling which option a prefix means needs the program's complete, version-dependent
option table, so an abbreviation is not a read (the policy asks; nothing is lost but a
prompt). An exact name is always that option, even when it also prefixes a longer one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs


def names(spec: str) -> frozenset[str]:
    """`"a b c"` -> {a, b, c}: long tables written as one string."""
    return frozenset(spec.split())


@attrs.frozen
class Shape:
    """The options one program (or git subcommand) may get and stay read-only."""

    flags: str = ""
    """Short letters without a value; they combine (`-la`)."""
    valued: str = ""
    """Short letters that take a value: the rest of the word (`-n5`) or the next word."""
    long_flags: frozenset[str] = frozenset()
    """Long names (without `--`) without a value."""
    long_valued: frozenset[str] = frozenset()
    """Long names with a value: `--name=v` or `--name v`."""
    long_optional: frozenset[str] = frozenset()
    """Long names with an optional value, only ever as `--name=v`."""
    numeric: bool = False
    """`-5` is an option (head, git log)."""
    max_operands: int | None = None
    """How many operands it may get and stay a read (`uniq IN OUT` writes OUT: 1)."""

    def positionals(self, args: Sequence[str]) -> list[str] | None:
        """The arguments that are not options or option values; None when an option is
        not in the allow list (or its value is missing), or there are too many operands."""
        parsed = self.parse(args)
        return None if parsed is None else parsed[0]

    def parse(self, args: Sequence[str]) -> tuple[list[str], list[tuple[str, str]]] | None:
        """(operands, [(option, value)]) as the program reads them: `-ne 'w f'` and
        `-e'w f'` give ("e", "w f"), `--expression=x` ("expression", "x"); None when an
        option is not in the allow list, a value is missing or there are too many
        operands."""
        found: list[str] = []
        values: list[tuple[str, str]] = []
        index = 0
        while index < len(args):
            arg = args[index]
            index += 1
            if arg == "--":
                found += args[index:]
                break
            if arg.startswith("--"):
                name, has_value, value = arg[2:].partition("=")
                if name in self.long_flags and not has_value:
                    continue
                if name in self.long_optional:
                    if has_value:
                        values.append((name, value))
                    continue
                if name not in self.long_valued:
                    return None
                if not has_value:
                    if index >= len(args):
                        return None
                    value = args[index]
                    index += 1
                values.append((name, value))
                continue
            if arg.startswith("-") and len(arg) > 1:
                if self.numeric and arg[1:].isdigit():
                    continue
                taken = self._cluster(arg[1:])
                if taken is None:
                    return None
                if taken:
                    letter, attached = taken
                    if not attached:
                        if index >= len(args):
                            return None
                        attached = args[index]
                        index += 1
                    values.append((letter, attached))
                continue
            found.append(arg)
        if self.max_operands is not None and len(found) > self.max_operands:
            return None
        return found, values

    def _cluster(self, letters: str) -> tuple[str, str] | tuple[()] | None:
        """(letter, the value attached to it, "" for the next word) when `-letters` ends
        in a letter that takes a value; () when none does; None when a letter is not
        allowed."""
        for position, letter in enumerate(letters):
            if letter in self.valued:
                return letter, letters[position + 1 :]
            if letter not in self.flags:
                return None
        return ()


def shape(
    flags: str = "",
    valued: str = "",
    long: str = "",
    long_valued: str = "",
    long_optional: str = "",
    numeric: bool = False,
    max_operands: int | None = None,
) -> Shape:
    """A Shape from space-separated long names."""
    return Shape(
        flags,
        valued,
        names(long),
        names(long_valued),
        names(long_optional),
        numeric,
        max_operands,
    )


def merged(*shapes: Shape, extra: Iterable[Shape] = ()) -> Shape:
    """One shape allowing what any of `shapes` allows."""
    every = (*shapes, *extra)
    return Shape(
        "".join(s.flags for s in every),
        "".join(s.valued for s in every),
        frozenset().union(*(s.long_flags for s in every)),
        frozenset().union(*(s.long_valued for s in every)),
        frozenset().union(*(s.long_optional for s in every)),
        any(s.numeric for s in every),
    )
