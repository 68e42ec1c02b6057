"""`toolhost call` as a person at a terminal meets it: each process runs in a real
pseudo-terminal (stdin, stdout and stderr on it, as in a shell), the test types answers
when the prompt shows, and what the terminal showed is saved under test-artifacts/cli/
(read them as a user would).

The `rm -rf /` prompt is only ever given answers that cannot allow it (a typo, then n)."""

from __future__ import annotations

import json
import os
import pty
import select
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).parents[2]
ARTIFACTS = REPO / "test-artifacts" / "cli"
TOOLHOST = [sys.executable, "-m", "lsp_server"]

pytestmark = pytest.mark.slow


class Transcript:
    def __init__(self, text: str, returncode: int) -> None:
        self.text = text
        self.returncode = returncode


def at_terminal(
    name: str, cwd: Path, state: Path, *args: str, answers: tuple[tuple[str, str], ...] = ()
) -> Transcript:
    """`toolhost call ARGS` on a terminal; each (shown, typed): once `shown` is on the screen
    (after what was typed before), type `typed` and Enter. The screen is saved as NAME.txt."""
    master, slave = pty.openpty()
    child = subprocess.Popen(
        [*TOOLHOST, "call", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=cwd,
        env={**os.environ, "TOOLHOST_STATE_DIR": str(state), "TERM": "dumb"},
        start_new_session=True,
    )
    os.close(slave)
    seen = b""
    pending = list(answers)
    mark = 0  # what was on the screen when the last answer was typed
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # the child closed the terminal
                    data = b""
                if not data:
                    break
                seen += data
            if pending and pending[0][0].encode() in seen[mark:]:
                typed = pending.pop(0)[1]
                mark = len(seen)
                os.write(master, typed.encode() + b"\n")
            elif not ready and child.poll() is not None:
                break
        if child.poll() is None:  # still waiting for an answer nobody will type
            child.kill()
        returncode = child.wait()
    finally:
        os.close(master)
        if child.poll() is None:
            child.kill()
            child.wait()
    text = seen.decode("utf-8", "replace").replace("\r\n", "\n")
    command = " ".join(["toolhost", "call", *(repr(a) if " " in a else a for a in args)])
    save(f"{name}.txt", f"$ {command}\n{text}\n[exit status {returncode}]\n")
    assert not pending, f"never shown: {pending[0][0]!r}\n{text}"
    return Transcript(text, returncode)


def save(name: str, text: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / name).write_text(text)


def quietly(cwd: Path, state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`toolhost call ARGS` with no terminal (a script)."""
    return subprocess.run(
        [*TOOLHOST, "call", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "TOOLHOST_STATE_DIR": str(state)},
        timeout=120,
        check=False,
    )


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)  # an empty marker is enough to find the workspace
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("x = 1\n")
    return root


WRITE = json.dumps({"path": "notes.txt", "content": "one\n"})


def test_a_typo_asks_again_saying_what_is_accepted(workspace: Path, state: Path) -> None:
    shown = at_terminal(
        "typo-asks-again",
        workspace,
        state,
        "write_file",
        WRITE,
        answers=(("Allow? [y/s/a/n]", "x"), ("Allow? [y/s/a/n]", "s 9"), ("Allow?", "n")),
    )
    assert "'x' is not an answer: type y, s, a or n" in shown.text
    assert "there is no rule 9: the rules are numbered 1 to 3" in shown.text
    assert shown.text.count("Allow? [y/s/a/n]") == 3
    assert "unrecognised" not in shown.text
    assert "Not run: you refused it. [permission.user_denied]" in shown.text
    assert shown.returncode == 1 and not (workspace / "notes.txt").exists()


def test_the_choices_and_rules_are_explained_in_words(workspace: Path, state: Path) -> None:
    command = json.dumps({"command": "npm test", "sandbox": "network"})
    shown = at_terminal(
        "choices-in-words", workspace, state, "bash", command, answers=(("Allow?", "n not now"),)
    )
    text = shown.text
    assert "What you can answer:" in text
    assert "   y           allow this call, this once" in text
    assert (
        "   s           allow `npm test` (this command exactly) for the rest of this session"
        in text
    )
    assert "`toolhost call --session cli` in this workspace" in text
    assert "   a           always allow `npm test` (this command exactly) in this workspace" in text
    assert "   n [reason]  refuse it" in text
    assert 'Not run: you refused it ("not now"). [permission.user_denied]' in text
    write = at_terminal(
        "rules-in-words", workspace, state, "write_file", WRITE, answers=(("Allow?", "n"),)
    )
    assert "   rule 1: write_file of notes.txt   [write_file(/notes.txt)]" in write.text
    assert "   rule 2: file edits of notes.txt   [Edit(/notes.txt)]" in write.text
    assert "   rule 3: every file edit   [Edit]" in write.text
    assert "   s N, a N    the same with rule N of the list below instead of rule 1" in write.text


def test_allowed_for_this_session_holds_for_later_calls_of_that_session(
    workspace: Path, state: Path
) -> None:
    shown = at_terminal(
        "session-kept", workspace, state, "write_file", WRITE, answers=(("Allow?", "s"),)
    )
    assert shown.returncode == 0, shown.text
    assert (workspace / "notes.txt").read_text() == "one\n"
    again = json.dumps({"path": "notes.txt", "content": "two\n"})
    # Later calls without a terminal: the same session needs no one to ask.
    assert quietly(workspace, state, "read_file", '{"path": "notes.txt"}').returncode == 0
    later = quietly(workspace, state, "write_file", again)
    assert later.returncode == 0, later.stdout + later.stderr
    assert (workspace / "notes.txt").read_text() == "two\n"
    [kept] = state.glob("cli-sessions/*/*/approvals.json")  # private, in toolhost's state
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    # Another session, or this one started afresh, is asked (and refused without a person).
    other, fresh = ["--session", "other"], ["--fresh"]
    for first, then in ((other, other), (fresh, [])):
        quietly(workspace, state, "read_file", '{"path": "notes.txt"}', *first)
        refused = quietly(workspace, state, "write_file", WRITE, *then)
        assert refused.stdout.startswith("Not run: write_file needs your approval"), first
    assert (workspace / "notes.txt").read_text() == "two\n"


def test_rm_rf_root_names_the_real_cause_and_offers_no_rule(workspace: Path, state: Path) -> None:
    command = json.dumps({"command": "rm -rf /"})
    shown = at_terminal(
        "rm-rf-root",
        workspace,
        state,
        "bash",
        command,
        # Only answers that cannot allow it: a typo (asked again), then n.
        answers=(("Allow? [y/n]", "x"), ("not an answer: type y or n", "n")),
    )
    text = " ".join(shown.text.split())  # the terminal wraps long lines
    assert f"`rm -rf /` deletes / recursively, which holds the whole workspace {workspace}" in text
    assert "does not stop reads" not in text and "is outside the workspace" not in text
    assert "bash(rm -rf /)" not in text
    assert "No rule can remember this call: it can only be allowed once, or refused." in text
    assert "Not run: you refused it. [permission.user_denied]" in text
    assert (workspace / "src" / "app.py").exists()


def test_text_for_a_person_not_the_model(workspace: Path, state: Path) -> None:
    """No terminal to ask: the person reads what happened and what to do; the model's
    recovery ("do not retry the same call") is in --json only."""
    refused = quietly(workspace, state, "bash", json.dumps({"command": "rm -rf /"}))
    assert refused.stdout.startswith("Not run: bash needs your approval: `rm -rf /` deletes")
    assert "do not retry" not in refused.stdout + refused.stderr
    assert "elicitation" not in refused.stdout
    save("no-terminal.txt", refused.stdout + refused.stderr)
    as_json = quietly(workspace, state, "bash", json.dumps({"command": "rm -rf /"}), "--json")
    assert "do not retry the same call" in json.loads(as_json.stdout)["error"]["message"]


def test_a_call_from_a_sub_folder_uses_the_enclosing_workspace(
    workspace: Path, state: Path
) -> None:
    done = quietly(workspace / "src", state, "read_file", '{"path": "src/app.py"}')
    assert done.returncode == 0, done.stdout + done.stderr
    assert "x = 1" in done.stdout
    assert done.stderr == (
        f"toolhost: workspace {workspace} (it holds .git); paths are relative to it, "
        "not to the current folder src/\n"
    )
    as_json = json.loads(quietly(workspace / "src", state, "ls", "{}", "--json").stdout)
    assert as_json["root"] == str(workspace)
    save("sub-folder.txt", done.stderr + done.stdout)


def test_a_background_job_is_refused_on_a_terminal_too(workspace: Path, state: Path) -> None:
    command = json.dumps({"command": "sleep 30", "run_in_background": True})
    shown = at_terminal("background-job", workspace, state, "bash", command, "--yes")
    assert shown.returncode == 2
    assert "not run: this would start a background job" in shown.text
    assert "Started background job" not in shown.text


def test_tools_name_prints_the_arguments(tmp_path: Path) -> None:
    def toolhost(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*TOOLHOST, *args], capture_output=True, text=True, cwd=tmp_path, timeout=120
        )

    read_file = toolhost("tools", "read_file")
    assert read_file.returncode == 0, read_file.stderr
    lines = read_file.stdout.splitlines()
    assert lines[0] == "read_file  (read-only; surfaces: core, full)"
    assert "  path*                  string" in lines
    assert "  limit                  integer, >= 1; default 2000" in lines
    assert '  intent                 one of "inspect", "range", "full"' in lines
    assert lines[-1] == 'Call it: toolhost call read_file \'{"path": "<path>"}\''
    listing = toolhost("tools", "--surface", "full").stdout
    assert (
        "  edit_file        writes     (path*, old_string*, new_string*, replace_all)  " in listing
    )
    unknown = toolhost("tools", "reed_file")
    assert unknown.returncode == 2 and "there is no tool 'reed_file'" in unknown.stderr
    helped = toolhost("call", "--help").stdout
    for option in ("--root", "--session", "--fresh", "--surface", "--yes", "--json"):
        assert option in helped
    assert "nearest folder up from here holding .git or" in " ".join(helped.split())
    save("tools-read_file.txt", read_file.stdout)
    save("call-help.txt", helped)
