"""The read-only programs and, for each, the command shapes that keep it read-only.

`read_shape_concern(words)` says why one simple command (program first, every word a
literal) is not a plain read, or None when its program is in the table and every option
it uses is in the program's allow list (option_shapes.py) and its arguments have an
allowed shape (`date +FORMAT` only: `date MMDDhhmm` sets the clock). Programs whose
options all only change what is printed (`echo`, `ps`) take any words. find's expression
and sed's scripts are read by their own small parsers; git has its own table
(git_reads.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from lsp_server.policy.commands.find_reads import find_concern
from lsp_server.policy.commands.git_reads import git_concern, git_shape
from lsp_server.policy.commands.option_shapes import Shape, shape
from lsp_server.policy.commands.options import git_subcommand

Check = Callable[[Sequence[str]], str | None]
"""Why the arguments are not a read-only shape; None when they are."""

SHAPES: dict[str, Shape] = {
    "ls": shape(
        "aAbBcCdfFgGhHiklLmnNopqQrRsStuUvxXZ1",
        "IwT",
        "all almost-all author escape directory file-type full-time human-readable si inode"
        " dereference dereference-command-line dereference-command-line-symlink-to-dir"
        " numeric-uid-gid literal hide-control-chars show-control-chars quote-name recursive"
        " reverse size group-directories-first no-group context zero kibibytes ignore-backups",
        "block-size format hide ignore indicator-style quoting-style sort time time-style"
        " tabsize width",
        "color colour hyperlink classify",
    ),
    "cat": shape(
        "AbeEnstTuv",
        long="show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting",
    ),
    "head": shape("qvz", "cn", "quiet silent verbose zero-terminated", "lines bytes", numeric=True),
    "tail": shape(
        "qvzfF",
        "cns",
        "quiet silent verbose zero-terminated retry",
        "lines bytes pid sleep-interval max-unchanged-stats",
        "follow",
        numeric=True,
    ),
    "wc": shape("clmwL", long="bytes chars lines words max-line-length", long_optional="total"),
    "pwd": shape("LP"),
    "which": shape("as"),
    "type": shape("afptP"),
    # file: not -C (compiles a magic file next to it), -f/--files-from (names files its
    # words do not show).
    "file": shape(
        "bcEhiLkNnrsvzZ0S",
        "Fme",
        "brief mime mime-type mime-encoding keep-going no-dereference dereference raw"
        " uncompress uncompress-noreport no-sandbox print0 no-buffer special-files extension"
        " apple",
        "separator magic-file exclude exclude-quiet",
    ),
    "stat": shape("LftZ", "c", "dereference file-system terse", "format printf cached"),
    "du": shape(
        "0abcDhHklLmPsSx",
        "dBtX",
        "null all apparent-size bytes total dereference-args human-readable inodes count-links"
        " dereference no-dereference separate-dirs si summarize one-file-system",
        "block-size max-depth threshold time-style exclude exclude-from",
        "time",
    ),
    "df": shape(
        "ahHiklPTv",
        "Btx",
        "all human-readable si inodes local portability print-type total no-sync sync",
        "block-size type exclude-type",
        "output",
    ),
    "diff": shape(
        "abBcdeEfinNpqrsStTuwyZ",
        "CDFILSUWxX",
        "brief report-identical-files recursive new-file unidirectional-new-file side-by-side"
        " ignore-case ignore-all-space ignore-space-change ignore-blank-lines"
        " ignore-tab-expansion ignore-trailing-space ignore-file-name-case text expand-tabs"
        " initial-tab normal strip-trailing-cr suppress-common-lines left-column minimal"
        " speed-large-files ed rcs show-c-function no-dereference",
        "label exclude exclude-from width starting-file show-function-line ignore-matching-lines"
        " ifdef tabsize horizon-lines",
        "unified context color",
    ),
    "cmp": shape("blsv", "in", "print-bytes verbose quiet silent", "ignore-initial bytes"),
    "basename": shape("az", "s", "multiple zero", "suffix"),
    "dirname": shape("z", long="zero"),
    "realpath": shape(
        "eEmLPqsz",
        long="canonicalize-existing canonicalize-missing logical physical quiet strip"
        " no-symlinks zero",
        long_valued="relative-to relative-base",
    ),
    "readlink": shape(
        "efmnqsvz",
        long="canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent"
        " verbose zero",
    ),
    "whoami": shape(),
    "id": shape("agGnruzZ", long="context group groups name real user zero"),
    "uname": shape(
        "asnrvmpio",
        long="all kernel-name nodename kernel-release kernel-version machine processor"
        " hardware-platform operating-system",
    ),
    "cut": shape(
        "nsz",
        "bcdf",
        "complement only-delimited zero-terminated",
        "bytes characters delimiter fields output-delimiter",
    ),
    "tr": shape("cCdst", long="complement delete squeeze-repeats truncate-set1"),
    "nl": shape("p", "bdfhilnsvw"),
    "od": shape(
        "bcdfiloxsv",
        "AjNStw",
        "output-duplicates traditional",
        "address-radix skip-bytes read-bytes strings format width",
        "endian",
    ),
    "hexdump": shape("bcCdoxv", "efnsL"),
    "column": shape("tnexJ", "cso", "table fillrows json", "separator output-separator"),
    "printenv": shape("0", long="null"),
    "nproc": shape(long="all", long_valued="ignore"),
    "free": shape(
        "bkmgthlwv",
        "sc",
        "bytes kilo mega giga tera peta kibi mebi gibi tebi pebi human wide total lohi si"
        " committed",
        "seconds count",
    ),
    "uptime": shape("ps", long="pretty since"),
    "seq": shape("w", "fs", "equal-width", "format separator", numeric=True),
    **{
        name: shape(
            "bctwz",
            long="binary check tag text zero ignore-missing quiet status strict warn",
        )
        for name in ("sha256sum", "sha1sum", "sha512sum", "md5sum", "b2sum")
    },
    "cksum": shape(long="raw base64 untagged"),
    "comm": shape(
        "123z",
        long="check-order nocheck-order total zero-terminated",
        long_valued="output-delimiter",
    ),
    "rev": shape(),
    "fold": shape("bs", "w", "bytes spaces", "width"),
    # uniq: one operand only (`uniq IN OUT` creates or truncates OUT).
    "uniq": shape(
        "cdDiuz",
        "fsw",
        "count repeated unique ignore-case zero-terminated",
        "skip-fields skip-chars check-chars",
        "all-repeated group",
        max_operands=1,
    ),
    # sort: not -o/--output (writes), -T/--temporary-directory, --compress-program (runs
    # a program), --files0-from and --random-source (read files the words do not name).
    "sort": shape(
        "bdfgiMhnRrVcCsuz",
        "ktS",
        "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort"
        " ignore-nonprinting month-sort human-numeric-sort numeric-sort random-sort reverse"
        " version-sort stable unique zero-terminated debug merge",
        "key field-separator buffer-size parallel batch-size",
        "check sort",
    ),
    # tree: not -o (writes the listing to a file) or -R (writes 00Tree.html files).
    "tree": shape(
        "adlfxpsughDFrtvUNQiCnAS",
        "LPIH",
        "noreport inodes device dirsfirst filesfirst prune matchdirs ignore-case du si",
        "filelimit timefmt sort charset",
    ),
    # rg: not --pre (runs a program on every file; --pre-glob only narrows it), not
    # -z/--search-zip (run decompression programs).
    "rg": shape(
        "iSswxvnNlcoFHhLuUqa0bpI",
        "eftTgmABCMjEr",
        "ignore-case smart-case case-sensitive word-regexp line-regexp invert-match"
        " line-number no-line-number files-with-matches files-without-match count"
        " count-matches only-matching fixed-strings with-filename no-filename follow hidden"
        " no-hidden no-ignore no-ignore-vcs no-ignore-dot no-ignore-parent no-ignore-global"
        " no-ignore-exclude no-ignore-files unrestricted multiline multiline-dotall pcre2"
        " text null files json vimgrep heading no-heading column no-column stats trim"
        " sort-files quiet no-messages type-list pretty byte-offset crlf one-file-system"
        " max-columns-preview no-config passthru binary no-binary glob-case-insensitive"
        " include-zero null-data no-unicode no-follow line-buffered block-buffered",
        "regexp file type type-not glob iglob max-count after-context before-context context"
        " max-columns threads encoding max-depth sort sortr color colors type-add max-filesize"
        " field-match-separator field-context-separator path-separator context-separator"
        " replace engine dfa-size-limit regex-size-limit pre-glob",
    ),
    "grep": (
        _grep := shape(
            "EFGPiyvwxcLlqsbHhnTZzaIrRUo",
            "efmABCdD",
            "extended-regexp fixed-strings basic-regexp perl-regexp ignore-case no-ignore-case"
            " invert-match word-regexp line-regexp count files-with-matches"
            " files-without-match quiet silent no-messages byte-offset with-filename"
            " no-filename line-number initial-tab null null-data text recursive"
            " dereference-recursive only-matching line-buffered",
            "regexp file max-count after-context before-context context label include exclude"
            " exclude-dir exclude-from binary-files devices directories",
            "color colour",
        )
    ),
    "egrep": _grep,
    "fgrep": _grep,
    "jq": shape(
        "nrjacsSCMeRh0",
        "fL",
        "null-input raw-input slurp compact-output raw-output join-output ascii-output"
        " sort-keys color-output monochrome-output tab exit-status seq stream"
        " stream-errors raw-output0 args jsonargs",
        "from-file indent",
    ),
}

_SED_SCRIPT = re.compile(
    r"(?:\d+(?:,\d+|,\$)?|\$|/[^/]*/)?\s*[pdq]"  # 5p, 1,10p, $p, /re/d, q
    r"|s(?P<d>[/|#,:])(?:(?!(?P=d)).)*(?P=d)(?:(?!(?P=d)).)*(?P=d)[gpiI0-9]*"  # s/a/b/g
)
_SED = shape(
    "nErsuz",
    "e",
    "quiet silent regexp-extended separate unbuffered null-data posix debug sandbox",
    "expression line-length",
)


def _sed(args: Sequence[str]) -> str | None:
    """Printing and substituting scripts only: no `w`, `e` or `r` commands (write,
    execute, read in), no -i (in place), no -f (a script from a file). The scripts are
    the values of -e as sed reads them (`-ne 'w f'` and `-e'w f'` too), else the first
    operand."""
    parsed = _SED.parse(args)
    if parsed is None:
        return "sed with an option that is not known to keep it read-only"
    positional, values = parsed
    scripts = [value for option, value in values if option in ("e", "expression")]
    if not scripts and positional:
        scripts.append(positional[0])
    parts = [p.strip() for s in scripts for p in re.split(r"[;\n]", s) if p.strip()]
    if not parts or not all(_SED_SCRIPT.fullmatch(p) for p in parts):
        return "a sed script that may write, run or read in files"
    return None


def _jq(args: Sequence[str]) -> str | None:
    """jq's filters only print; `import`/`include` read module and JSON files its words
    do not name (from ~/.jq, -L folders)."""
    if any(re.search(r"\b(import|include)\b", a) for a in args):
        return "a jq program that imports modules or data files"
    found = SHAPES["jq"].positionals(args)
    if found is None:
        bad = next((a for a in args if a.startswith("-") and a != "-"), "")
        return f"jq {bad} is not known to keep jq read-only"
    return None


_DATE = shape(
    "uR",
    "dfr",
    "utc universal rfc-email debug",
    "date file reference rfc-3339",
    "iso-8601",
)


def _date(args: Sequence[str]) -> str | None:
    found = _DATE.positionals([a for a in args if not (a.startswith("-I") and len(a) <= 12)])
    if found is None or any(not word.startswith("+") for word in found):
        return "date with an option or argument that may set the clock"
    return None


def _printf(args: Sequence[str]) -> str | None:
    # printf's only option is -v NAME, which assigns (and evaluates NAME's subscript).
    if args and args[0].startswith("-") and args[0] != "--":
        return f"printf {args[0]} assigns a variable (its subscript is evaluated as code)"
    return None


def _test(args: Sequence[str]) -> str | None:
    found = next((a for a in args if a in ("-v", "-R")), None)
    if found is not None:
        return f"test {found} evaluates a variable's subscript as code"
    return None


def _any(args: Sequence[str]) -> str | None:
    return None


def _ps(args: Sequence[str]) -> str | None:
    # BSD-style `e` (`ps e`, `ps axeww`) prints every process's environment: the
    # server's own credentials included.
    if any(not a.startswith("-") and "e" in a for a in args):
        return "ps e prints the environment of processes"
    return None


CHECKS: dict[str, Check] = {
    "sed": _sed,
    "jq": _jq,
    "find": find_concern,
    "date": _date,
    "printf": _printf,
    "test": _test,
    "[": _test,
    "git": git_concern,
    # Options of these only change what is printed; their words are not files.
    "echo": _any,
    "true": _any,
    "false": _any,
    "ps": _ps,
}


# Short options of read-only programs whose value is a file they read.
_FILE_OPTIONS = {
    "date": "fr",
    "grep": "f",
    "egrep": "f",
    "fgrep": "f",
    "rg": "f",
    "jq": "fL",
    "file": "m",
    "hexdump": "f",
    "du": "X",
    "diff": "X",
}


def file_option_values(words: Sequence[str]) -> list[str]:
    """The files a read-only program's short options name as it reads them, attached
    values too (`date -f.env`, `grep -f.env`); [] for other programs."""
    program, args = words[0], words[1:]
    letters = _FILE_OPTIONS.get(program, "")
    known = _DATE if program == "date" else SHAPES.get(program)
    if program == "git":  # `git grep -f.env`
        found = git_subcommand(args)
        if found is not None and found[0] == "grep":
            letters, known, args = "f", git_shape("grep"), found[1]
    parsed = known.parse(args) if known is not None and letters else None
    return [value for option, value in parsed[1] if option in letters] if parsed else []


_SED_ADDRESS = r"(?:\d+|\$|/(?:[^/\\]|\\.)*/)(?:,(?:\d+|\$|/(?:[^/\\]|\\.)*/))?!?"
# A sed command that runs (`e`), writes (`w`, `W`) or reads in (`r`, `R`) a file.
_SED_FILE_COMMAND = re.compile(rf"(?:^|[;\n{{}}])\s*(?:{_SED_ADDRESS})?\s*[ewWrR](?:\s|$)")
# An `s` command whose flags run the result (`e`) or write it (`w`).
_SED_S_FLAGS = re.compile(
    rf"(?:^|[;\n{{}}])\s*(?:{_SED_ADDRESS})?\s*s(?P<d>[^\s\\])(?:(?!(?P=d)).)*(?P=d)"
    r"(?:(?!(?P=d)).)*(?P=d)[a-zA-Z0-9]*[ew]",
    re.DOTALL,
)
_AWK = frozenset(("awk", "gawk", "mawk", "nawk"))


def script_hazard(words: Sequence[str]) -> str | None:
    """A sed or awk program among `words` (one simple command) that runs commands or
    writes files: `sed -n 'e touch f'`, `sed 's/a/b/w f'`, `awk '{print > "f"}'`. A
    `prefix:*` allow rule (`bash(sed -n:*)`) does not cover it (policy/rules.py)."""
    program, args = words[0] if words else "", words[1:]
    if program == "sed":
        # Each word, and what follows `-e` in a bundle (`-ne'w f'`) or `--expression=`.
        scripts = [*args, *(a.split("=", 1)[1] for a in args if a.startswith("--") and "=" in a)]
        scripts += [a[a.index("e") + 1 :] for a in args if a[:1] == "-" != a[1:2] and "e" in a]
        for script in scripts:
            if _SED_FILE_COMMAND.search(script) or _SED_S_FLAGS.search(script):
                return f"the sed script {script[:40]!r} runs commands or writes files"
    if program in _AWK and any(re.search(r"print[f]?[^;{}]*[>|]", a) for a in args):
        return f"the {program} program prints into a file or a command"
    return None


def read_shape_concern(words: Sequence[str]) -> str | None:
    """Why this simple command is not a read-only shape; None when it is one."""
    program, args = words[0], words[1:]
    check = CHECKS.get(program)
    if check is not None:
        return check(args)
    allowed = SHAPES.get(program)
    if allowed is None:
        return f"{program} is not a known read-only program"
    if allowed.positionals(args) is None:
        bad = next((a for a in args if a.startswith("-") and a != "-"), "")
        return f"{program} {bad} is not known to keep {program} read-only"
    return None
