"""Session-Git store figures (issue: foundation), each beside a baseline measured in this run.

  python bench/store_bench.py [--quick]

1. append_message + commit_turn (durable node files) vs `git add -A && git commit` of the same
   files, per turn, at 200 turns and at 2,000 turns.
2. On-disk size of a 200-turn, 50-nodes-a-turn session after packing vs its node bytes.
3. Listing 10,000 sessions cold and warm vs a bare scandir + json.loads of every meta.json.
4. get_branch on a 2,000-turn session vs listing its history folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import best_of, cpu_now, fmt, median_wall_cpu, parser, report, report_cpu

from opmem_tui.backend.store.sessions import SessionStore

NODES_PER_TURN = 4  # user, assistant with one tool call, the tool, the final reply


def write_turn(store: SessionStore, sid: str, k: int) -> None:
    store.append_message(sid, "user", f"turn {k}: please look at module_{k}.py and fix the bug " + "x" * 120)
    a = store.append_message(sid, "assistant", "Reading the file first.")
    store.append_message(
        sid,
        "tool",
        f"def f_{k}():\n    return {k}\n" * 8,
        called_by=a.id,
        name="read",
        input={"path": f"module_{k}.py"},
    )
    store.append_message(sid, "assistant", f"Fixed module_{k}.py: the return value was off by one." + "y" * 100)
    store.commit_turn(sid)


def grow(store: SessionStore, sid: str, turns: int) -> None:
    for k in range(turns):
        write_turn(store, sid, k)


def git_baseline(session_dir: Path, work: Path, start_turn: int, turns: int) -> float:
    """Same node files, committed by the git CLI: write files (fsynced), git add -A, git commit."""
    repo = work / "baseline"
    if repo.exists():
        shutil.rmtree(repo)
    repo.mkdir()
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@b",
    }
    run = lambda *a: subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True, env=env)  # noqa: E731
    run("init", "-q")
    history = sorted((session_dir / "history").iterdir())
    (repo / "history").mkdir()
    per_turn = NODES_PER_TURN
    existing = history[: start_turn * per_turn]
    for f in existing:
        shutil.copy(f, repo / "history" / f.name)
    shutil.copy(session_dir / "meta.json", repo / "meta.json")
    if existing:
        run("add", "-A")
        run("commit", "-q", "-m", "seed")
    todo = history[start_turn * per_turn : (start_turn + turns) * per_turn]
    start, cpu = time.perf_counter(), cpu_now()
    for t in range(turns):
        for f in todo[t * per_turn : (t + 1) * per_turn]:
            data = f.read_bytes()
            fd = os.open(repo / "history" / f.name, os.O_WRONLY | os.O_CREAT, 0o644)
            os.write(fd, data)
            os.fsync(fd)
            os.close(fd)
        subprocess.run(
            f"git -C {repo} add -A && git -C {repo} commit -q -m 'turn {start_turn + t}'",
            shell=True,
            check=True,
            capture_output=True,
            env=env,
        )
    return (time.perf_counter() - start) / turns, (cpu_now() - cpu) / turns


def commit_speed(work: Path, size: int, measured: int) -> None:
    root = work / f"commit-{size}"
    fast = SessionStore(root, durable=False)  # build the prefix quickly; the measured turns are durable
    grow(fast, "s", size - measured)
    store = SessionStore(root, durable=True)
    start, cpu = time.perf_counter(), cpu_now()
    for k in range(size - measured, size):
        write_turn(store, "s", k)
    ours = (time.perf_counter() - start) / measured
    ours_cpu = (cpu_now() - cpu) / measured
    base, base_cpu = git_baseline(root / "s", work, size - measured, measured)
    if size <= 200:
        report(
            f"append+commit per turn, {size}-turn session",
            ours,
            base,
            "git add -A && git commit",
            ">= 3x faster (ratio <= 0.33)",
            ours * 3 <= base,
        )
    else:
        report(
            f"append+commit per turn, {size}-turn session",
            ours,
            base,
            "git add -A && git commit",
            "no slower (ratio <= 1)",
            ours <= base,
        )
    report_cpu(f"append+commit per turn, {size}-turn session", ours_cpu, base_cpu, "git add -A && git commit")


def packed_size(work: Path, turns: int, nodes: int) -> None:
    root = work / "size"
    store = SessionStore(root, durable=False, pack_threshold=10**9)
    for k in range(turns):
        store.append_message("s", "user", f"turn {k}: do the thing number {k} " + "lorem ipsum " * 10)
        a = store.append_message("s", "assistant", f"working on {k}")
        for j in range(nodes - 3):
            store.append_message(
                "s",
                "tool",
                f"output of tool {j} in turn {k}\n" + f"line {j}\n" * 10,
                called_by=a.id,
                name=("read", "grep", "bash")[j % 3],
            )
        store.append_message("s", "assistant", f"done with {k}")
        store.commit_turn("s")
    path = root / "s"
    node_bytes = sum(f.stat().st_size for f in (path / "history").iterdir())
    loose = sum(f.stat().st_size for f in (path / ".git").rglob("*") if f.is_file())
    store.pack("s")
    git_bytes = sum(f.stat().st_size for f in (path / ".git").rglob("*") if f.is_file())
    print(f"(before packing: .git {loose / 1e6:.1f} MB loose)")
    report(
        f"packed .git of {turns} turns x {nodes} nodes",
        git_bytes,
        node_bytes,
        "node file bytes",
        "<= 3x",
        git_bytes <= 3 * node_bytes,
        unit="bytes",
    )


def listing(work: Path, count: int) -> None:
    root = work / "many"
    root.mkdir(parents=True)
    for i in range(count):
        d = root / f"s{i:05d}"
        (d / "history").mkdir(parents=True)
        meta = {
            "id": d.name,
            "title": f"session {i}",
            "title_source": "excerpt",
            "agent_id": "",
            "project_id": "",
            "source": "claude-code",
            "source_ref": {"file": f"/home/u/.claude/projects/x/{i}.jsonl", "native_id": f"n{i}"},
            "created_at": 1.7e9 + i,
            "updated_at": 1.7e9 + 2 * i,
            "head_id": "abc",
            "turns": i % 40,
            "preview": f"prompt {i}",
        }
        (d / "meta.json").write_text(json.dumps(meta, indent=1))

    def bare() -> None:
        out = []
        with os.scandir(root) as it:
            for e in it:
                if e.is_dir():
                    with open(os.path.join(e.path, "meta.json"), "rb") as fh:
                        out.append(json.loads(fh.read()))
        out.sort(key=lambda m: m["updated_at"], reverse=True)

    def cold() -> None:
        assert len(SessionStore(root).list_sessions().sessions) == count

    base = best_of(bare, 3)
    ours_cold = best_of(cold, 3)
    base_cpu = median_wall_cpu(bare, 3)[1]
    cold_cpu = median_wall_cpu(cold, 3)[1]
    warm_store = SessionStore(root)
    warm_store.list_sessions()
    ours_warm = best_of(warm_store.list_sessions, 20)
    report(f"list {count} sessions cold", ours_cold, base, "scandir + json.loads", "<= 0.3 s", ours_cold <= 0.3)
    report_cpu(f"list {count} sessions cold", cold_cpu, base_cpu, "scandir + json.loads")
    report(f"list {count} sessions warm", ours_warm, base, "scandir + json.loads", "<= 20 ms", ours_warm <= 0.02)


def branch_speed(work: Path, turns: int) -> None:
    root = work / f"commit-{turns}"
    store = SessionStore(root)
    store.get_branch("s")  # open once: the cache holds it, as in the app
    ours = best_of(lambda: store.get_branch("s"), 10)
    base = best_of(lambda: os.listdir(root / "s" / "history"), 10)
    n = len(store.get_branch("s"))
    report(f"get_branch, {turns}-turn session ({n} nodes)", ours, base, "os.listdir(history)", "<= 20 ms", ours <= 0.02)
    ours_cpu = median_wall_cpu(lambda: store.get_branch("s"), 10)[1]
    base_cpu = median_wall_cpu(lambda: os.listdir(root / "s" / "history"), 10)[1]
    report_cpu(f"get_branch, {turns}-turn session", ours_cpu, base_cpu, "os.listdir(history)")
    cold = best_of(lambda: SessionStore(root).get_branch("s"), 3)
    print(f"(get_branch on a cold store, opening the session first: {fmt(cold)})")


def main() -> None:
    args = parser(__doc__.splitlines()[0]).parse_args()
    big = 400 if args.quick else 2000
    with tempfile.TemporaryDirectory(prefix="opmem-bench-") as tmp:
        work = Path(tmp)
        commit_speed(work, 200, 50)
        commit_speed(work, big, 50)
        packed_size(work, 50 if args.quick else 200, 50)
        listing(work, 2000 if args.quick else 10000)
        branch_speed(work, big)


if __name__ == "__main__":
    main()
