"""Commands that talk back: a prompt returns at once as a job, job_input answers it, text
typed into an interpreter is judged like a command, terminal jobs show their screen.
Real programs, the real policy and the real bubblewrap sandbox (the default), in process."""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from lsp_server.compose import build_runtime
from lsp_server.config.tree import Config, structure_config
from lsp_server.home.dirs import Dirs
from lsp_server.protocol import ApproveParams
from lsp_server.runtime.dispatch import Runtime
from lsp_server.sandbox.platforms import find_backend
from lsp_server.shell.jobs import JobManager
from tests.conftest import missing_part, require_program
from tests.helpers import call_tool, text_of

pytestmark = pytest.mark.timeout(120)

Answers = Callable[[ApproveParams], str]


def _job_id(text: str) -> str:
    found = re.search(r'job_input \{"job_id": "(bash-\d+)"', text)
    assert found, text
    return found.group(1)


@contextlib.asynccontextmanager
async def policy_runtime(
    tmp_path: Path, answer: Answers, settings: dict[str, Any] | None = None
) -> AsyncIterator[tuple[Runtime, Path, list[ApproveParams]]]:
    """The runtime with the real policy; `answer` decides every prompt."""
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    problems: list[str] = []
    config = structure_config(settings or {}, problems, Config())
    assert not problems, problems
    asked: list[ApproveParams] = []

    async def asker(request: ApproveParams) -> dict[str, Any]:
        asked.append(request)
        return {"decision": answer(request)}

    dirs = Dirs(state=tmp_path / "state", config=tmp_path / "config")
    runtime, _ = build_runtime([root], config, dirs=dirs, asker=asker, long_lived=False)
    try:
        yield runtime, root, asked
    finally:
        await runtime.services.get(JobManager).shutdown()


@pytest.fixture
def bwrap() -> str:
    """Commands run in the real sandbox, as by default."""
    path = require_program("bwrap", "the shell sandbox runs commands under bubblewrap")
    found = find_backend(os.environ.get("PATH"))
    if found.problem is not None:
        missing_part(found.problem)
    return path


def allow(_: ApproveParams) -> str:
    return "allow_once"


async def test_a_prompt_returns_at_once_and_job_input_answers_it(
    bwrap: str, tmp_path: Path
) -> None:
    async with policy_runtime(tmp_path, allow) as (runtime, _, _):
        started = time.monotonic()
        result = await call_tool(runtime, "bash", {"command": 'read -p "Name: " n; echo "hi $n"'})
        print(f"prompt returned after {time.monotonic() - started:.2f} s")  # the 3 s of the issue
        text = text_of(result)
        assert not result.is_error, text
        assert "waiting for input: `Name:`" in text
        job = _job_id(text)
        answered = await call_tool(runtime, "job_input", {"job_id": job, "text": "Ada\n"})
        assert not answered.is_error, text_of(answered)
        assert "hi Ada" in text_of(answered)
        assert "[status: exited 0]" in text_of(answered)


async def test_python_driven_through_three_inputs(bwrap: str, tmp_path: Path) -> None:
    async with policy_runtime(tmp_path, allow) as (runtime, _, _):
        result = await call_tool(runtime, "bash", {"command": "python3 -i -q"})
        text = text_of(result)
        assert "waiting for input: `>>>`" in text, text
        job = _job_id(text)
        for line in ("x = 6\n", "y = 7\n"):
            step = await call_tool(runtime, "job_input", {"job_id": job, "text": line})
            assert not step.is_error, text_of(step)
        last = await call_tool(runtime, "job_input", {"job_id": job, "text": "print(x * y)\n"})
        assert "42" in text_of(last), text_of(last)
        ended = await call_tool(runtime, "job_input", {"job_id": job, "keys": ["ctrl-d"]})
        assert "[status: exited 0]" in text_of(ended), text_of(ended)


async def test_os_system_typed_into_python_is_judged_as_its_command(
    bwrap: str, tmp_path: Path
) -> None:
    """Outside the sandbox `touch X` asks; the user says no: X is never made."""

    def deny_typed(request: ApproveParams) -> str:
        return "deny" if "touch X" in str(request.arguments.get("command")) else "allow_once"

    async with policy_runtime(tmp_path, deny_typed) as (runtime, root, asked):
        started = await call_tool(runtime, "bash", {"command": "python3 -i -q", "sandbox": "off"})
        job = _job_id(text_of(started))
        typed = await call_tool(
            runtime, "job_input", {"job_id": job, "text": "import os; os.system('touch X')\n"}
        )
        assert typed.is_error and typed.error is not None
        assert typed.error.code == "permission.user_denied", text_of(typed)
        assert any("touch X" in str(a.arguments.get("command")) for a in asked)
        assert asked[-1].tool == "bash"  # asked as the command it is
        still = await call_tool(runtime, "job_input", {"job_id": job, "text": "print(1 + 1)\n"})
        assert "2" in text_of(still)
        assert not (root / "X").exists()


