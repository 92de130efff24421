"""First page of a project's log on a huge repository, beside `git log` of the same repository.

    python bench/project_log.py            # 50,000 commits (generated once, cached in bench/out/)
    python bench/project_log.py --quick    # 5,000 commits, fewer runs
    python bench/project_log.py --breakdown   # also: where each side's time goes

The repository is written with pygit2 objects (a small tree per commit, one changed file, every
7th commit by an agent) and packed by `git repack`, as a real long-lived repository would be. A
copy with a commit-graph (`git commit-graph write`, as `git gc` / `git maintenance` leave one) is
measured too: git reads it, libgit2 does not.

Two kinds of run, ours and git's interleaved run by run so both see the same machine load (the
ratio printed is the median of the per-run ratios):
- warm: the page cache holds the repository; ours is a fresh ProjectGit(path).log(300) in a
  process that has read the repository before (the app looking at a project again);
- cold: the repository's files are dropped from the page cache (posix_fadvise) before every run,
  and ours is the first log(300) in a fresh process (imports done, nothing of the repository
  read yet): the first look after the machine has been busy elsewhere.
git is `git log -300 --format=...` run as a subprocess, its output split into records.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pygit2
from pygit2.enums import FileMode, SortMode

from opmem_tui.backend.projects.repository import ProjectGit, commit_info

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


def with_commit_graph(path: Path) -> Path:
    """A copy of the repository with a commit-graph file."""
    graph = path.with_name(path.name + "-graph")
    marker = graph / ".complete"
    if not marker.exists() or not (graph / ".git" / "objects" / "info" / "commit-graph").exists():
        shutil.rmtree(graph, ignore_errors=True)
        shutil.copytree(path, graph, symlinks=True, ignore=shutil.ignore_patterns(".complete"))
        subprocess.run(["git", "-C", str(graph), "commit-graph", "write", "--reachable"], check=True)
        marker.write_text("commit-graph")
    return graph


def evict(path: Path) -> None:
    """Drop the repository's files from the page cache (no root needed: they are ours)."""
    for folder, _dirs, files in os.walk(path / ".git"):
        for name in files:
            fd = os.open(os.path.join(folder, name), os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def git_log(path: Path, *extra: str) -> list[list[bytes]]:
    out = subprocess.run(
        ["git", "-C", str(path), "log", f"-{PAGE}", *extra, f"--format={FORMAT}"], capture_output=True, check=True
    ).stdout
    return [line.split(b"\x1f") for line in out.splitlines()]


class Pairs:
    """Interleaved runs of ours and the baseline: wall times, CPU times, per-run ratios."""

    def __init__(self) -> None:
        self.ours: list[float] = []
        self.base: list[float] = []
        self.ours_cpu: list[float] = []
        self.base_cpu: list[float] = []

    def add(self, ours: float, base: float, ours_cpu: float, base_cpu: float) -> None:
        self.ours.append(ours)
        self.base.append(base)
        self.ours_cpu.append(ours_cpu)
        self.base_cpu.append(base_cpu)

    @property
    def ratio(self) -> float:
        return statistics.median(a / b for a, b in zip(self.ours, self.base, strict=True))

    def row(self, label: str) -> str:
        ratio = self.ratio
        cpu = statistics.median(self.ours_cpu) / max(statistics.median(self.base_cpu), 1e-9)
        med = statistics.median
        return (
            f"{label:<44}{med(self.ours) * 1000:>8.1f}ms{med(self.base) * 1000:>8.1f}ms{ratio:>7.2f}"
            f"   cpu {med(self.ours_cpu) * 1000:>5.1f} / {med(self.base_cpu) * 1000:>5.1f} ms ({cpu:.2f})"
        )


def warm_pairs(ours: Callable[[], object], base: Callable[[], object], runs: int) -> Pairs:
    ours(), base()
    pairs = Pairs()
    for _ in range(runs):
        start, cpu = time.perf_counter(), time.process_time()
        ours()
        ours_t, ours_c = time.perf_counter() - start, time.process_time() - cpu
        start, cpu = time.perf_counter(), children_cpu()
        base()
        pairs.add(ours_t, time.perf_counter() - start, ours_c, children_cpu() - cpu)
    return pairs


_COLD_CHILD = """
import json, os, sys, time
sys.path.insert(0, sys.argv[2])
from project_log import evict
from opmem_tui.backend.projects.repository import ProjectGit
from pathlib import Path
path = Path(sys.argv[1])
evict(path)
start, cpu = time.perf_counter(), time.process_time()
page = ProjectGit(path).log(300)
print(json.dumps([time.perf_counter() - start, time.process_time() - cpu, page[-1].oid]))
"""


def cold_pairs(path: Path, runs: int) -> Pairs:
    pairs = Pairs()
    here = str(Path(__file__).resolve().parent)
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", _COLD_CHILD, str(path), here], capture_output=True, text=True, check=True
        ).stdout
        ours_t, ours_c, last = json.loads(out)
        evict(path)
        start, cpu = time.perf_counter(), children_cpu()
        page = git_log(path)
        pairs.add(ours_t, time.perf_counter() - start, ours_c, children_cpu() - cpu)
        assert page[-1][0].decode() == last, "pages differ"
    return pairs


