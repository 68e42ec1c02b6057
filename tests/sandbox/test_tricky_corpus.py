"""Issue 27's acceptance over the tricky command corpus (tests/policy/tricky_commands.py):

- readOnly mode, and the read-only sandbox (`shell.sandbox = "read-only"`): every command
  runs (or is refused) and none writes anything or runs anything outside the sandbox;
- the sandbox off and every approval denied: none of them runs, so none changes anything.
  That run happens inside an outer bubblewrap of the test's own (read-only machine, no
  network, no capabilities), so a command wrongly let through cannot do harm here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.policy.tricky_commands import commands

pytestmark = pytest.mark.timeout(600)

REPO = Path(__file__).resolve().parents[2]

# Commands the classifier takes for plain reads although they write or run something:
# with the sandbox off they would run. The classifier of issue 27 (bash grammar, allow
# lists) left none; the test fails when an entry here passes, so the set cannot hide a
# command it no longer needs.
KNOWN_CLASSIFIER_GAPS: frozenset[str] = frozenset()


def _under_tmp(path: Path) -> bool:
    return path.resolve().is_relative_to("/tmp")


def run_corpus(
    settings: dict[str, Any], base: Path, outer_bwrap: str | None
) -> list[dict[str, Any]]:
    base.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "tests.sandbox.corpus_runner", json.dumps(settings), str(base)]
    env = {
        **os.environ,
        "TOOLHOST_STATE_DIR": str(base / "state"),
        "XDG_CONFIG_HOME": str(base / "config"),
        "HOME": str(base / "home"),
    }
    if outer_bwrap is not None:
        keep = [
            p for p in (REPO, Path(sys.prefix), Path(os.path.realpath(sys.executable)).parent)
            if _under_tmp(p)
        ]  # fmt: skip
        binds = [arg for p in keep for arg in ("--ro-bind", str(p), str(p))]
        argv = [
            outer_bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--tmpfs", "/tmp", *binds, "--bind", str(base), str(base), "--unshare-net",
            "--unshare-pid", "--unshare-ipc", "--die-with-parent", "--new-session",
            "--cap-drop", "ALL", "--chdir", str(REPO), "--", *argv,
        ]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, env=env, timeout=540)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert [r["command"] for r in rows] == commands()
    return rows


def harmful(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        r["command"]: {"changed": r["changed"], "pwned": r["pwned"], "text": r["text"]}
        for r in rows
        if r["changed"] or r["pwned"]
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    "settings",
    [{"policy": {"mode": "readOnly"}}, {"shell": {"sandbox": "read-only"}}],
    ids=["readOnly-mode", "read-only-sandbox"],
)
def test_nothing_is_written_in_read_only(
    settings: dict[str, Any], bwrap: str, tmp_path: Path
) -> None:
    rows = run_corpus(settings, tmp_path / "corpus", outer_bwrap=None)
    assert harmful(rows) == {}
    # The sandbox held, not a refusal: (nearly) every command actually ran.
    ran = [r for r in rows if r["code"] is None]
    refused = {r["command"]: r["code"] for r in rows if r["code"] is not None}
    assert len(ran) >= len(rows) * 0.9, refused
    assert len(rows) >= 60


def test_with_the_sandbox_off_and_approvals_denied_none_runs(bwrap: str, tmp_path: Path) -> None:
    rows = run_corpus({"shell": {"sandbox": "off"}}, tmp_path / "corpus", outer_bwrap=bwrap)
    bad = harmful(rows)
    assert sorted(set(bad) - KNOWN_CLASSIFIER_GAPS) == [], bad
    assert sorted(KNOWN_CLASSIFIER_GAPS - set(bad)) == []
    # What ran was let through as a plain read; everything else asked and was denied.
    for row in rows:
        if row["code"] is not None:
            assert row["code"].startswith("permission."), row
            assert row["prompts"], row
