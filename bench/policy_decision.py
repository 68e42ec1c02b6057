"""What the shell policy costs per call: the bare bash grammar parse (reference), the split
into simple commands with every word resolved (tree-sitter-bash, policy/commands/
bash_split.py), the split plus the wrapper unfolding, the read-only shape check, and the
whole decision with the workspace checks (paths resolved, secrets, git config asked for
git commands, `rg --files` for rg) -- beside running `git status` and `rg` themselves in
the same folder, same run.

    .venv/bin/python bench/policy_decision.py [--rounds 300]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lsp_server.fs.workspace import Workspace
from lsp_server.policy.commands.command_paths import Places
from lsp_server.policy.commands.wrappers import view_command
from lsp_server.policy.engine import CallFacts, PolicyEngine, RuleSet
from lsp_server.policy.readonly_commands import ReadOnlyClassifier
from lsp_server.policy.rules import parse_rules
from lsp_server.shellparse.bash_tree import parse
from lsp_server.shellparse.shell_words import split_command

COMMANDS = [
    "ls -la src",
    "cat README.md | head -n 20",
    "grep -rn 'def ' src 2>/dev/null",
    "nice -n 5 timeout -s KILL 5 npm test -- --watch=false",
    "bash -c 'cd src && make -j2 all' && echo done",
    "sort -u -k 2 names.txt | uniq -c",
]
GIT = "git status --short"
RG = "rg -n x"


def _median_ms(action: Callable[[], object], rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def _engine(root: Path) -> PolicyEngine:
    workspace = Workspace([root])
    places = Places(roots=(root,), is_secret=workspace.is_secret)
    problems: list[str] = []
    rules = RuleSet(deny=tuple(parse_rules(["bash(rm:*)", "bash(touch:*)"], problems, "deny")))
    return PolicyEngine(rules, "default", ReadOnlyClassifier(places=places))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=300)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder).resolve()
        for name in ("README.md", "names.txt"):
            (root / name).write_text("x\n")
        (root / "src").mkdir()
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        engine = _engine(root)

        def facts(command: str) -> CallFacts:
            return CallFacts(tool="bash", kind="shell", read_only=False, command=command, cwd=root)

        per = len(COMMANDS)
        grammar = _median_ms(lambda: [parse(c) for c in COMMANDS], rounds) / per
        split = _median_ms(lambda: [split_command(c) for c in COMMANDS], rounds) / per
        unfolded = (
            _median_ms(lambda: [view_command(split_command(c), c) for c in COMMANDS], rounds) / per
        )
        bare = ReadOnlyClassifier()
        shapes = (
            _median_ms(lambda: [bare.concern(split_command(c)) for c in COMMANDS], rounds) / per
        )
        decision = _median_ms(lambda: [engine.decide(facts(c)) for c in COMMANDS], rounds) / len(
            COMMANDS
        )
        git_rounds = max(rounds // 10, 10)
        git_cold = _median_ms(lambda: _engine(root).decide(facts(GIT)), git_rounds)
        git_decision = _median_ms(lambda: engine.decide(facts(GIT)), git_rounds)
        git_run = _median_ms(
            lambda: subprocess.run(GIT.split(), cwd=root, capture_output=True, check=True),
            git_rounds,
        )
        rg_decision = _median_ms(lambda: engine.decide(facts(RG)), git_rounds)
        rg_run = _median_ms(
            lambda: subprocess.run(RG.split(), cwd=root, capture_output=True, check=False),
            git_rounds,
        )
    print(f"per command, median of {rounds} rounds over {len(COMMANDS)} commands")
    print(f"grammar parse only (reference) {grammar:8.3f} ms")
    print(f"split, words resolved          {split:8.3f} ms   {split / grammar:5.1f}x parse")
    print(f"split + unfolding              {unfolded:8.3f} ms   {unfolded / grammar:5.1f}x parse")
    print(f"split + read-only shapes       {shapes:8.3f} ms   {shapes / grammar:5.1f}x parse")
    print(f"whole decision (paths checked) {decision:8.3f} ms   {decision / grammar:5.1f}x parse")
    cold, warm = git_cold / git_run, git_decision / git_run
    print(f"git decision, git config run     {git_cold:8.3f} ms   {cold:5.2f}x `{GIT}`")
    print(f"git decision, config unchanged   {git_decision:8.3f} ms   {warm:5.2f}x `{GIT}`")
    print(f"running `{GIT}` itself   {git_run:8.3f} ms")
    print(f"`{RG}` decision (rg --files)   {rg_decision:8.3f} ms   {rg_decision / rg_run:5.2f}x")
    print(f"running `{RG}` itself            {rg_run:8.3f} ms")


if __name__ == "__main__":
    main()
