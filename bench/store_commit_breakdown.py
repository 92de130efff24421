"""Where the time of append + commit per turn goes, and what a slower fsync would do to the ratio.

  python bench/store_commit_breakdown.py [--quick]

Grows a 200-turn session (4 nodes a turn, as bench/store_bench.py), then times the last turns
with durable node files, each part measured by wrapping the function that does it: node files
(JSON + write + rename), their group fsync, meta.json rewrites, object hashing, pack writing,
pack merging, refs/HEAD, change tokens and in-flight markers. The baseline is the same files
written with fsync and committed by `git add -A && git commit`, in the same run. Last, the ratio
is projected for a disk whose fsync is k times slower than this one's, from the sync time each
side spends per turn (git itself fsyncs nothing by default; counted with strace when present).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import cpu_now, fmt, parser
from store_bench import git_baseline, grow, write_turn

from opmem_tui.backend.store import git_mirror, node_log, packs, packwriter, session_repo, sessions, writers
from opmem_tui.backend.store.sessions import SessionStore

SPENT: dict[str, float] = defaultdict(float)
CALLS: dict[str, int] = defaultdict(int)
_ACTIVE: list[str] = []


def timed(owner: Any, name: str, label: str) -> None:
    """Wrap owner.name so its time counts under `label` (exclusive of other timed parts inside it)."""
    fn = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        _ACTIVE.append(label)
        try:
            return fn(*args, **kwargs)
        finally:
            _ACTIVE.pop()
            spent = time.perf_counter() - start
            SPENT[label] += spent
            CALLS[label] += 1
            if _ACTIVE:
                SPENT[_ACTIVE[-1]] -= spent  # keep the enclosing part exclusive

    setattr(owner, name, wrapper)


def instrument() -> None:
    timed(node_log, "sync_files", "node files: the one disk flush (fsync of history/)")
    if node_log._sync_file_range is not None:
        timed(node_log, "_sync_file_range", "node files: data write-out (sync_file_range)")
    timed(node_log, "dump_compact_json", "node JSON encoding")
    timed(node_log, "write_atomic", "node files: write + rename")
    timed(session_repo.SessionRepo, "_write_meta", "meta.json rewrite")
    timed(git_mirror, "object_id", "object hashing (SHA-1)")
    timed(packwriter, "object_id", "object hashing (SHA-1)")
    timed(git_mirror, "write_pack", "pack writing (zlib, idx, 2 files)")
    timed(packs.Packs, "merge_if_due", "pack merging")
    timed(git_mirror.GitMirror, "_set_ref", "refs and HEAD")
    timed(git_mirror.GitMirror, "checkout", "refs and HEAD")
    timed(git_mirror.GitMirror, "_write_index", "git index")
    timed(sessions, "_write_token", "change tokens")
    timed(writers.InFlight, "set", "in-flight marker")


def fsync_per_turn(folder: Path, turns: int = 20) -> float:
    """The baseline's own fsyncs: four small files a turn, fsynced one by one."""
    start = time.perf_counter()
    for t in range(turns):
        for j in range(4):
            fd = os.open(folder / f"f{t}-{j}", os.O_WRONLY | os.O_CREAT, 0o644)
            os.write(fd, b"x" * 400)
            os.fsync(fd)
            os.close(fd)
    return (time.perf_counter() - start) / turns


def git_fsyncs(work: Path) -> str:
    if shutil.which("strace") is None:
        return "not counted (no strace)"
    repo = work / "strace"
    repo.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b"}
    env["GIT_COMMITTER_EMAIL"] = "b@b"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a").write_text("a")
    trace = work / "trace"
    cmd = f"git -C {repo} add -A && git -C {repo} commit -q -m t"
    subprocess.run(
        ["strace", "-f", "-o", str(trace), "-e", "trace=fsync,fdatasync,syncfs,sync_file_range", "sh", "-c", cmd],
        check=True,
        capture_output=True,
        env=env,
    )
    count = sum(1 for line in trace.read_text().splitlines() if "sync" in line and "resumed" not in line)
    return f"{count} per add+commit (strace)"


def main() -> None:
    args = parser(__doc__.splitlines()[0]).parse_args()
    size, measured = 200, (20 if args.quick else 50)
    with tempfile.TemporaryDirectory(prefix="opmem-bench-") as tmp:
        work = Path(tmp)
        root = work / "s200"
        grow(SessionStore(root, durable=False), "s", size - measured)
        instrument()
        store = SessionStore(root, durable=True)
        SPENT.clear()
        CALLS.clear()
        start, cpu = time.perf_counter(), cpu_now()
        for k in range(size - measured, size):
            write_turn(store, "s", k)
        ours = (time.perf_counter() - start) / measured
        ours_cpu = (cpu_now() - cpu) / measured
        spent = dict(SPENT)
        base, base_cpu = git_baseline(root / "s", work, size - measured, measured)
        (work / "fs").mkdir()
        base_sync = fsync_per_turn(work / "fs")
        print(f"append (4 nodes) + commit per turn at {size} turns, {measured} turns measured:")
        print(f"  ours {fmt(ours)}  vs git add -A && git commit {fmt(base)}  ratio {ours / base:.2f}")
        print(
            f"  CPU: ours {fmt(ours_cpu)}  vs git add -A && git commit {fmt(base_cpu)}  ratio {ours_cpu / base_cpu:.2f}"
        )
        print("where our time goes (per turn):")
        for label, part in sorted(spent.items(), key=lambda kv: -kv[1]):
            print(f"  {label:<52} {fmt(part / measured):>9}  {100 * part / measured / ours:5.1f} %")
        rest = ours - sum(spent.values()) / measured
        label = "the rest (graph, commit building, locks, Python)"
        print(f"  {label:<52} {fmt(rest):>9}  {100 * rest / ours:5.1f} %")
        flush = spent.get("node files: the one disk flush (fsync of history/)", 0.0) / measured
        ours_sync = flush + spent.get("node files: data write-out (sync_file_range)", 0.0) / measured
        print(
            f"durability per turn: ours {fmt(ours_sync)} (write-out + one flush), baseline {fmt(base_sync)} (4 fsyncs)"
        )
        print(f"  git itself: {git_fsyncs(work)}")
        print("projected ratio on a disk whose syncs are k times slower than this one's:")
        for k in (1, 2, 5, 10, 50):
            rows = []
            for what, extra in (("all sync time scales", ours_sync), ("only flushes scale", flush)):
                o = ours + (k - 1) * extra
                b = base + (k - 1) * base_sync
                rows.append(f"{what}: {o / b:.2f} {'MET' if o * 3 <= b else 'MISSED'}")
            print(f"  k={k:<3} " + ";  ".join(rows))


if __name__ == "__main__":
    main()
