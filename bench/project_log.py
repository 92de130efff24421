"""First page of a project's log on a huge repository, beside `git log` of the same repository.

    python bench/project_log.py            # 50,000 commits (generated once, cached in bench/out/)
    python bench/project_log.py --quick    # 5,000 commits

The repository is written with pygit2 objects (a small tree per commit, one changed file, every
7th commit by an agent) and packed by `git repack`, as a real long-lived repository would be.
Measured: ProjectGit(path).log(300) from a fresh object (so opening the repository counts) against
`git log -300 --format=...` run as a subprocess and its output split into records.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pygit2
from pygit2.enums import FileMode

from opmem_tui.backend.projects.repository import ProjectGit

OUT = Path(__file__).resolve().parent / "out"
PAGE = 300
FORMAT = "%H%x1f%an%x1f%ae%x1f%at%x1f%P%x1f%s"


def generate(path: Path, count: int) -> None:
    """`count` commits, newest on refs/heads/main; a marker file says the cache is complete."""
    marker = path / ".complete"
    if marker.exists():
        return
    if path.exists():
        shutil.rmtree(path)
    started = time.perf_counter()
    repo = pygit2.init_repository(str(path), initial_head="main")
    files = 20
    blobs = [repo.create_blob(f"file {i}\n".encode()) for i in range(files)]
    user = ("Uma User", "uma@example.com")
    parents: list[pygit2.Oid] = []
    t0 = 1_600_000_000
    for i in range(count):
        slot = i % files
        blobs[slot] = repo.create_blob(f"file {slot} version {i}\n".encode())
        src = repo.TreeBuilder()
        for j in range(files):
            src.insert(f"m{j:02d}.py", blobs[j], FileMode.BLOB)
        root = repo.TreeBuilder()
        root.insert("src", src.write(), FileMode.TREE)
        when = t0 + i * 90
        if i % 7 == 0:
            sig = pygit2.Signature("agent (bench-model via opmem)", "agent@opmem.invalid", when, 0)
            message = f"[agent bench-{i // 100}] turn {i % 100}: change m{slot:02d}\n"
        else:
            sig = pygit2.Signature(*user, when, 120)
            message = f"Change m{slot:02d} (step {i})\n\nLonger body explaining change {i}.\n"
        parents = [repo.create_commit(None, sig, sig, message, root.write(), parents)]
        if i and i % 10_000 == 0:
            print(f"  generated {i:,} commits ({time.perf_counter() - started:.1f}s)", flush=True)
    repo.create_reference("refs/heads/main", parents[0], force=True)
    made = time.perf_counter() - started
    subprocess.run(["git", "-C", str(path), "repack", "-a", "-d", "-q"], check=True)
    subprocess.run(["git", "-C", str(path), "prune-packed"], check=True)
    print(f"  generated {count:,} commits in {made:.1f}s, packed in {time.perf_counter() - started - made:.1f}s")
    marker.write_text(str(count))


def median_time(fn, runs: int) -> tuple[float, object]:
    times = []
    result = None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="5,000 commits and fewer runs")
    parser.add_argument("--commits", type=int, default=None)
    args = parser.parse_args()
    count = args.commits or (5_000 if args.quick else 50_000)
    runs = 7 if args.quick else 21
    path = OUT / f"project-log-{count}"
    OUT.mkdir(parents=True, exist_ok=True)
    generate(path, count)

    def ours():
        return ProjectGit(path).log(PAGE)

    def git_log():
        out = subprocess.run(
            ["git", "-C", str(path), "log", f"-{PAGE}", f"--format={FORMAT}"],
            capture_output=True,
            check=True,
        ).stdout
        return [line.split(b"\x1f") for line in out.splitlines()]

    cursor = ProjectGit(path).log(PAGE)[-1].oid

    def ours_next_page_cold():  # a fresh object: the walk skips to the cursor
        return ProjectGit(path).log(PAGE, after=cursor)

    def ours_next_page_warm():  # the object that showed page 1 continues its walk
        times = []
        for _ in range(runs):
            pg = ProjectGit(path)
            pg.log(PAGE)
            start = time.perf_counter()
            page = pg.log(PAGE, after=cursor)
            times.append(time.perf_counter() - start)
        return statistics.median(times), page

    def git_next_page():
        out = subprocess.run(
            ["git", "-C", str(path), "log", f"-{PAGE}", f"--skip={PAGE}", f"--format={FORMAT}"],
            capture_output=True,
            check=True,
        ).stdout
        return out.splitlines()

    def ours_agent():
        return ProjectGit(path).log(PAGE, agent_only=True)

    def git_agent():
        out = subprocess.run(
            ["git", "-C", str(path), "log", f"-{PAGE}", "--author=via opmem)", f"--format={FORMAT}"],
            capture_output=True,
            check=True,
        ).stdout
        return out.splitlines()

    # warm the page cache once for both sides
    ours(), git_log()
    ours_t, ours_page = median_time(ours, runs)
    git_t, git_page = median_time(git_log, runs)
    assert [c.oid for c in ours_page] == [r[0].decode() for r in git_page], "pages differ"
    cold_t, cold_page = median_time(ours_next_page_cold, runs)
    warm_t, warm_page = ours_next_page_warm()
    git_next_t, git_next = median_time(git_next_page, runs)
    assert [c.oid for c in cold_page] == [c.oid for c in warm_page] == [r.split(b"\x1f")[0].decode() for r in git_next]
    agent_t, agent_page = median_time(ours_agent, runs)
    git_agent_t, git_agent_page = median_time(git_agent, runs)
    assert len(agent_page) == len(git_agent_page) == PAGE and all(c.is_agent for c in agent_page)

    print(f"repository: {count:,} commits, packed ({path})")
    print(f"{'measure':<44}{'ours':>10}{'git':>10}{'ratio':>8}")
    for label, a, b in (
        (f"first page ({PAGE}) vs git log -{PAGE}", ours_t, git_t),
        (f"page 2, warm cursor vs --skip={PAGE}", warm_t, git_next_t),
        (f"page 2, cold cursor vs --skip={PAGE}", cold_t, git_next_t),
        ("agent-only page vs git log --author", agent_t, git_agent_t),
    ):
        print(f"{label:<44}{a * 1000:>8.1f}ms{b * 1000:>8.1f}ms{a / b:>8.2f}")
    print("(ratio = ours / git; below 1 means faster than git)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
