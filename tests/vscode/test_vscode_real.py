"""The packaged extension in real VS Code (code-server 4.100.3 = VS Code 1.100.3).

One cycle: install the freshly packaged .vsix (and a test-only probe extension that records
observations and calls vscode.lm.*), start code-server on 127.0.0.1 with HOME and all state in
a temp folder, open a fixture workspace in headless chromium, and let driver.mjs act like a
person: Run Tool... from the command palette, the approval modal (Allow once, Deny), the
language-model tools. Screenshots of the modals go to test-artifacts/vscode/.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.vscode.vscode_env import (
    ARTIFACTS,
    CODE_SERVER,
    PLAYWRIGHT,
    PROBE_EXTENSION_DIR,
    find_program,
    missing,
    vsce_package,
)

pytestmark = [pytest.mark.real_client, pytest.mark.slow, pytest.mark.timeout(600)]

DRIVER = Path(__file__).resolve().parent / "driver.mjs"
LANGSERVER_TESTS = Path(__file__).resolve().parents[1] / "langservers"
TYPESCRIPT_FIXTURE = LANGSERVER_TESTS / "fixtures" / "typescript"
TYPESCRIPT_GOLDEN = LANGSERVER_TESTS / "golden" / "typescript"
# driver.mjs writes long.txt with these lines changed (a 61-line diff in five hunks).
CHANGED_AT = [8, 9, 10, 50, 51, 95, 96, 140, 141, 189, 190, 191]
CHANGED_LINES = [f"LINE {n} (changed)" for n in CHANGED_AT]
LONG_NEW = "".join(
    f"LINE {n} (changed)\n" if n in CHANGED_AT else f"line {n}\n" for n in range(1, 201)
)
NOTES = "# Notes\n\n    indented world\n"
DECISIONS = ["Allow once", "Allow for session", "Always allow...", "Deny..."]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_until_serving(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"code-server exited with {process.returncode}:\n{log.read_text()[-4000:]}")
        try:
            with urllib.request.urlopen(f"{url}healthz", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    pytest.fail(f"code-server did not answer on {url} within 60 s:\n{log.read_text()[-4000:]}")


def toolhost_executable() -> Path:
    exe = Path(sys.executable).parent / "toolhost"
    if not exe.exists():
        missing("the toolhost console script", "pip install -e . in the venv")
    return exe


@pytest.fixture
def vscode_workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    (root / "hello.txt").write_text("hello world\n")
    (root / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 201)))
    (root / "notes.md").write_text(NOTES)
    return root


def run_cycle(
    tmp_path: Path,
    toolhost_vsix: Path,
    workspace: Path,
    scenario: str,
    trusted: bool,
    server_settings: dict[str, str | bool] | None = None,
    base_env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Install, start code-server, run one driver scenario, stop; the driver's report.

    By default the extension starts this checkout's `toolhost` (toolhost.server.path);
    `server_settings` replaces that setting ({} for none) and `base_env` the environment
    code-server inherits."""
    if not CODE_SERVER.exists():
        missing("code-server", "the real-VS-Code test runs VS Code as code-server")
    if not PLAYWRIGHT.exists():
        missing("playwright-core", "drives chromium")
    chromium = find_program("chromium", "Debian chromium is the browser VS Code runs in")
    node = find_program("node", "runs the Playwright driver")
    if server_settings is None:
        server_settings = {"toolhost.server.path": str(toolhost_executable())}
    artifacts = ARTIFACTS if scenario == "main" else ARTIFACTS / scenario
    artifacts.mkdir(parents=True, exist_ok=True)

    probe_vsix = vsce_package(PROBE_EXTENSION_DIR, tmp_path / "toolhost-e2e.vsix")
    home = tmp_path / "home"
    user_data = tmp_path / "user-data"
    extensions = tmp_path / "extensions"
    for folder in (home, user_data / "User", extensions):
        folder.mkdir(parents=True, exist_ok=True)
    observations = tmp_path / "observations.jsonl"
    env = {
        **(os.environ if base_env is None else base_env),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "TOOLHOST_E2E_LOG": str(observations),
    }
    dirs = ["--user-data-dir", str(user_data), "--extensions-dir", str(extensions)]
    install = subprocess.run(
        [
            str(CODE_SERVER),
            *dirs,
            *("--install-extension", str(toolhost_vsix)),
            *("--install-extension", str(probe_vsix)),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    assert f"'{toolhost_vsix.name}' was successfully installed" in install.stdout

    settings = {
        **server_settings,
        "telemetry.telemetryLevel": "off",
        "update.mode": "none",
        "extensions.autoCheckUpdates": False,
        "extensions.autoUpdate": False,
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": False,
        # Untrusted: restricted mode from the start, without the trust prompt.
        "security.workspace.trust.enabled": not trusted,
        "security.workspace.trust.startupPrompt": "never",
    }
    (user_data / "User" / "settings.json").write_text(json.dumps(settings, indent=2))
    port = free_port()
    config = tmp_path / "code-server.yaml"
    config.write_text(f"bind-addr: 127.0.0.1:{port}\nauth: none\ncert: false\n")
    log = tmp_path / "code-server.log"
    url = f"http://127.0.0.1:{port}/"
    trust_flags = ["--disable-workspace-trust"] if trusted else []
    with log.open("wb") as log_file:
        process = subprocess.Popen(
            [
                str(CODE_SERVER),
                *("--config", str(config)),
                *dirs,
                *("--disable-telemetry", "--disable-update-check", *trust_flags),
                *("--disable-getting-started-override", str(workspace)),
            ],
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_until_serving(url, process, log)
        driver_config = {
            "url": f"{url}?folder={workspace}",
            "log": str(observations),
            "artifacts": str(artifacts),
            "playwright": str(PLAYWRIGHT),
            "chromium": str(chromium),
            "workspace": str(workspace),
            "scenario": scenario,
        }
        run = subprocess.run(
            [str(node), str(DRIVER), json.dumps(driver_config)],
            env=env,
            capture_output=True,
            text=True,
            timeout=500,
        )
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    (artifacts / "driver-stderr.txt").write_text(run.stderr)
    (artifacts / "code-server.log").write_text(log.read_text(errors="replace"))
    # VS Code's own logs, the Toolhost output channel included (exthost*/toolhost.toolhost/).
    shutil.rmtree(artifacts / "logs", ignore_errors=True)
    if (user_data / "logs").exists():
        shutil.copytree(user_data / "logs", artifacts / "logs")
    assert run.stdout.strip(), f"driver printed nothing:\n{run.stderr[-4000:]}"
    report: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    (artifacts / "driver-report.json").write_text(json.dumps(report, indent=2))
    assert "error" not in report, report["error"] + "\n" + run.stderr[-3000:]
    return report


def approvals_of(report: dict[str, Any]) -> list[Any]:
    return [
        o["event"]
        for o in report["observations"]
        if o["kind"] == "toolhost" and o["event"]["kind"] == "approval"
    ]


def test_packaged_extension_in_real_vscode(
    tmp_path: Path, toolhost_vsix: Path, vscode_workspace: Path
) -> None:
    report = run_cycle(tmp_path, toolhost_vsix, vscode_workspace, "main", trusted=True)
    # Each part of the scenario ran without a driver failure (listed with their screenshots);
    # a failed part explains the scenario checks that fail after it.
    assert report["failures"] == [], json.dumps(report["failures"], indent=2)
    steps = {step["name"]: step for step in report["steps"]}
    check_scenario(steps, approvals_of(report), vscode_workspace)
    # Starts, calls, refusals and a restart are healthy: no error in the server's log.
    assert server_log_errors(ARTIFACTS) == []


def server_log_errors(artifacts: Path) -> list[str]:
    """The [error] lines of the Toolhost output channel (VS Code's language client logs each
    line the server writes to stderr there as an error)."""
    logs = sorted((artifacts / "logs").glob("*/exthost*/toolhost.toolhost/Toolhost.log"))
    assert logs, "no Toolhost output channel log"
    return [line for log in logs for line in log.read_text().splitlines() if "[error]" in line]


def test_untrusted_workspace_runs_the_server_read_only(
    tmp_path: Path, toolhost_vsix: Path, vscode_workspace: Path
) -> None:
    report = run_cycle(tmp_path, toolhost_vsix, vscode_workspace, "untrusted", trusted=False)
    assert report["failures"] == [], json.dumps(report["failures"], indent=2)
    steps = {step["name"]: step for step in report["steps"]}
    assert steps["extension activated"]["serverState"] == "running"
    assert steps["workspace trust"]["trusted"] is False
    # A healthy start (and calls that only read or are refused) logs no error.
    assert server_log_errors(ARTIFACTS / "untrusted") == []
    # Reads work; a write is refused by readOnly mode without a prompt, the file unchanged.
    assert steps["run tool read_file"]["result"]["isError"] is False
    refused = steps["untrusted edit"]["result"]
    assert refused["isError"] is True
    assert refused["error"]["code"].startswith("permission."), refused["error"]
    assert "readOnly" in refused["error"]["message"], refused["error"]
    assert steps["untrusted edit"]["onDisk"] == "hello world\n"
    assert approvals_of(report) == []


def check_scenario(steps: dict[str, Any], approvals: list[Any], workspace: Path) -> None:
    problems: list[str] = []

    def expect(condition: bool, what: str) -> None:
        if not condition:
            problems.append(what)

    # The extension activated and started the server.
    expect(steps["extension activated"]["serverState"] == "running", "server running")
    # A tool call from the command palette round-tripped.
    read = steps.get("run tool read_file", {}).get("result")
    expect(read is not None and read["isError"] is False, f"Run Tool read_file: {read}")
    expect(read is not None and "hello world" in read["content"][0]["text"], "read text")
    check_diff_first(steps, approvals, expect)
    check_bash_prompt(steps, workspace, expect)
    # Deny from the diff's title bar left the file unchanged; the reason reached the result.
    denied = steps.get("deny")
    expect(denied is not None and denied["onDisk"] == "hello world\n", "deny left the file")
    if denied is not None:
        error = denied["result"]["error"] or {}
        expect(error.get("code") == "permission.user_denied", f"deny code: {error}")
        expect("not in this test" in error.get("message", ""), "deny reason in the result")
    # Closing the approval editor reached the agent as a dismissal, not as words.
    dismissed = steps.get("dismiss")
    expect(
        dismissed is not None and dismissed["onDisk"] == "hello world\n", "dismiss left the file"
    )
    if dismissed is not None:
        message = (dismissed["result"]["error"] or {}).get("message", "")
        expect("dismissed" in message, f"dismissal in the result: {message}")
    # Always allow: the input box offered the server's first suggested rule; the edited rule
    # was sent and written to the workspace .toolhost.toml.
    always = steps.get("always allow")
    expect(always is not None, "always allow section")
    if always is not None and len(approvals) >= 5:
        expect(
            always["offered"] == approvals[4]["params"]["suggestedRules"][0],
            f"offered rule {always['offered']}",
        )
        expect(always["onDisk"] == "HI world\n", "always allow edited the file")
        expect("Edit(*.txt)" in (always["policy"] or ""), f".toolhost.toml: {always['policy']}")
    answers = [
        (a["params"]["tool"], a["result"]["decision"], a["result"].get("rule")) for a in approvals
    ]
    expect(
        answers
        == [
            ("write_file", "allow_once", None),
            ("bash", "deny", None),
            ("edit_file", "deny", None),
            ("edit_file", "deny", None),
            ("edit_file", "allow_always", "Edit(*.txt)"),
        ],
        f"approvals answered through the extension: {answers}",
    )
    expect(
        [a["result"].get("dismissed", False) for a in approvals]
        == [False, False, False, True, False],
        "only the closed editor is a dismissal",
    )
    check_lm_tools(steps, approvals, expect)
    # Show Activity: a row opened its call's result as Markdown with a readable header.
    activity = steps.get("activity result")
    expect(activity is not None, "Show Activity opened a result")
    if activity is not None:
        expect(activity["tab"].strip().endswith(".md"), f"result tab: {activity['tab']}")
        expect(activity["language"] == "Markdown", f"result language: {activity['language']}")
        expect("# meta" not in activity["text"], "no one-line meta dump")
    # Revert a Call...: the LM edit of notes.md, picked newest first, confirmed in a modal that
    # names the file and what happens to it, is undone on disk.
    revert = steps.get("revert")
    expect(revert is not None, "revert section")
    if revert is not None:
        expect("edit_file" in revert["picked"] and "notes.md" in revert["picked"], revert["picked"])
        expect("modified notes.md → put back" in revert["confirmation"]["text"], str(revert))
        expect(revert["edited"] != NOTES and revert["onDisk"] == NOTES, "revert put notes.md back")
    # An agent's changes: sessions listed by agent; the LM session's one diff shows its edit;
    # reverting all of the "vscode" session's calls (the revert above) redoes the LM edit.
    review = steps.get("agent review")
    expect(review is not None, "agent review section")
    if review is not None:
        listed = [row.replace("\xa0", " ") for row in review["listed"]]
        expect(any("session vscode-lm ·" in row for row in listed), str(listed))
        shown = review["review"].replace("\xa0", " ")
        expect("# session vscode-lm" in shown and "+++ b/notes.md" in shown, shown)
    undone = steps.get("agent revert")
    expect(undone is not None, "agent revert section")
    if undone is not None:
        asked = undone["confirmation"].replace("\xa0", " ")
        expect("Revert all" in asked and "(session vscode)?" in asked, asked)
        expect(undone["before"] == NOTES and undone["onDisk"] != NOTES, "the revert was reverted")
        shown = undone["shown"].replace("\xa0", " ")
        expect("call(s) of session vscode, newest first" in shown, shown)
    # No toolhost warning toast with default settings.
    noted = steps.get("notifications", {}).get("toolhost")
    expect(noted == [], f"toolhost notifications on start: {noted}")
    for shot in ("approval-diff.png", "approval-diff-last-hunk.png", "approval-bash.png"):
        expect((ARTIFACTS / shot).exists(), f"screenshot {shot}")
    # The status bar shows the server; Restart Server stops it and starts it again.
    expect("Toolhost" in steps.get("status bar", {}).get("text", ""), "status bar item")
    expect(steps.get("restarted", {}).get("stopped") is True, "Restart Server restarted")
    assert not problems, "real VS Code scenario:\n- " + "\n- ".join(problems)


Expect = Callable[[bool, str], None]


def check_diff_first(steps: dict[str, Any], approvals: list[Any], expect: Expect) -> None:
    """The pending change is in the diff editor, every changed line reachable and uncovered,
    the decisions on its title bar; Allow once from there wrote the file."""
    shown = steps.get("approval diff shown")
    expect(shown is not None, "the approval opened the diff editor")
    if shown is not None:
        expect(shown["dialogs"] == 0, "no dialog over the diff")
        labels = [action["label"] for action in shown["actions"]]
        for decision in DECISIONS:
            expect(
                any(label.startswith(decision) for label in labels),
                f"{decision} on the title bar: {labels}",
            )
        expect(
            sorted(shown["seen"]) == sorted(CHANGED_LINES),
            f"changed lines seen on screen: {shown['seen']}",
        )
    if approvals:
        diff_lines = (approvals[0]["params"]["diff"] or "").splitlines()
        expect(len(diff_lines) >= 60, f"a diff of 60 lines or more: {len(diff_lines)}")
    allowed = steps.get("allow once")
    expect(allowed is not None and allowed["result"]["isError"] is False, f"allow once: {allowed}")
    if allowed is not None:
        expect(allowed["onDisk"] == LONG_NEW, "write_file wrote long.txt")
        expect(allowed["tabsLeft"] == 0, "the decision closed the approval editor")


def check_bash_prompt(steps: dict[str, Any], workspace: Path, expect: Expect) -> None:
    shown = steps.get("bash approval shown")
    expect(shown is not None, "bash approval shown")
    if shown is not None:
        detail = shown["detail"]
        for wanted in (
            "touch made-by-bash.txt",
            f"Folder: {workspace}",
            "Runs: in the foreground, stopped after",
            "Sandbox: none (not sandboxed",
        ):
            expect(wanted in detail, f"{wanted!r} in the bash approval: {detail}")
        for decision in DECISIONS:
            expect(decision in shown["buttons"], f"button {decision} in {shown['buttons']}")
    denied = steps.get("bash denied")
    expect(denied is not None and denied["created"] is False, f"bash denied: {denied}")


def check_lm_tools(steps: dict[str, Any], approvals: list[Any], expect: Expect) -> None:
    lm = steps.get("lm tools")
    expect(lm is not None, "vscode.lm.tools listed")
    if lm is not None:
        wanted = {"toolhost_read_file", "toolhost_edit_file", "toolhost_write_file"}
        expect(wanted <= set(lm["names"]), f"LM tools {lm['names']}")
        expect("world" in "".join(lm["read"].get("texts", [])), f"LM read_file: {lm['read']}")
    # A writer through invokeTool: VS Code's confirmation shows the real diff (+/- lines,
    # indentation kept), then no second toolhost prompt.
    lm_edit = steps.get("lm edit")
    expect(lm_edit is not None and "error" not in lm_edit["result"], f"LM edit: {lm_edit}")
    if lm_edit is not None:
        # As a person reads it: VS Code's dialog collapses spaces, the extension sends no-break
        # spaces to keep the indentation.
        text = lm_edit["confirmation"]["text"].replace("\xa0", " ")
        for line in ("-    indented world", "+    indented from the LM tool"):
            expect(line in text, f"{line!r} in the LM confirmation: {text}")
        expect(lm_edit["onDisk"] == NOTES.replace("world", "from the LM tool"), "LM edit on disk")
    expect(
        not any(a["params"]["session"] == "vscode-lm" for a in approvals),
        "no toolhost prompt for a call VS Code already confirmed",
    )


@pytest.fixture
def typescript_workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ts-workspace"
    shutil.copytree(TYPESCRIPT_FIXTURE, root)
    # On a loaded machine VS Code's TypeScript server may take longer than the default 30 s
    # to load the project; falling back to toolhost's own server is not what is tested here.
    (root / ".toolhost.toml").write_text("[lsp]\neditor_timeout_seconds = 150\n")
    (root / "hello.txt").write_text("hello world\n")  # the scenario's first read
    return root


def test_lsp_tools_are_answered_by_vscode_s_own_typescript_support(
    tmp_path: Path, toolhost_vsix: Path, typescript_workspace: Path
) -> None:
    """lsp_* through the extension's toolhost/lspRequest handler: VS Code's built-in
    TypeScript features answer, formatted as toolhost formats its own servers' answers
    (the same rows as tests/langservers/golden/typescript), and toolhost starts no
    typescript-language-server."""
    report = run_cycle(tmp_path, toolhost_vsix, typescript_workspace, "lspproxy", trusted=True)
    assert report["failures"] == [], json.dumps(report["failures"], indent=2)
    steps = {step["name"]: step for step in report["steps"]}
    results = steps["lsp answers"]["results"]
    provenance = "(answered by the editor's VS Code typescript language features for "
    for name, result in results.items():
        assert result["isError"] is False, (name, result)
        assert result["text"].rpartition("\n")[2].startswith(provenance), (name, result["text"])
    rows = {name: result["text"].rpartition("\n")[0] for name, result in results.items()}
    golden = TYPESCRIPT_GOLDEN
    assert rows["definition"] == (golden / "definition.txt").read_text().rstrip("\n")
    assert rows["references"] == (golden / "references.txt").read_text().rstrip("\n")
    # CJK and emoji before the symbol: the same definition as on toolhost's own path.
    assert rows["unicode"] == (golden / "definition.txt").read_text().rstrip("\n")
    assert "makeCircle(radius: number): Circle" in rows["hover"]
    # bad.ts is in no tab: the extension showed it in a background tab for the question
    # (VS Code checks only what tabs show), closed it again and did not move the focus.
    # VS Code's TypeScript support names the source "ts", typescript-language-server
    # "typescript": the rest is the same row.
    diagnostics = steps["lsp answers"]["diagnostics"]["text"]
    expected = (TYPESCRIPT_GOLDEN / "diagnostics.txt").read_text().replace("[typescript]", "[ts]")
    assert diagnostics.rpartition("\n")[0] + "\n" == expected, diagnostics
    assert diagnostics.rpartition("\n")[2].startswith(provenance), diagnostics
    assert steps["lsp answers"]["after"] == steps["lsp answers"]["before"]
    # From /proc, after the five answers: VS Code's tsserver is there, toolhost's server has
    # no child.
    processes = steps["lsp answers"]["processes"]
    servers = [p for p in processes if " serve" in p["cmdline"] and "toolhost" in p["cmdline"]]
    assert servers, processes
    below = {p["pid"] for p in servers}
    for proc in sorted(processes, key=lambda p: p["pid"]):
        if proc["ppid"] in below:
            below.add(proc["pid"])
    children = [p for p in processes if p["pid"] in below and p not in servers]
    assert children == [], children
    assert not any("typescript-language-server" in p["cmdline"] for p in processes)
    assert any("tsserver" in p["cmdline"] for p in processes), "VS Code's own tsserver"
