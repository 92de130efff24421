"""What recording a turn's start costs on a big working tree, beside `git status` of the same tree.

    python bench/project_turn_start.py [--quick]     # 50,000 tracked files (5,000 with --quick)

A turn's start state (which paths are dirty) is a full status of the working tree: every tracked
file is stat'ed against the index, and untracked folders are listed. The tree is generated once
in bench/out/ (500 folders of 100 small files, plus an ignored node_modules of 20,000 files, one
modified file and one untracked folder); the index is refreshed so no entry is racily clean.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import OUT, fmt, median_of, parser

from opmem_tui.backend.projects.agent_commit import AgentCommitter
from opmem_tui.backend.projects.repository import ProjectGit

ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "U",
    "GIT_AUTHOR_EMAIL": "u@x",
    "GIT_COMMITTER_NAME": "U",
    "GIT_COMMITTER_EMAIL": "u@x",
}


def generate(path: Path, folders: int) -> None:
    marker = path / ".complete"
    if marker.exists():
        return
    subprocess.run(["rm", "-rf", str(path)], check=True)
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True, env=ENV)
    for d in range(folders):
        folder = path / "src" / f"d{d:03d}"
        folder.mkdir(parents=True)
        for f in range(100):
            (folder / f"f{f:03d}.py").write_text(f"x = {d * 100 + f}\n")
    for d in range(folders * 2 // 5):
        folder = path / "node_modules" / f"p{d}"
        folder.mkdir(parents=True)
        for f in range(100):
            (folder / f"i{f}.js").write_text("1\n")
    (path / ".gitignore").write_text("node_modules/\n.complete\n")
    subprocess.run(["git", "-C", str(path), "add", "-A"], check=True, env=ENV)
    subprocess.run(["git", "-C", str(path), "commit", "-q", "-m", "init"], check=True, env=ENV)
    (path / "src" / "d001" / "f001.py").write_text("changed\n")
    (path / "scratch").mkdir()
    (path / "scratch" / "notes.txt").write_text("mine\n")
    time.sleep(1.1)  # the index must be newer than every file, or its entries are racily clean
    subprocess.run(["git", "-C", str(path), "update-index", "--really-refresh"], env=ENV, capture_output=True)
    marker.write_text("ok")


def main() -> int:
    args = parser(__doc__.split("\n")[0]).parse_args()
    folders = 50 if args.quick else 500
    path = OUT / f"turn-start-{folders * 100}"
    generate(path, folders)
    runs = 5 if args.quick else 11

    def ours() -> None:
        watch = AgentCommitter(ProjectGit(path)).begin_turn()
        assert watch.dirty == {"src/d001/f001.py"} and watch.dirty_dirs == ("scratch/",), watch

    def git_status() -> None:
        subprocess.run(["git", "-C", str(path), "status", "--porcelain"], capture_output=True, check=True)

    ours(), git_status()
    ours_t, git_t = median_of(ours, runs), median_of(git_status, runs)
    print(f"working tree: {folders * 100:,} tracked files, {folders * 40:,} ignored ({path})")
    print(
        f"turn start (begin_turn): {fmt(ours_t)}  vs git status --porcelain: {fmt(git_t)}  ratio {ours_t / git_t:.2f}"
    )
    print("(no target: the issue asks for the figure; both stat every tracked file)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
