"""The parser fuzz (issue 27): hostile strings through the guarded bash parse.

Run as a child process (a crash in C kills the process, not pytest):

    python -m tests.policy.fuzz_bash_parse --parses 1000000 --seed 1

Strings are random, weighted towards what bash's grammar and its external scanner treat
specially (brackets, quotes, `$`, backslashes, heredoc markers) and towards characters
outside the Basic Multilingual Plane, which crash tree-sitter-bash 0.25.1's scanner when
handed to it raw. Each string goes through `bash_tree.parse`; one in `--split-every`
also goes through the whole split (`bash_split.split_command`). Prints the number of
parses done; exits 0 only when all were done.
"""

from __future__ import annotations

import argparse
import random
import sys

from lsp_server.shellparse.bash_split import split_command
from lsp_server.shellparse.bash_tree import parse

_SPECIAL = [*"{}[]()<>'\"`$\\|&;#=~*?!@-\n\t ", "$(", "${", "$((", "<<", "<<<", "$'", '$"']
_WORDS = ["ls", "echo", "find", "-delete", "case", "in", "esac", "EOF", "x", "1"]
_KNOWN_CRASH = "{\U000fce39"


def _alphabet(rng: random.Random) -> list[str]:
    """Pieces to draw from, weighted: 45% bash specials, 20% supplementary-plane
    characters, 10% other non-ASCII, 10% words, 15% printable ASCII."""
    pieces: list[str] = []
    pieces += _SPECIAL * (450 // len(_SPECIAL))
    pieces += [chr(rng.randrange(0x10000, 0x110000)) for _ in range(200)]
    pieces += [chr(rng.randrange(0x80, 0x10000)) for _ in range(100)]
    pieces += _WORDS * (100 // len(_WORDS))
    pieces += [chr(rng.randrange(0x20, 0x7F)) for _ in range(150)]
    return pieces


def hostile(rng: random.Random, alphabet: list[str]) -> str:
    if rng.random() < 0.01:
        return _KNOWN_CRASH
    return "".join(rng.choices(alphabet, k=rng.randrange(1, 24)))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--parses", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--split-every", type=int, default=50)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    done = 0
    alphabet = _alphabet(rng)
    for index in range(args.parses):
        if index % 10_000 == 0:
            alphabet = _alphabet(rng)  # fresh non-ASCII characters now and then
        text = hostile(rng, alphabet)
        parse(text)
        if index % args.split_every == 0:
            split_command(text)
        done += 1
    print(f"parses={done}")
    return 0 if done == args.parses else 1


if __name__ == "__main__":
    sys.exit(main())
