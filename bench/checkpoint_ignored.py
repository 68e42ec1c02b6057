"""What recording ignored files adds to a checkpoint snapshot (issue 27, docs/CHECKPOINTS.md):
a repository of 10,000 files with an ignored `data/` of 1,000 files (recorded) and an
ignored `node_modules/` of 2,000 (a regenerable folder, skipped); the shadow repository's
snapshot (`git add -A` + `write-tree`, the reference) against the ignored-file pass that
runs before it (`git ls-files --others --ignored --directory`, the walk of ignored folders
outside the regenerable ones, the budget), interleaved; medians of 11. Both run twice per
checkpointed command (before and after it).

    .venv/bin/python bench/checkpoint_ignored.py
"""

from __future__ import annotations

import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from lsp_server.checkpoints.shadow.ignored import IgnoredFiles
from lsp_server.checkpoints.shadow.repository import ShadowRepo
from lsp_server.config.tree import REGENERABLE_FOLDERS

root = Path(tempfile.mkdtemp()) / "ws"
for d in range(100):
    (root / f"pkg{d}").mkdir(parents=True)
    for f in range(100):
        (root / f"pkg{d}" / f"m{f}.py").write_text(f"V={f}\n")
(root / ".gitignore").write_text("data/\nnode_modules/\n")
(root / "data").mkdir()
for i in range(1000):
    (root / "data" / f"row{i}.json").write_text("{}\n")
(root / "node_modules" / "x").mkdir(parents=True)
for i in range(2000):
    (root / "node_modules" / "x" / f"f{i}.js").write_text("1\n")
subprocess.run(["git", "init", "-q", str(root)], check=True)
repo = ShadowRepo(Path(tempfile.mkdtemp()) / "shadow", root, 8 << 20)
repo.ensure()
ign = IgnoredFiles(repo, 64 << 20, REGENERABLE_FOLDERS)
ign.record()
repo.snapshot()
snap, rec = [], []
for _ in range(11):
    t = time.perf_counter()
    repo.snapshot()
    snap.append(time.perf_counter() - t)
    t = time.perf_counter()
    ign.record()
    rec.append(time.perf_counter() - t)
snap_ms, pass_ms = statistics.median(snap) * 1000, statistics.median(rec) * 1000
print(f"snapshot (git add -A + write-tree) median {snap_ms:.1f} ms")
print(f"ignored-file pass median {pass_ms:.1f} ms ({pass_ms / snap_ms:.2f}x the snapshot)")
