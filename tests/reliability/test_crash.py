"""Crash suite: a writer process killed with SIGKILL at a random moment, then the store checked.

Writers (tests/reliability/crash_writer.py): node append, commit_turn (with retry branches),
import of a large transcript (with the search-index hook), project auto-commit, memory append,
a distillation run, an index update. After each kill the home is reopened and checked:
every node (and commit, memory record) acknowledged before the kill is there; `git fsck
--strict` is clean after the backfill and no node file is left out of git; whole memory log
lines all parse and the logs fold (a cache rebuilt from them gives the same counts); a
rebuilt search index equals the incremental one; the project repo holds only whole agent
commits, at most one more than were acknowledged.

Short mode (CI): 3 trials per writer (21). Long mode: `python bench/reliability.py --suite
crash --long`. The seed is printed and named in every failure: `OPMEM_RELIABILITY_SEED=<n>`
replays the same kinds, workloads and kill delays.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pygit2
import pytest

from opmem_tui.backend.distill.pipeline import RunOptions, run
from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import run_import
from opmem_tui.backend.importers.hooks import IngestHooks
from opmem_tui.backend.importers.state import ImportState
from opmem_tui.backend.memory.core import consolidation_day, core_path, render_core
from opmem_tui.backend.memory.views import render_entity_view, view_path
from opmem_tui.backend.model import OpmemError
from opmem_tui.backend.projects.agent_commit import AgentCommitter
from opmem_tui.backend.projects.repository import ProjectGit

from .stores import bad_lines, bad_log_lines, fsck, index_dump, memory_lines, read_acks, reopen_and_fsck, start_writer

KINDS = ("append", "commit", "import", "memory", "autocommit", "distill", "index")
# Kill delays are drawn after the writer says "ready": for the writers that write until killed,
# from [0, MAX_DELAY + the time they took here to acknowledge ENDLESS_ACKS writes] (so a slow
# first write, e.g. an auto-commit's project setup under load, is not all a trial ever sees);
# for the finite ones (import, distill, index) from [0, 0.9 x the time an uninterrupted run of
# the same writer took here], so they die mid-way.
MAX_DELAY = 1.5
ENDLESS_ACKS = 3
FINITE = ("import", "distill", "index")
# The long mode's transcript: each import trial runs the import twice (killed, then again to
# recover), verifies and fscks its sessions and rebuilds the index, so its size sets the pace:
# 12,000 lines took ~150 s a trial on the loaded 2-core machine, too slow for 200 trials.
LONG_IMPORT_LINES = 4_000


def suite_seed() -> int:
    env = os.environ.get("OPMEM_RELIABILITY_SEED")
    return int(env) if env else random.SystemRandom().randrange(1 << 31)


@dataclass
class Figures:
    seed: int
    trials: Counter = field(default_factory=Counter)
    killed: Counter = field(default_factory=Counter)  # killed mid-work (the others had finished)
    acknowledged: int = 0
    lost: int = 0
    corrupt: int = 0
    problems: list[str] = field(default_factory=list)
    durations: dict[str, float] = field(default_factory=dict)  # the kill windows' timings (Templates)

    def add(self, kind: str, result: TrialResult) -> None:
        self.trials[kind] += 1
        self.killed[kind] += result.killed
        self.acknowledged += result.acknowledged
        self.lost += result.lost
        self.corrupt += len(result.corrupt)
        self.problems.extend(f"[{kind} seed {result.seed}] {p}" for p in (*result.lost_ids, *result.corrupt))


@dataclass
class TrialResult:
    seed: int
    killed: bool = False
    acknowledged: int = 0
    lost: int = 0
    lost_ids: list[str] = field(default_factory=list)
    corrupt: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------- templates


def node_text(session_id: str, number: int) -> str:
    return f"message {number} of {session_id}: " + "lorem ipsum " * (number % 7)


def write_transcript(path: Path, lines: int) -> int:
    """A generic-JSONL transcript of `lines` messages in 4 sessions (tool calls included)."""
    out = []
    for n in range(lines):
        record = {
            "session": f"big{n // 3 % 4}",
            "id": f"m{n}",
            "role": ("user", "assistant", "tool")[n % 3],
            "content": f"line {n}: the worker listens on port {4000 + n % 5}; " + "report " * (n % 9),
            "timestamp": 1_700_000_000 + n,
        }
        if record["role"] == "tool":
            record["name"] = "Bash"
            record["input"] = {"command": f"pytest -q tests/test_{n % 13}.py"}
        out.append(json.dumps(record))
    path.write_text("\n".join(out) + "\n")
    return lines


def coding_corpus(home: Home, sessions: int) -> None:
    """Coding sessions the rules extractor finds events, entities and edges in."""
    for k in range(sessions):
        sid = f"s{k}"
        clock = 1_700_000_000.0 + 1000 * k
        store = home.sessions
        last = None
        for turn in range(3):
            clock += 10
            user = store.append_message(
                sid,
                "user",
                f"Mel asked for the report; the worker listens on port {4000 + (k + turn) % 3} now",
                parent_id=last,
                created_at=clock,
                session_meta={"cwd": "/work/proj"} if last is None else None,
            )
            reply = store.append_message(
                sid,
                "assistant",
                "We decided to keep SQLite for the index.",
                parent_id=user.id,
                name="m",
                created_at=clock + 1,
            )
            store.append_message(
                sid, "tool", "def f(): return 1", parent_id=reply.id, called_by=reply.id, name="Read",
                input={"file_path": f"/work/proj/src/mod{k}_{turn}.py"}, created_at=clock + 2,
            )  # fmt: skip
            store.append_message(
                sid, "tool", f"=== {10 + k} passed in 0.3s ===", parent_id=reply.id, called_by=reply.id, name="Bash",
                input={"command": "pip install httpx && pytest -q"}, created_at=clock + 3,
            )  # fmt: skip
            last = reply.id
            store.commit_turn(sid)
    home.sessions.flush()


class Templates:
    """A starting home per writer kind, built once and copied for every trial."""

    def __init__(self, base: Path, long: bool = False) -> None:
        self.base = base
        self.long = long
        self._built: set[str] = set()
        self.reference: Counter | None = None
        self.transcript_lines = 0
        self.durations: dict[str, float] = {}

    def max_delay(self, kind: str) -> float:
        self.path(kind)
        return 0.9 * self.durations[kind] if kind in FINITE else MAX_DELAY + self.durations[kind]

    def path(self, kind: str) -> Path:
        folder = self.base / kind
        if kind not in self._built:
            folder.mkdir(parents=True, exist_ok=True)
            self._build(kind, folder)
            self._built.add(kind)
        return folder

    def _build(self, kind: str, folder: Path) -> None:
        home = Home(folder / "home")
        if kind == "import":
            self.transcript_lines = write_transcript(
                folder / "transcript.jsonl", LONG_IMPORT_LINES if self.long else 600
            )
        elif kind in ("distill", "index"):
            coding_corpus(home, 16 if self.long else 5)
            if kind == "distill":
                scratch = self.base / "distill-reference"
                shutil.copytree(folder, scratch)
                run(Home(scratch / "home"), RunOptions(flush_records=1))
                self.reference = memory_lines(Home(scratch / "home"))
                shutil.rmtree(scratch)
        if kind == "autocommit":
            project = folder / "project"
            project.mkdir()
            repo = pygit2.init_repository(str(project))
            (project / "README.md").write_text("the user's project\n")
            repo.index.add("README.md")
            repo.index.write()
            sig = pygit2.Signature("User", "user@example.com")
            repo.create_commit("HEAD", sig, sig, "initial", repo.index.write_tree(), [])
            repo.config["user.name"] = "User"
            repo.config["user.email"] = "user@example.com"
        home.path.mkdir(parents=True, exist_ok=True)
        self.durations[kind] = self._time_writer(kind, folder)

    def _time_writer(self, kind: str, folder: Path) -> float:
        """Seconds from "ready" to the end of an uninterrupted run (finite writers) or to the
        writer's ENDLESS_ACKS-th acknowledgement (the others), on a copy of the template."""
        scratch = self.base / f"{kind}-timing"
        shutil.copytree(folder, scratch)
        child = start_writer(kind, scratch / "home", scratch / "acks", 0)
        child.stdout.readline()
        started = time.monotonic()
        if kind in FINITE:
            child.communicate()
        else:  # polled: the writer reports through the fsynced file only
            while len(read_acks(scratch / "acks")) < ENDLESS_ACKS and child.poll() is None:
                time.sleep(0.02)
            child.kill()
            child.communicate()
        took = time.monotonic() - started
        shutil.rmtree(scratch)
        return took


