"""git commands that only read, by allow list: global options, subcommand, options, words.

`git [-C dir] [--no-pager|-P] [--no-optional-locks] SUBCOMMAND ...` is a read when the
subcommand is below and every option it gets is in that subcommand's allow list (long
options in full: git accepts `--out=f` for `--output=f`). Not reads, whatever follows:
`-c`/`--config-env` (a config set inline can name a program: a pager, an alias, an
`ext::` transport with `protocol.ext.allow`), `--git-dir`/`--work-tree`/`--exec-path`,
and every subcommand that talks to a remote (`remote show`, `ls-remote`, `fetch`: a
remote URL can be `ext::<command>`). What the repository's own config makes git run is
git_guard.py's business.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lsp_server.policy.commands.option_shapes import Shape, merged, shape

_GLOBAL_FLAGS = frozenset(
    (
        "--no-pager",
        "-P",
        "--no-optional-locks",
        "--literal-pathspecs",
        "--glob-pathspecs",
        "--noglob-pathspecs",
        "--icase-pathspecs",
        "--no-replace-objects",
    )
)

# What `git diff`, `git log` and their family share: formats, pickaxe, revision limits.
# Not --output (writes a file), --ext-diff / --textconv (run configured programs),
# --show-signature (runs gpg), -O (reads an order file).
_DIFF = shape(
    "pusqzMCBDRwbWa",
    "SGUl",
    "patch no-patch stat shortstat numstat name-only name-status summary raw cc combined"
    " full-index binary no-prefix exit-code quiet check cached staged merge-base minimal"
    " patience histogram compact-summary patch-with-stat patch-with-raw no-renames"
    " ignore-space-change ignore-all-space ignore-blank-lines ignore-space-at-eol"
    " ignore-cr-at-eol text no-ext-diff no-textconv no-color pickaxe-all pickaxe-regex"
    " irreversible-delete function-context no-index name-only no-indent-heuristic"
    " indent-heuristic color-moved-ws no-color-moved ita-visible-in-index"
    " ita-invisible-in-index reverse",
    "diff-algorithm diff-filter src-prefix dst-prefix anchored line-prefix inter-hunk-context"
    " stat-width stat-name-width stat-count orderfile-none ignore-matching-lines rotate-to"
    " skip-to output-indicator-new output-indicator-old output-indicator-context",
    "unified word-diff word-diff-regex color color-words color-moved find-renames"
    " find-copies find-copies-harder break-rewrites dirstat relative ignore-submodules"
    " submodule abbrev stat",
)
_LOG = merged(
    _DIFF,
    shape(
        "",
        "nL",
        "oneline graph all reverse first-parent merges no-merges abbrev-commit"
        " no-abbrev-commit full-history follow relative-date invert-grep all-match"
        " regexp-ignore-case extended-regexp fixed-strings perl-regexp no-walk topo-order"
        " date-order author-date-order left-right cherry-pick cherry-mark cherry boundary"
        " simplify-by-decoration ancestry-path use-mailmap mailmap no-decorate source"
        " log-size dense sparse simplify-merges show-pulls left-only right-only"
        " remove-empty parents children walk-reflogs no-notes no-mailmap no-use-mailmap"
        " no-graph show-linear-break count objects objects-edge timestamp header"
        " disk-usage single-worktree bisect stdin",
        "max-count skip since after until before author committer grep format date"
        " encoding min-parents max-parents exclude since-as-filter",
        "decorate branches tags remotes glob pretty notes decorate-refs"
        " decorate-refs-exclude expand-tabs",
        numeric=True,
    ),
)
_STATUS = shape(
    "sbvz",
    "",
    "short branch long verbose renames no-renames show-stash null no-column ahead-behind"
    " no-ahead-behind",
    "",
    "porcelain untracked-files ignore-submodules ignored column find-renames",
)
_BRANCH_LIST = shape(
    "arvlqi",
    "",
    "all remotes verbose list show-current ignore-case omit-empty no-column no-color",
    "contains no-contains points-at sort format",
    "merged no-merged column color abbrev",
)
_TAG_LIST = shape(
    "ln",
    "",
    "list ignore-case omit-empty no-column",
    "contains no-contains points-at sort format",
    "merged no-merged column color",
)
_SUBCOMMANDS: dict[str, Shape] = {
    "status": _STATUS,
    "diff": _LOG,
    "log": _LOG,
    "show": _LOG,
    "shortlog": merged(_LOG, shape("sec", "w", "numbered summary email committer", "group")),
    "rev-list": _LOG,
    "whatchanged": _LOG,
    "blame": shape(
        "bcflnpsetwM",
        "LC",
        "porcelain line-porcelain incremental show-name show-number show-email root"
        " show-stats first-parent minimal progress no-progress",
        "date since reverse ignore-rev",
        "abbrev color-lines color-by-age",
    ),
    "rev-parse": shape(
        "q",
        "",
        "show-toplevel git-dir verify quiet is-inside-work-tree is-inside-git-dir"
        " is-bare-repository is-shallow-repository show-prefix show-cdup symbolic"
        " symbolic-full-name absolute-git-dir git-common-dir show-superproject-working-tree"
        " all branches tags remotes local-env-vars sq revs-only no-revs flags no-flags"
        " shared-index-path show-object-format show-ref-format",
        "default prefix since after until before git-path resolve-git-dir",
        "short abbrev-ref disambiguate path-format",
    ),
    "ls-files": shape(
        "cdmoiksuvtfz",
        "x",
        "cached deleted modified others ignored stage unmerged killed directory"
        " no-empty-directory exclude-standard full-name recurse-submodules error-unmatch eol"
        " debug deduplicate sparse resolve-undo",
        "format exclude exclude-per-directory with-tree",
        "abbrev",
    ),
    "ls-tree": shape(
        "dtrlz",
        "",
        "name-only name-status object-only full-name full-tree long",
        "format",
        "abbrev",
    ),
    "cat-file": shape(
        "tspe",
        "",
        "batch-all-objects buffer follow-symlinks unordered allow-unknown-type use-mailmap mailmap",
        "",
        # Not --batch: it prints the objects named on its input, which the words do not
        # show (`git cat-file --batch <<< HEAD:.env`); --batch-check prints sizes only.
        "batch-check",
    ),
    "describe": shape(
        "",
        "",
        "tags all always contains long exact-match debug first-parent",
        "candidates match exclude",
        "abbrev dirty broken",
    ),
    "grep": shape(
        "ivwlLcnhHEFGPozqIa",
        "efABCm",
        "ignore-case invert-match word-regexp files-with-matches name-only"
        " files-without-match count line-number column heading break full-name"
        " extended-regexp basic-regexp fixed-strings perl-regexp only-matching null quiet"
        " all-match and or not cached untracked no-index no-exclude-standard"
        " exclude-standard recurse-submodules text show-function function-context no-color",
        "max-depth threads context after-context before-context max-count regexp",
        "color",
    ),
    "merge-base": shape("a", "", "all octopus independent is-ancestor fork-point"),
    "show-ref": shape(
        "dqs", "", "head tags heads branches dereference verify quiet exists", "", "hash abbrev"
    ),
    "count-objects": shape("vH", long="verbose human-readable"),
    "version": shape(long="build-options"),
}


def _listing(list_shape: Shape, list_words: tuple[str, ...]) -> Callable[[Sequence[str]], bool]:
    """`git branch` / `git tag`: names are patterns only with --list (else they create)."""

    def check(args: Sequence[str]) -> bool:
        positional = list_shape.positionals(args)
        if positional is None:
            return False
        return not positional or any(a in list_words for a in args)

    return check


def _config(args: Sequence[str]) -> bool:
    """`git config --get KEY`, `--get-all`, `--get-regexp`, `--list`, `get KEY`, `list`:
    the action first; git stops at KEY, so `git config KEY VALUE --get` sets KEY."""
    scope = shape(
        "z",
        "",
        "global system local worktree show-origin show-scope includes no-includes null"
        " name-only bool int bool-or-int path expiry-date",
        "type default",
    )
    index = 0
    while (
        index < len(args)
        and args[index] != "--"
        and scope.positionals(args[index : index + 1]) == []
    ):
        index += 1
    rest = args[index:]
    if not rest:
        return False
    action, words = rest[0], rest[1:]
    positional = scope.positionals(words)
    if positional is None:
        return False
    if action in ("--list", "-l", "list"):
        return not positional
    if action in ("--get", "--get-all", "get"):
        return 1 <= len(positional) <= 2
    if action == "--get-regexp":
        return 1 <= len(positional) <= 2
    return False


def _subcommand_words(
    shape_: Shape, allowed: tuple[str, ...], bare: bool
) -> Callable[[Sequence[str]], bool]:
    """`git stash list|show`, `git reflog [show]`, `git worktree list`, `git remote
    [-v] | get-url`: the first word picks an action; only these read."""

    def check(args: Sequence[str]) -> bool:
        if not args or args[0].startswith("-"):
            return bare and shape_.positionals(args) is not None
        return args[0] in allowed and shape_.positionals(args[1:]) is not None

    return check


_CHECKS: dict[str, Callable[[Sequence[str]], bool]] = {
    "branch": _listing(_BRANCH_LIST, ("-l", "--list")),
    "tag": _listing(_TAG_LIST, ("-l", "--list")),
    "config": _config,
    "stash": _subcommand_words(_LOG, ("list", "show"), bare=False),
    "reflog": _subcommand_words(_LOG, ("show",), bare=True),
    "worktree": _subcommand_words(shape("vz", "", "porcelain verbose"), ("list",), bare=False),
    "remote": _subcommand_words(shape("v", "", "verbose push all"), ("get-url",), bare=True),
}


def git_shape(subcommand: str) -> Shape | None:
    """The allow list of a git subcommand's options (None: not a read-only one)."""
    return _SUBCOMMANDS.get(subcommand)


def git_concern(args: Sequence[str]) -> str | None:
    """Why `git ARGS` is not a read-only shape; None when it is one."""
    index = 0
    while index < len(args) and args[index].startswith("-"):
        if args[index] == "-C" and index + 1 < len(args):
            index += 2
        elif args[index] in _GLOBAL_FLAGS:
            index += 1
        else:
            return f"git {args[index]} is not known to keep git read-only"
    if index >= len(args):
        return "git without a subcommand"
    subcommand, rest = args[index], args[index + 1 :]
    check = _CHECKS.get(subcommand)
    if check is not None:
        if check(rest):
            return None
        return f"git {subcommand} {' '.join(rest[:2])} is not known to only read".rstrip()
    allowed = _SUBCOMMANDS.get(subcommand)
    if allowed is None:
        return f"git {subcommand} is not a known read-only git command"
    if allowed.positionals(rest) is None:
        bad = next((a for a in rest if a.startswith("-")), "")
        return f"git {subcommand} {bad} is not known to keep it read-only"
    return None