def breakdown(path: Path, runs: int) -> None:
    """Where the time of one first page goes, on each side (best of `runs`, warm)."""

    def best(fn: Callable[[], object]) -> float:
        times = []
        for _ in range(runs):
            start = time.process_time()
            fn()
            times.append(time.process_time() - start)
        return min(times) * 1000

    head = pygit2.Repository(str(path)).head.target

    def walk() -> list[pygit2.Commit]:
        return [c for c, _ in zip(pygit2.Repository(str(path)).walk(head, SortMode.NONE), range(PAGE), strict=False)]

    commits = walk()
    print(f"breakdown (CPU ms, best of {runs}, warm page cache):")
    print(f"  libgit2: open + walk {PAGE} commits (fresh Repository)   {best(walk):6.2f}")
    print(
        f"  Python: {PAGE} CommitInfo records                       {best(lambda: [commit_info(c) for c in commits]):6.2f}"
    )
    print(
        f"  ours: ProjectGit(path).log({PAGE})                        {best(lambda: ProjectGit(path).log(PAGE)):6.2f}"
    )
    spawn = []
    for _ in range(runs):
        cpu, start = children_cpu(), time.perf_counter()
        subprocess.run(["git", "--version"], capture_output=True, check=True)
        spawn.append((children_cpu() - cpu, time.perf_counter() - start))
    print(
        f"  git: start-up alone (git --version): cpu {min(s[0] for s in spawn) * 1000:.2f}, wall {min(s[1] for s in spawn) * 1000:.2f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="5,000 commits and fewer runs")
    parser.add_argument("--commits", type=int, default=None)
    parser.add_argument("--breakdown", action="store_true", help="where each side's time goes")
    args = parser.parse_args()
    count = args.commits or (5_000 if args.quick else 50_000)
    runs = 9 if args.quick else 31
    cold_runs = 5 if args.quick else 15
    path = OUT / f"project-log-{count}"
    OUT.mkdir(parents=True, exist_ok=True)
    generate(path, count)
    graph = with_commit_graph(path)

    # Cold runs first: once this process has opened a repository, libgit2 keeps its pack mapped
    # and the page cache cannot drop it.
    cold = cold_pairs(path, cold_runs)
    cold_graph = cold_pairs(graph, cold_runs)
    assert [c.oid for c in ProjectGit(path).log(PAGE)] == [r[0].decode() for r in git_log(path)], "pages differ"
    cursor = ProjectGit(path).log(PAGE)[-1].oid
    rows = [
        ("first page, warm", warm_pairs(lambda: ProjectGit(path).log(PAGE), lambda: git_log(path), runs)),
        ("first page, cold", cold),
        (
            "first page, warm, commit-graph",
            warm_pairs(lambda: ProjectGit(graph).log(PAGE), lambda: git_log(graph), runs),
        ),
        ("first page, cold, commit-graph", cold_graph),
        (
            f"page 2, cold cursor vs --skip={PAGE}",
            warm_pairs(lambda: ProjectGit(path).log(PAGE, after=cursor), lambda: git_log(path, f"--skip={PAGE}"), runs),
        ),
        (
            "agent-only page vs git log --author",
            warm_pairs(
                lambda: ProjectGit(path).log(PAGE, agent_only=True), lambda: git_log(path, "--author=via opmem)"), runs
            ),
        ),
    ]
    pg = ProjectGit(path)
    warm_cursor = Pairs()
    for _ in range(runs):
        pg.log(PAGE)
        start, cpu = time.perf_counter(), time.process_time()
        pg.log(PAGE, after=cursor)
        ours_t, ours_c = time.perf_counter() - start, time.process_time() - cpu
        start, cpu = time.perf_counter(), children_cpu()
        git_log(path, f"--skip={PAGE}")
        warm_cursor.add(ours_t, time.perf_counter() - start, ours_c, children_cpu() - cpu)
    rows.insert(4, (f"page 2, warm cursor vs --skip={PAGE}", warm_cursor))

    print(f"repository: {count:,} commits, packed ({path}); runs: {runs} warm, {cold_runs} cold")
    print(f"{'measure':<44}{'ours':>10}{'git':>10}{'ratio':>7}   cpu ours / git (ratio)")
    for label, pairs in rows:
        print(pairs.row(label))
    print("(ratio = median over runs of ours / git, interleaved; below 1 means faster than git)")
    met = all(pairs.ratio <= 1 for _, pairs in rows[:4])
    print(f"target: first page <= 1 x git, warm and cold, with and without commit-graph: {'MET' if met else 'MISSED'}")
    if args.breakdown:
        breakdown(path, runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