# ---------------------------------------------------------------------------- one trial


def trial(kind: str, seed: int, templates: Templates, work: Path) -> TrialResult:
    rng = random.Random(seed)
    folder = work / f"{kind}-{seed}"
    delay = rng.uniform(0.0, templates.max_delay(kind))
    shutil.copytree(templates.path(kind), folder)
    home_path, acks = folder / "home", folder / "acks"
    result = TrialResult(seed)
    child = start_writer(kind, home_path, acks, seed)
    try:
        ready = child.stdout.readline()
        if ready.strip() != "ready":
            result.corrupt.append(f"writer did not start: {ready!r} {child.stderr.read()[-2000:]}")
            return result
        time.sleep(delay)  # the random kill point
        child.send_signal(signal.SIGKILL)
        code = child.wait(120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    result.killed = code == -signal.SIGKILL
    if code not in (0, -signal.SIGKILL):
        result.corrupt.append(f"writer failed (exit {code}): {child.stderr.read()[-2000:]}")
    child.stdout.close()
    child.stderr.close()
    CHECKS[kind](Home(home_path), read_acks(acks), result, templates)
    shutil.rmtree(folder, ignore_errors=True)
    return result


def check_nodes(home: Home, acks: list[list[str]], result: TrialResult, templates: Templates) -> None:
    result.corrupt.extend(reopen_and_fsck(home))
    expected: dict[tuple[str, str], str] = {}
    for ack in acks:
        if ack[0] == "node":
            _, sid, nid, number = ack
            expected[(sid, nid)] = "ok" if number == "tool" else node_text(sid, int(number))
    result.acknowledged += len(expected)
    for (sid, nid), text in expected.items():
        try:
            found = home.sessions.get_node(sid, nid).content
        except Exception as exc:  # a lost node is the finding, whatever the error
            found = f"<{type(exc).__name__}: {exc}>"
        if found != text:
            result.lost += 1
            result.lost_ids.append(f"acknowledged node {sid}/{nid} lost: {found[:80]!r}")
    for ack in acks:
        if ack[0] == "commit":
            _, sid, oid = ack
            path = home.sessions.path_for(sid)
            proc = subprocess.run(
                ["git", "-C", str(path), "for-each-ref", "--contains", oid, "refs/heads"],
                capture_output=True,
                text=True,
            )
            if proc.returncode or not proc.stdout.strip():
                result.lost += 1
                result.lost_ids.append(f"acknowledged commit {oid} of {sid} on no branch: {proc.stderr.strip()}")


def check_import(home: Home, acks: list[list[str]], result: TrialResult, templates: Templates) -> None:
    # The next run recovers: the same import again completes the sessions, nothing doubled.
    state = ImportState(home.path / "import-state.json")
    if state.problem:
        result.corrupt.append(f"{state.path}: {state.problem}")
    transcript = home.path.parent / "transcript.jsonl"
    report = run_import(
        home, "jsonl", [transcript], bind=False, hooks=IngestHooks(after_ingest=(home.search_index.after_ingest,))
    )
    if report.warnings:
        result.corrupt.append(f"import again warned: {report.warnings[:3]}")
    result.corrupt.extend(reopen_and_fsck(home))
    nodes = sum(len(home.sessions.get_nodes(meta.id)) for meta in home.sessions.list_sessions().sessions)
    if nodes != templates.transcript_lines:
        result.corrupt.append(
            f"{nodes} nodes after the import ran again, the transcript has {templates.transcript_lines}"
        )
    if any(ack[0] == "imported" for ack in acks):
        result.acknowledged += templates.transcript_lines
    check_index_equals_rebuild(home, result)


def check_index_equals_rebuild(home: Home, result: TrialResult) -> None:
    service = home.search_index
    service.update()
    incremental = index_dump(home)
    service.rebuild()
    rebuilt = index_dump(home)
    service.close()
    if not incremental["docs"] or not incremental["terms"]:
        result.corrupt.append("the search index is empty after the update")
    if incremental != rebuilt:
        differs = [key for key in incremental if incremental[key] != rebuilt[key]]
        result.corrupt.append(f"the incremental index differs from a rebuilt one in {differs}")


def check_memory(home: Home, acks: list[list[str]], result: TrialResult, templates: Templates) -> None:
    result.corrupt.extend(bad_log_lines(home))
    memory = home.memory
    for ack in acks:
        if ack[0] in ("event", "edge"):
            result.acknowledged += 1
            found = memory.event(ack[1]) if ack[0] == "event" else memory.edge(ack[1])
            if found is None:
                result.lost += 1
                result.lost_ids.append(f"acknowledged {ack[0]} {ack[1]} lost")
    logs = len(list(home.memory_dir.rglob("*.jsonl")))
    torn = [p for p in memory.problems() if "torn" not in p.message.lower()]
    if torn or len(memory.problems()) > logs:
        result.corrupt.append(f"memory problems after a kill: {[str(p) for p in memory.problems()]}")
    fold_equals_cache(home, result)
    memory.close()


def check_distill(home: Home, acks: list[list[str]], result: TrialResult, templates: Templates) -> None:
    result.corrupt.extend(bad_log_lines(home))
    day = consolidation_day(time.time())
    run(home, RunOptions(flush_records=1))  # the next run recovers
    days = {day, consolidation_day(time.time())}  # (a run across midnight UTC)
    if memory_lines(home) != templates.reference:
        result.corrupt.append("a killed distillation, run again, does not end with the records of a whole run")
    fold_equals_cache(home, result)
    result.corrupt.extend(stale_projections(home, days))
    check_index_equals_rebuild(home, result)
    if run(home, RunOptions()).written.total:
        result.corrupt.append("a third run still wrote records")
    home.memory.close()


def fold_equals_cache(home: Home, result: TrialResult) -> None:
    """The memory's logs fold to what its cache says (a cache rebuilt from the logs alone)."""
    before = home.memory.stats()
    home.memory.rebuild_cache()
    if home.memory.stats() != before:
        result.corrupt.append(f"the logs fold to {home.memory.stats()} from scratch, the cache said {before}")


def stale_projections(home: Home, days: set) -> list[str]:
    """core.md files and entity views that differ from what the memory renders now."""
    memory = home.memory
    stale: list[str] = []
    projects = ["", *sorted(s.split(":", 1)[1] for s in memory.scopes() if s.startswith("project:"))]
    names = {p.id: p.name for p in home.projects.list_projects()}
    for pid in projects:
        path = core_path(memory.root, pid)
        on_disk = path.read_bytes() if path.exists() else None
        # as write_cores renders it: a project no binding names (known from sessions) has no git log to offer
        name, bound = names.get(pid, ""), pid in names or not pid
        if all(on_disk != render_core(memory, day, pid, name, bound=bound).encode() for day in days):
            stale.append(f"{path} is {'stale' if on_disk else 'missing'} after the next run")
    for entity_id in memory.entity_ids():
        path = view_path(memory.root, entity_id)
        if not path.exists() or path.read_bytes() != render_entity_view(memory, entity_id).encode():
            stale.append(f"the view of {entity_id} is {'stale' if path.exists() else 'missing'} after the next run")
    return stale[:5] + ([f"... {len(stale) - 5} more"] if len(stale) > 5 else [])


def check_index(home: Home, acks: list[list[str]], result: TrialResult, templates: Templates) -> None:
    check_index_equals_rebuild(home, result)


def check_project(home: Home, acks: list[list[str]], result: TrialResult, templates: Templates) -> None:
    result.corrupt.extend(reopen_and_fsck(home))
    project = home.path.parent / "project"
    # A writer killed between taking a git lock and renaming it leaves the lock (git itself does
    # too); the next auto-commit removes the ones its mark names before anything else.
    AgentCommitter(ProjectGit(project)).recover()
    out = fsck(project)
    if out:
        result.corrupt.append(f"project repo: git fsck --strict: {out}")
    for lock in (
        project / ".git" / "index.lock",
        project / ".git" / "HEAD.lock",
        project / ".git" / "refs/heads/master.lock",
    ):
        if lock.exists():
            result.corrupt.append(f"stale {lock.name} left in the user's repo")
    repo = pygit2.Repository(str(project))
    commits = []
    for commit in repo.walk(repo.head.target):
        if not commit.parents:
            break
        commits.append(commit)
    acked = [ack[1] for ack in acks if ack[0] == "project" and ack[1] != "-"]
    result.acknowledged += len(acked)
    ids = {str(c.id) for c in commits}
    for oid in acked:
        if oid not in ids:
            result.lost += 1
            result.lost_ids.append(f"acknowledged agent commit {oid} not on HEAD")
    if len(commits) - len(acked) not in (0, 1):
        result.corrupt.append(f"{len(commits)} agent commits, {len(acked)} acknowledged: more than one unacknowledged")
    for commit in commits:
        result.corrupt.extend(_whole_agent_commit(repo, commit))
    result.corrupt.extend(project_files(home, acked, acks))


def project_files(home: Home, acked: list[str], acks: list[list[str]]) -> list[str]:
    """projects.json reads and holds the session; every acknowledged agent commit is linked to
    its turn in links.jsonl; every whole line of the JSONL logs (links, warnings) parses."""
    problems: list[str] = []
    registry = home.projects
    try:
        projects = registry.list_projects()
    except OpmemError as exc:
        return [f"projects.json after a kill: {exc}"]
    if not projects:  # killed before the project was bound
        return ["acknowledged agent commits, but projects.json lists no project"] if acked else []
    [project] = projects
    if acked and not project.sessions:
        problems.append("projects.json does not list the agent's session")
    for oid in acked:
        if not registry.links_for_commit(project.id, oid):
            problems.append(f"acknowledged agent commit {oid} has no link to its turn")
    for log in (registry.links.path, registry.warnings_path):
        if log.exists():
            problems.extend(f"{log}:{n}: a whole line that does not parse" for n in bad_lines(log))
    return problems


def _whole_agent_commit(repo: pygit2.Repository, commit: pygit2.Commit) -> list[str]:
    if commit.author.email != "agent@opmem.invalid":
        return [f"commit {commit.id} is not the agent's: {commit.author}"]
    diff = repo.diff(commit.parents[0], commit)
    paths = [patch.delta.new_file.path for patch in diff]
    turn = commit.message.split("Opmem-Turn: ")[-1].strip()
    if len(paths) != 1 or not paths[0].startswith("src/agent_"):
        return [f"commit {commit.id} changes {paths}, not the one file the agent wrote"]
    blob = commit.tree[paths[0]]
    want = f"# written by the agent, turn {int(turn) - 1}\nvalue = {int(turn) - 1}\n".encode()
    if repo[blob.id].data != want:
        return [f"commit {commit.id}: {paths[0]} holds {repo[blob.id].data[:60]!r}, not what the agent wrote"]
    return []


CHECKS = {
    "append": check_nodes,
    "commit": check_nodes,
    "import": check_import,
    "memory": check_memory,
    "autocommit": check_project,
    "distill": check_distill,
    "index": check_index,
}


def run_trials(
    kinds: tuple[str, ...],
    per_kind: int,
    seed: int,
    base: Path,
    *,
    long: bool = False,
    deadline: Callable[[], bool] | None = None,
    progress: Callable[[str, TrialResult], None] | None = None,
) -> Figures:
    """per_kind trials of each kind (interleaved), stopping early once `deadline()` is true."""
    figures = Figures(seed)
    templates = Templates(base / "templates", long=long)
    figures.durations = templates.durations
    work = base / "trials"
    work.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    for _ in range(per_kind):
        for kind in kinds:
            if deadline is not None and deadline():
                return figures
            result = trial(kind, rng.randrange(1 << 31), templates, work)
            figures.add(kind, result)
            if progress is not None:
                progress(kind, result)
    return figures


SEED = suite_seed()
SHORT_TRIALS = {"append": 3, "commit": 3, "import": 3, "memory": 3, "autocommit": 3, "distill": 3, "index": 2}  # 20


@pytest.mark.parametrize("kind", KINDS)
def test_killed_writer_loses_nothing_acknowledged(kind: str, tmp_path: Path) -> None:
    seed = SEED + KINDS.index(kind)
    print(f"crash suite seed: OPMEM_RELIABILITY_SEED={SEED} ({kind})")
    figures = run_trials((kind,), SHORT_TRIALS[kind], seed, tmp_path)
    replay = f"replay with OPMEM_RELIABILITY_SEED={SEED}"
    assert figures.trials[kind] == SHORT_TRIALS[kind]
    assert figures.lost == 0, f"{replay}: {figures.problems}"
    assert figures.corrupt == 0, f"{replay}: {figures.problems}"
