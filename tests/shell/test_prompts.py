"""The runner sees a command wait for input (and only then), hands it over alive, and
types a password prompt's answer from its hook without showing it. Real programs."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_server.shell.runner import RunLimits, run_command

pytestmark = pytest.mark.timeout(60)

LIMITS = RunLimits(timeout_seconds=30, kill_grace_seconds=0.5)


async def test_a_prompt_is_handed_over_alive_and_answered(tmp_path: Path) -> None:
    result = await run_command(
        'read -p "Name: " n; echo "hi $n"', tmp_path, LIMITS, interactive=True
    )
    handover = result.handover
    assert handover is not None and result.output == "Name: "
    seen: list[bytes] = []
    handover.pipe.redirect(seen.append)
    handover.stdin.write(b"Ada\n")
    await handover.process.wait()
    await handover.pipe.wait_closed(5)
    assert b"hi Ada\n" in b"".join(seen)
    handover.pipe.close()
    handover.stdin.close()
    handover.state.remove()


async def test_a_pipe_inside_a_pipeline_is_not_a_prompt(tmp_path: Path) -> None:
    """`cat` waits on the pipe from `sleep`, not on the command's stdin: it runs to its end."""
    result = await run_command("sleep 2 | cat; echo done", tmp_path, LIMITS, interactive=True)
    assert result.handover is None and result.output == "done\n"


async def test_without_interactive_stdin_is_dev_null(tmp_path: Path) -> None:
    result = await run_command("cat; echo ended", tmp_path, LIMITS)
    assert result.handover is None and result.output == "ended\n"


async def test_a_password_prompt_goes_to_the_hook_and_not_to_the_output(tmp_path: Path) -> None:
    asked: list[str] = []

    async def answer(prompt: str) -> str | None:
        asked.append(prompt)
        return "pw-typed-here"

    result = await run_command(
        'read -s -p "Password: " p; echo; [ "$p" = pw-typed-here ] && echo right',
        tmp_path,
        LIMITS,
        interactive=True,
        on_password_prompt=answer,
    )
    assert asked == ["Password:"]
    assert "right" in result.output and "pw-typed-here" not in result.output