async def test_a_deny_rule_applies_to_what_is_typed(bwrap: str, tmp_path: Path) -> None:
    settings = {"policy": {"deny": ["Bash(rm:*)"]}}
    async with policy_runtime(tmp_path, allow, settings) as (runtime, root, _):
        (root / "x").mkdir()
        started = await call_tool(runtime, "bash", {"command": "python3 -i -q"})
        job = _job_id(text_of(started))
        typed = await call_tool(
            runtime,
            "job_input",
            {"job_id": job, "text": "import subprocess; subprocess.run(['rm', '-rf', 'x'])\n"},
        )
        assert typed.error is not None and typed.error.code == "permission.rule_denied"
        shell = await call_tool(runtime, "bash", {"command": "sh"})
        denied = await call_tool(
            runtime, "job_input", {"job_id": _job_id(text_of(shell)), "text": "rm -rf x\n"}
        )
        assert denied.error is not None and denied.error.code == "permission.rule_denied"
        assert (root / "x").is_dir()


async def test_less_in_a_terminal_shows_its_screen_and_quits_on_q(
    bwrap: str, tmp_path: Path
) -> None:
    async with policy_runtime(tmp_path, allow) as (runtime, root, _):
        (root / "README.md").write_text("".join(f"line {n}\n" for n in range(1, 201)))
        result = await call_tool(runtime, "bash", {"command": "less README.md", "terminal": True})
        text = text_of(result)
        assert not result.is_error, text
        assert "line 1\n" in text and "line 39" in text and "line 41" not in text
        assert "\x1b" not in text  # rendered: no control sequences
        job = _job_id(text)
        quit_ = await call_tool(runtime, "job_input", {"job_id": job, "text": "q"})
        assert "[status: exited 0]" in text_of(quit_), text_of(quit_)


async def test_input_to_an_ended_job_is_refused(bwrap: str, tmp_path: Path) -> None:
    async with policy_runtime(tmp_path, allow) as (runtime, _, _):
        started = await call_tool(runtime, "bash", {"command": "true", "run_in_background": True})
        job = re.search(r'"(bash-\d+)"', text_of(started))
        assert job
        await call_tool(runtime, "job_output", {"job_id": job.group(1), "wait": True})
        late = await call_tool(runtime, "job_input", {"job_id": job.group(1), "text": "x\n"})
        assert late.error is not None and late.error.code == "invalid_argument"
        empty = await call_tool(runtime, "job_input", {"job_id": job.group(1)})
        assert empty.error is not None


async def test_a_password_prompt_in_a_job_goes_to_the_password_asker_not_the_model(
    bwrap: str, tmp_path: Path
) -> None:
    """JobManager.password_asker, the hook for password prompts (echo off) in a job's
    terminal: it answers, the job goes on, and the answer is in no result."""
    from lsp_server.shell.prompts import PasswordRequest

    seen: list[PasswordRequest] = []

    async def asker(request: PasswordRequest) -> str | None:
        seen.append(request)
        return "s3cret-typed"

    check = (
        "python3 -c \"import getpass; p = getpass.getpass('Password: '); "
        "print('right' if p == 's3cret-typed' else 'wrong')\""
    )
    async with policy_runtime(tmp_path, allow) as (runtime, _, _):
        runtime.services.get(JobManager).password_asker = asker
        job = await call_tool(runtime, "bash", {"command": f"read -p 'Go? ' g; {check}"})
        typed = await call_tool(
            runtime, "job_input", {"job_id": _job_id(text_of(job)), "text": "y\n"}
        )
        assert "right" in text_of(typed), text_of(typed)
        assert "s3cret-typed" not in text_of(typed)
        assert [r.prompt for r in seen] == ["Password:"] and seen[0].job_id is not None


async def test_job_output_says_a_background_job_waits_for_input(bwrap: str, tmp_path: Path) -> None:
    async with policy_runtime(tmp_path, allow) as (runtime, _, _):
        started = await call_tool(
            runtime,
            "bash",
            {"command": 'read -p "Continue? " a; echo "got $a"', "run_in_background": True},
        )
        job = re.search(r'"(bash-\d+)"', text_of(started))
        assert job
        seen = await call_tool(
            runtime,
            "job_output",
            {"job_id": job.group(1), "wait": True, "filter": "never", "timeout_ms": 2500},
        )
        assert "[waiting for input: `Continue?`" in text_of(seen), text_of(seen)
        answered = await call_tool(runtime, "job_input", {"job_id": job.group(1), "text": "y\n"})
        assert "got y" in text_of(answered)
