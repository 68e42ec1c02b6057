"""The tricky command corpus (issue 27): commands that look like reads and are not.

Each entry is a command line that a careless classifier could take for a plain read but
that writes a file, deletes one, runs another program or evaluates code. The classifier
(`policy/readonly_commands.py`) must call none of them a plain read; the sandbox corpus
runner executes them in readOnly mode and checks that nothing was written and nothing ran.

Conventions, so a runner can check effects without knowing each command:
- every command runs in a scratch workspace that is a git repository with one commit
  (`git init`, a file `a.txt` holding "a\\n", committed) and an untracked `x` file;
- a write the command could make lands in a file whose name starts with `PWNED` (or
  deletes `a.txt` / `x`), and a program it could run is `touch PWNED...`;
- nothing here talks to the network.

`CATEGORY` groups them for reports: quoting, abbreviation, double-dash, expansion,
git-config, git-remote, find, sort, rg, git-option, other.
"""

from __future__ import annotations

from typing import NamedTuple


class Tricky(NamedTuple):
    command: str
    category: str
    why: str


TRICKY_COMMANDS: tuple[Tricky, ...] = (
    # --- quoting: bash decodes the word, a naive lexer does not --------------------------
    Tricky("find . $'-delete'", "quoting", "ANSI-C quoting spells -delete"),
    Tricky("find . $'\\x2ddelete'", "quoting", "hex escape spells -delete"),
    Tricky("find . $'\\055delete'", "quoting", "octal escape spells -delete"),
    Tricky("find . $'\\u002ddelete'", "quoting", "unicode escape spells -delete"),
    Tricky('find . $"-delete"', "quoting", "locale quoting spells -delete"),
    Tricky("find . -del''ete", "quoting", "empty quotes inside the word"),
    Tricky("find . -de\\lete", "quoting", "a backslash inside the word"),
    Tricky('find . "-"delete', "quoting", "quoted and bare parts of one word"),
    Tricky("rg $'--pre=touch' x .", "quoting", "ANSI-C quoting hides --pre"),
    Tricky("rg --p'r'e=touch x .", "quoting", "quotes inside the option name"),
    Tricky("git log $'--output=PWNED1'", "quoting", "ANSI-C quoting hides --output"),
    Tricky("sort $'-o' PWNED2 a.txt", "quoting", "ANSI-C quoting hides -o"),
    Tricky("sed -$'i' s/a/b/ a.txt", "quoting", "ANSI-C quoting hides -i"),
    Tricky("s''ed -i s/a/b/ a.txt", "quoting", "a quoted program name is still sed"),
    # --- abbreviations: getopt_long and git accept unambiguous prefixes ------------------
    Tricky("git log --out=PWNED3", "abbreviation", "--out abbreviates --output"),
    Tricky("git diff --outp=PWNED4", "abbreviation", "--outp abbreviates --output"),
    Tricky("git show --outpu=PWNED5 HEAD", "abbreviation", "--outpu abbreviates --output"),
    Tricky("sort --out=PWNED6 a.txt", "abbreviation", "--out abbreviates --output"),
    Tricky("sort --outp PWNED7 a.txt", "abbreviation", "--outp abbreviates --output"),
    Tricky("sort --compress-prog=touch a.txt", "abbreviation", "abbreviates --compress-program"),
    Tricky("git grep --open=touch a", "abbreviation", "abbreviates --open-files-in-pager"),
    Tricky("git branch --set-up=x", "abbreviation", "abbreviates --set-upstream-to"),
    Tricky("git branch --del main", "abbreviation", "abbreviates --delete"),
    Tricky("date --se=2020-01-01", "abbreviation", "abbreviates --set"),
    # --- `--`: find reads its expression after it ----------------------------------------
    Tricky("find -- . -name a.txt -delete", "double-dash", "find's expression follows --"),
    Tricky("find -- . -exec touch PWNED8 ';'", "double-dash", "find -exec after --"),
    Tricky("find -L -- . -fprint PWNED9", "double-dash", "find -fprint writes a file"),
    # --- expansions bash evaluates -------------------------------------------------------
    Tricky(
        "echo 'a[$(touch PWNED10)]' >/dev/null; echo $(( _ ))",
        "expansion",
        "arithmetic evaluates $_ recursively, its subscript runs a command",
    ),
    Tricky(
        "x='a[$(touch PWNED11)]'; echo ${x@P}",
        "expansion",
        "the @P transformation expands prompt strings, running $(...)",
    ),
    Tricky(
        "x='$(touch PWNED12)'; echo ${x@P}",
        "expansion",
        "prompt expansion runs a command substitution",
    ),
    Tricky(
        "a='x[$(touch PWNED13)]'; echo ${a:a:1}",
        "expansion",
        "a substring offset is arithmetic and evaluates $a",
    ),
    Tricky(
        "y='x[$(touch PWNED14)]'; [[ $y -eq 0 ]]",
        "expansion",
        "[[ -eq ]] evaluates its operands as arithmetic",
    ),
    Tricky("ls $(touch PWNED15)", "expansion", "command substitution"),
    Tricky("ls `touch PWNED16`", "expansion", "backtick substitution"),
    Tricky("cat <(touch PWNED17)", "expansion", "process substitution"),
    Tricky("ls >(touch PWNED18)", "expansion", "output process substitution"),
    Tricky("echo $[ a[$(touch PWNED19)] ]", "expansion", "old-style arithmetic"),
    Tricky("cat a.txt > PWNED20", "expansion", "output redirection"),
    Tricky("ls &>PWNED21", "expansion", "&> redirection"),
    Tricky("ls >| PWNED22", "expansion", "clobbering redirection"),
    Tricky("cat a.txt 1<>PWNED23", "expansion", "read-write redirection creates the file"),
    Tricky("printf -v 'a[$(touch PWNED24)]' x", "expansion", "printf -v evaluates a subscript"),
    Tricky("test -v 'a[$(touch PWNED25)]'", "expansion", "test -v evaluates a subscript"),
    Tricky("f() { touch PWNED26; }; f", "expansion", "a function named like nothing"),
    Tricky("X=PWNED27; touch $X", "expansion", "a variable as an argument of a writer"),
    # --- git configuration set inline or on the command line -----------------------------
    Tricky("git config user.name x --get", "git-config", "git stops at the key: it is a set"),
    Tricky("git config core.pager touch", "git-config", "sets a program"),
    Tricky("git config --add core.pager x", "git-config", "adds a key"),
    Tricky("git config --unset user.name", "git-config", "removes a key"),
    Tricky("git config alias.x '!touch PWNED28'", "git-config", "sets an alias"),
    Tricky("git -c core.pager='touch PWNED29' log", "git-config", "an inline pager"),
    Tricky("git -c alias.l='!touch PWNED30' l", "git-config", "an inline alias"),
    Tricky("git -c diff.external=touch diff", "git-config", "an inline external diff"),
    Tricky("git -c core.fsmonitor='touch PWNED31' status", "git-config", "inline fsmonitor"),
    Tricky("git --config-env=core.pager=X log", "git-config", "config from the environment"),
    Tricky("GIT_PAGER='touch PWNED32' git log", "git-config", "pager from the environment"),
    Tricky("GIT_EXTERNAL_DIFF=touch git diff", "git-config", "external diff from the env"),
    # --- git remotes ---------------------------------------------------------------------
    Tricky(
        "git -c protocol.ext.allow=always ls-remote 'ext::sh -c touch% PWNED33'",
        "git-remote",
        "ext:: remote runs a command",
    ),
    Tricky(
        "git -c protocol.ext.allow=always remote show 'ext::sh -c touch% PWNED34'",
        "git-remote",
        "remote show contacts an ext:: remote",
    ),
    Tricky(
        "git -c protocol.allow=always fetch 'ext::sh -c touch% PWNED35'",
        "git-remote",
        "fetch from an ext:: remote",
    ),
    Tricky("git remote add evil 'ext::sh -c touch% PWNED36'", "git-remote", "adds a remote"),
    Tricky("git remote set-url origin x", "git-remote", "changes a remote"),
    Tricky("git remote show origin", "git-remote", "contacts a remote (ssh, helpers)"),
    # --- find options that write or run programs -----------------------------------------
    Tricky("find . -name x -delete", "find", "deletes"),
    Tricky("find . -exec touch PWNED37 \\;", "find", "runs a program"),
    Tricky("find . -execdir touch PWNED38 +", "find", "runs a program"),
    Tricky("find . -ok touch PWNED39 \\;", "find", "runs a program after asking"),
    Tricky("find . -fprint PWNED40", "find", "writes a file"),
    Tricky("find . -fprintf PWNED41 '%p'", "find", "writes a file"),
    Tricky("find . -fls PWNED42", "find", "writes a file"),
    Tricky("find . -fprint0 PWNED43", "find", "writes a file"),
    Tricky("find . \\( -name a -o -delete \\)", "find", "-delete inside parentheses"),
    Tricky("find . ! -name a -delete", "find", "-delete after a negation"),
    # --- sort, rg, other readers ---------------------------------------------------------
    Tricky("sort -o PWNED44 a.txt", "sort", "writes its output to a file"),
    Tricky("sort -uo PWNED45 a.txt", "sort", "-o inside a cluster"),
    Tricky("sort --output=PWNED46 a.txt", "sort", "writes its output to a file"),
    Tricky("sort --compress-program=touch -S 1 a.txt", "sort", "runs a program"),
    Tricky("rg --pre touch x", "rg", "runs a preprocessor on every file"),
    Tricky("rg --pre=touch x", "rg", "runs a preprocessor on every file"),
    Tricky("rg -z x", "rg", "runs decompression programs"),
    Tricky("rg --search-zip x", "rg", "runs decompression programs"),
    Tricky("tree -o PWNED47", "other", "tree writes its listing to a file"),
    Tricky("file -C -m PWNED48", "other", "file compiles a magic file"),
    Tricky("sed -i s/a/b/ a.txt", "other", "edits in place"),
    Tricky("sed -n 'w PWNED49' a.txt", "other", "sed w writes a file"),
    Tricky("sed 's/a/b/w PWNED50' a.txt", "other", "s///w writes a file"),
    Tricky("sed '1e touch PWNED51' a.txt", "other", "sed e runs a command"),
    Tricky("date -s 2020-01-01", "other", "sets the clock"),
    Tricky("tee PWNED52 < a.txt", "other", "tee writes"),
    Tricky("cat a.txt | sh", "other", "pipes into a shell"),
    Tricky("xargs touch < a.txt", "other", "xargs runs a program"),
    Tricky("env touch PWNED53", "other", "env runs a program"),
    Tricky("command touch PWNED54", "other", "command runs a program"),
    Tricky("\\rm a.txt", "other", "a backslash before the program name"),
    Tricky("/bin/rm a.txt", "other", "a program by path"),
    Tricky("less a.txt", "other", "less can run a shell (!) and an editor (v)"),
    # --- git options that write or run programs ------------------------------------------
    Tricky("git log --output=PWNED55", "git-option", "writes the log to a file"),
    Tricky("git shortlog --output=PWNED56 HEAD", "git-option", "shortlog writes a file"),
    Tricky("git rev-list --output=PWNED57 HEAD", "git-option", "rev-list writes a file"),
    Tricky("git stash show --output=PWNED58", "git-option", "stash show writes a file"),
    Tricky("git reflog --output=PWNED59", "git-option", "reflog writes a file"),
    Tricky("git reflog expire --all", "git-option", "expires the reflog"),
    Tricky("git reflog delete HEAD@{0}", "git-option", "deletes a reflog entry"),
    Tricky("git diff --ext-diff", "git-option", "runs the configured external diff"),
    Tricky("git log -p --textconv", "git-option", "runs textconv filters"),
    Tricky("git cat-file --filters HEAD:a.txt", "git-option", "runs filters"),
    Tricky("git grep -O'touch PWNED60' a", "git-option", "opens matches in a program"),
    Tricky("git grep --open-files-in-pager=touch a", "git-option", "opens a pager program"),
    Tricky("git branch PWNED61", "git-option", "creates a branch"),
    Tricky("git branch -D master", "git-option", "deletes a branch"),
    Tricky("git tag PWNED62", "git-option", "creates a tag"),
    Tricky("git stash", "git-option", "stashes (changes the work tree)"),
    Tricky("git stash drop", "git-option", "drops a stash"),
    Tricky("git worktree add PWNED63", "git-option", "adds a worktree"),
    Tricky("git status --porcelain > PWNED64", "git-option", "a redirection"),
    Tricky("git diff --no-index a.txt /etc/passwd --output=PWNED65", "git-option", "--output"),
    Tricky("git format-patch -1", "git-option", "writes patch files"),
    Tricky("git archive -o PWNED66.tar HEAD", "git-option", "writes an archive"),
    Tricky("git bundle create PWNED67 HEAD", "git-option", "writes a bundle"),
    # --- issue 41: output operands and scripts bundled with their option -------------------
    Tricky("uniq a.txt PWNED70", "other", "uniq's second operand is its output file"),
    Tricky("uniq -c -- a.txt PWNED71", "other", "the output operand after --"),
    Tricky("sed -ne 'w PWNED72' p", "other", "-ne takes the script: p is a file, not it"),
    Tricky("sed -e'w PWNED73' p", "other", "a script attached to -e"),
    Tricky("sed -nEe 's/a/b/w PWNED74' p", "other", "the w flag of s, bundled"),
    Tricky("/usr/bin/tou[c]h PWNED75", "other", "a pattern in the program name"),
)


def commands() -> list[str]:
    """The command lines alone, in order."""
    return [entry.command for entry in TRICKY_COMMANDS]
