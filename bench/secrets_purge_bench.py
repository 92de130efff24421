"""`opmem secrets` figures, each beside a baseline measured in the same run.

  python bench/secrets_purge_bench.py [--quick]

1. `scan` of a whole store (node files and meta.json read directly, find_secrets on every string)
   beside reading and parsing the same files and running find_secrets on every string of them
   (the detector's own cost: what scan adds is the rest). Target: <= 1.3 x. Shown too: beside
   the bare reading (read_bytes + json.loads), which tells the detector's share.
2. `purge` of one long session (300 turns, a secret in every tenth prompt: its git history is
   rewritten from turn 1 on, every branch, then repacked) beside a full repack of the same repo
   (what the daily sleep does to it). Target: <= 10 x the repack.

The corpus is generated through the real SessionStore (every session a real git repo) in a
temporary folder each run.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import parser, report

from opmem_tui.backend.home import Home
from opmem_tui.backend.privacy import find_secrets
from opmem_tui.backend.privacy.scan import NODE_FIELDS, scan, strings_of
from opmem_tui.backend.secrets_purge import plan_purge, purge

TOKEN = "ghp_" + "aB3dE5fG7h" * 3 + "K9mN2p"
TOOL_OUTPUT = "\n".join(f"tests/test_mod{i}.py::test_case_{i} PASSED  [{i}%]" for i in range(40))


def build(home: Home, sessions: int, turns: int, secret_every: int) -> None:
    store = home.sessions
    for s in range(sessions):
        sid = f"s{s:04d}"
        with store.batch(sid) as batch:
            for t in range(turns):
                secret = f" with {TOKEN}" if secret_every and t % secret_every == 1 else ""
                batch.append("user", f"Please fix the failing test number {t} in module {s}{secret}.")
                a = batch.append("assistant", f"I ran the tests and fixed test {t}; the cause was an off-by-one.")
                batch.append("tool", TOOL_OUTPUT, called_by=a.id, name="bash", input={"command": f"pytest -k case_{t}"})
                batch.commit_turn()


def read_all(root: Path, detect: bool = False) -> int:
    n = 0
    for entry in os.scandir(root):
        if not entry.is_dir() or entry.name.startswith("."):
            continue
        meta = json.loads((Path(entry.path) / "meta.json").read_bytes())
        if detect:
            for text in strings_of(meta):
                find_secrets(text)
        for f in os.scandir(Path(entry.path) / "history"):
            data = json.loads(Path(f.path).read_bytes())
            if detect:
                for text in strings_of([data.get(k) for k in NODE_FIELDS]):
                    find_secrets(text)
            n += 1
    return n


def main() -> None:
    args = parser(__doc__ or "").parse_args()
    sessions, turns = (40, 20) if args.quick else (200, 25)
    tmp = Path(tempfile.mkdtemp(prefix="opmem-secrets-bench-"))
    try:
        home = Home(tmp / "store", durable=False)
        build(home, sessions, turns, secret_every=0)
        build(Home(tmp / "store", durable=False), 1, turns, secret_every=5)  # s0000 again: a few secrets
        nodes = read_all(home.sessions_dir)
        base = min(_timed(lambda: read_all(home.sessions_dir, detect=True)) for _ in range(3))
        bare = min(_timed(lambda: read_all(home.sessions_dir)) for _ in range(3))
        ours = min(_timed(lambda: list(scan(home.sessions))) for _ in range(3))
        name = f"scan of {sessions} sessions, {nodes} nodes"
        report(name, ours, base, "read + json.loads + find_secrets", "<= 1.3x", ours <= 1.3 * base)
        report(name, ours, bare, "read + json.loads only", "(the detector's share, no target)", True)

        long_home = Home(tmp / "long", durable=False)
        build(long_home, 1, 100 if args.quick else 300, secret_every=10)
        repo_path = long_home.sessions_dir / "s0000"
        copy = tmp / "copy"
        shutil.copytree(repo_path, copy)
        import pygit2

        from opmem_tui.backend.store.packs import Packs

        base = _timed(lambda: Packs(copy / ".git", 50).repack(pygit2.Repository(str(copy))))
        plan = plan_purge(long_home)
        start = time.perf_counter()
        done = purge(long_home, plan)
        ours = time.perf_counter() - start
        report(
            f"purge of a {done.commits_rewritten}-commit session ({done.findings} findings)",
            ours,
            base,
            "full repack of it",
            "<= 10x",
            ours <= 10 * base,
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
