"""What binding, linking and auto-commit add to importing and watching, beside the same work without them.

  python bench/project_glue.py [--quick]

A real project repository with a few hundred commits, and Claude Code sessions whose cwd is that
repository (each turn writes a file with a Write call and commits it with `git commit`).
Figures (each beside its baseline, measured in the same run):

1. import: run_import with binding + linking vs run_import(bind=False) on the same files
   (fresh homes, durable=False so git/fsync noise does not hide the difference).
   Target: <= 1.3x.
2. watch, one live turn: prompt, Write call and reply appended, then poll + tick, with
   auto-commit vs without (both bind and link), on a session that already holds many turns.
   Target: auto-commit adds <= 50 ms per turn.
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pygit2

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import fmt, parser, report

from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import run_import
from opmem_tui.backend.importers.watch import Watcher
from opmem_tui.backend.projects.binding import ProjectBinder


def make_project(path: Path, commits: int, start: float) -> pygit2.Repository:
    repo = pygit2.init_repository(str(path), initial_head="main")
    sig_time = int(start)
    parents: list = []
    for i in range(commits):
        blob = repo.create_blob(f"version {i}\n".encode())
        builder = repo.TreeBuilder(repo[parents[0]].tree) if parents else repo.TreeBuilder()
        builder.insert(f"file{i % 50}.txt", blob, pygit2.GIT_FILEMODE_BLOB)
        sig = pygit2.Signature("Uma", "uma@example.com", sig_time + i * 60, 0)
        oid = repo.create_commit("refs/heads/main", sig, sig, f"change {i}", builder.write(), parents)
        parents = [oid]
    (path / "file0.txt").write_text("version 0\n")
    repo.checkout_head(strategy=pygit2.GIT_CHECKOUT_FORCE)
    return repo


class Session:
    """Claude Code records, as the CLI writes them."""

    def __init__(self, sid: str, cwd: Path, start: datetime) -> None:
        self.sid, self.cwd, self.clock = sid, cwd, start
        self.last: str | None = None
        self.n = 0
        self.lines: list[str] = []

    def rec(self, kind: str, parent: str | None = "last", **fields) -> str:
        self.n += 1
        self.clock += timedelta(seconds=2)
        uid = f"{self.n:08d}-0000-4000-8000-{abs(hash(self.sid)) % 10**12:012d}"
        record = {
            "parentUuid": self.last if parent == "last" else parent,
            "isSidechain": False,
            "type": kind,
            "uuid": uid,
            "cwd": str(self.cwd),
            "sessionId": self.sid,
            "version": "2.1.40",
            "timestamp": self.clock.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            **fields,
        }
        self.lines.append(json.dumps(record) + "\n")
        self.last = uid
        return uid

    def assistant(self, mid: str, *blocks: dict) -> str:
        return self.rec(
            "assistant",
            message={
                "id": mid,
                "role": "assistant",
                "model": "claude-bench",
                "content": list(blocks),
                "stop_reason": None,
            },
        )

    def turn(self, i: int, oid: str | None = None) -> None:
        self.rec("user", message={"role": "user", "content": f"task {i}: write out{i}.py and commit"})
        path = str(self.cwd / f"out{i}.py")
        call = self.assistant(
            f"msg_{self.sid[:8]}_{i}_w",
            {
                "type": "tool_use",
                "id": f"tw_{self.sid[:8]}_{i}",
                "name": "Write",
                "input": {"file_path": path, "content": "x\n"},
            },
        )
        self.rec(
            "user",
            call,
            message={
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"tw_{self.sid[:8]}_{i}", "content": "ok"}],
            },
        )
        if oid:
            call = self.assistant(
                f"msg_{self.sid[:8]}_{i}_c",
                {
                    "type": "tool_use",
                    "id": f"tc_{self.sid[:8]}_{i}",
                    "name": "Bash",
                    "input": {"command": f'git commit -m "out {i}"'},
                },
            )
            self.rec(
                "user",
                call,
                message={
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": f"tc_{self.sid[:8]}_{i}",
                            "content": f"[main {oid[:7]}] out {i}",
                        }
                    ],
                },
            )
        self.assistant(f"msg_{self.sid[:8]}_{i}_r", {"type": "text", "text": f"done {i}"})


def import_bench(work: Path, sessions: int, turns: int, commits: int) -> None:
    start = datetime.now(UTC) - timedelta(days=2)
    project = work / "project"
    repo = make_project(project, commits, start.timestamp())
    oids = [str(c.id) for c in repo.walk(repo.head.target)][::-1]
    folder = work / "claude" / "projects" / "-project"
    folder.mkdir(parents=True)
    for s in range(sessions):
        sess = Session(f"{s:08d}-1111-4000-8000-000000000000", project, start + timedelta(minutes=s * turns))
        for i in range(turns):
            sess.turn(i, oids[(s * turns + i) % len(oids)] if i % 3 == 0 else None)
        (folder / f"{sess.sid}.jsonl").write_text("".join(sess.lines))

    own = {"bind": 0.0, "link": 0.0}

    def timed(key: str, fn):
        def wrapper(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                own[key] += time.perf_counter() - t0

        return wrapper

    def run(bind: bool) -> float:
        home = Home(work / f"home-{bind}-{time.perf_counter_ns()}", durable=False)
        t0 = time.perf_counter()
        run_import(home, "claude", [work / "claude"], bind=bind)
        took = time.perf_counter() - t0
        if bind:
            links = home.projects.links.for_session(f"cc-{0:08d}-1111-4000-8000-000000000000")
            assert links, "no links were made"
        shutil.rmtree(home.path)
        return took

    times: dict[bool, list[float]] = {False: [], True: []}
    original = (ProjectBinder.__call__, ProjectBinder.link_pending)
    ProjectBinder.__call__ = timed("bind", original[0])
    ProjectBinder.link_pending = timed("link", original[1])
    try:
        for _ in range(3):  # interleaved, so drift in the machine's load hits both alike
            for bind in (False, True):
                times[bind].append(run(bind))
    finally:
        ProjectBinder.__call__, ProjectBinder.link_pending = original
    plain, glued = min(times[False]), min(times[True])
    print(f"import: {sessions} sessions x {turns} turns, project with {commits} commits")
    print("runs without:", ", ".join(fmt(t) for t in times[False]), "| with:", ", ".join(fmt(t) for t in times[True]))
    report("import with binding + linking", glued, plain, "without", "<= 1.3x", glued / plain <= 1.3)
    # The wall-clock ratio is at the mercy of a busy machine; the glue's own time is steadier.
    inside = (own["bind"] + own["link"]) / 3
    report("  of which binding + linking", inside, plain, "import without", "<= 0.3x", inside / plain <= 0.3)


class LiveEnv:
    """A project, a session with `history` turns already imported, and a watcher following it."""

    def __init__(self, base: Path, history: int, autocommit: bool) -> None:
        self.autocommit = autocommit
        self.project = base / "project"
        make_project(self.project, 20, time.time() - 3600)
        folder = base / "claude" / "projects" / "-project"
        folder.mkdir(parents=True)
        self.sess = Session(
            "22222222-1111-4000-8000-000000000000",
            self.project,
            datetime.now(UTC) - timedelta(seconds=2 * 8 * history + 60),
        )
        for i in range(history):
            self.sess.turn(i)
        self.path = folder / f"{self.sess.sid}.jsonl"
        self.path.write_text("".join(self.sess.lines))
        self.watcher = Watcher(
            Home(base / "home", durable=False), ["claude"], [base / "claude"], idle_seconds=0.0, autocommit=autocommit
        )
        self.watcher.catch_up()
        self.watcher.poll(self.path)  # the follower reads the history once
        self.watcher.tick(time.monotonic() + 1)

    def append(self, before: int) -> None:
        with open(self.path, "a") as fh:
            fh.write("".join(self.sess.lines[before:]))

    def live_turn(self, i: int) -> float:
        """The agent's records arrive in two batches; returns the watcher's time for both."""
        sess = self.sess
        before = len(sess.lines)
        sess.clock = datetime.now(UTC) - timedelta(seconds=1)
        sess.rec("user", message={"role": "user", "content": f"live task {i}"})
        self.append(before)
        t0 = time.perf_counter()
        self.watcher.poll(self.path)
        took = time.perf_counter() - t0
        before = len(sess.lines)
        call = sess.assistant(
            f"msg_live_{i}_w",
            {
                "type": "tool_use",
                "id": f"tlw_{i}",
                "name": "Write",
                "input": {"file_path": str(self.project / f"live{i}.py"), "content": "y\n"},
            },
        )
        (self.project / f"live{i}.py").write_text("y\n")
        sess.rec(
            "user",
            call,
            message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"tlw_{i}", "content": "ok"}]},
        )
        sess.assistant(f"msg_live_{i}_r", {"type": "text", "text": "done"})
        self.append(before)
        t0 = time.perf_counter()
        self.watcher.poll(self.path)
        self.watcher.tick(time.monotonic() + 1)
        return took + time.perf_counter() - t0

    def agent_commits(self) -> int:
        repo = pygit2.Repository(str(self.project))
        return sum(1 for c in repo.walk(repo.head.target) if c.author.name.endswith("via opmem)"))


def watch_bench(work: Path, history: int, live_turns: int) -> None:
    envs = {ac: LiveEnv(work / f"watch-{ac}", history, ac) for ac in (False, True)}
    times: dict[bool, list[float]] = {False: [], True: []}
    for i in range(history, history + live_turns):
        for ac, env in envs.items():  # interleaved turn by turn
            times[ac].append(env.live_turn(i))
    assert envs[True].agent_commits() == live_turns and envs[False].agent_commits() == 0
    without, with_ac = statistics.median(times[False]), statistics.median(times[True])
    print(f"watch: a session with {history} turns, {live_turns} live turns (median per turn)")
    report("watch turn with auto-commit", with_ac, without, "without", "<= +50 ms", with_ac - without <= 0.05)
    print(f"auto-commit adds {fmt(with_ac - without)} per turn")


def main() -> None:
    args = parser(__doc__.splitlines()[0]).parse_args()
    with tempfile.TemporaryDirectory(prefix="opmem-bench-glue-") as tmp:
        work = Path(tmp)
        if args.quick:
            import_bench(work, sessions=5, turns=20, commits=100)
            watch_bench(work, history=100, live_turns=5)
        else:
            import_bench(work, sessions=30, turns=40, commits=600)
            watch_bench(work, history=500, live_turns=20)


if __name__ == "__main__":
    main()
