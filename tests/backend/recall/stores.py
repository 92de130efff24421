"""Small real stores for the recall tests: sessions written through the store, a bound project
whose agent commit was made by the real auto-commit path, and links between them."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from opmem_tui.backend.home import Home
from opmem_tui.backend.memory.records import GLOBAL, Edge, Entity, Event, entity_id, project_scope
from opmem_tui.backend.model import Provenance

T0 = 1_750_000_000.0  # 2025-06-15, fixed so dates in replies are stable

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Uma User",
    "GIT_AUTHOR_EMAIL": "uma@example.com",
    "GIT_COMMITTER_NAME": "Uma User",
    "GIT_COMMITTER_EMAIL": "uma@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str, when: float | None = None) -> str:
    env = {**os.environ, **GIT_ENV}
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"@{int(when)} +0000"
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


@dataclass(frozen=True)
class Built:
    home: Home
    project_id: str
    workdir: Path
    session_id: str  # bound to the project, three turns, one agent commit
    other_id: str  # unbound, one turn with a long tool output
    agent_commit: str
    user_commit: str


def build_store(root: Path, *, long_output: str = "line\n" * 300) -> Built:
    home = Home(root / "home", durable=False)
    home.ensure()
    workdir = root / "shop"
    workdir.mkdir()
    git(workdir, "init", "-q", "-b", "main")
    (workdir / "README.md").write_text("shop\n")
    git(workdir, "add", "-A")
    git(workdir, "commit", "-q", "-m", "initial commit", when=T0 - 3600)
    project = home.projects.resolve_project(workdir, name="shop")
    store = home.sessions
    sid = "cc-shop-session"
    location = home.projects.session_location(project.id, sid)
    meta = {"title": "Add a greeting to the shop", "project_id": project.id, "source": "claude"}

    watch = home.projects.begin_turn(project.id)
    u1 = store.append_message(
        sid, "user", "Add a greeting module", created_at=T0, session_meta=meta, location=location, node_id="u1"
    )
    a1 = store.append_message(sid, "assistant", "I'll write greet.py.", created_at=T0 + 5, node_id="a1")
    (workdir / "greet.py").write_text("def greet():\n    return 'hi'\n")
    t1 = store.append_message(
        sid,
        "tool",
        "File written",
        called_by=a1.id,
        name="Write",
        input={"file_path": str(workdir / "greet.py"), "content": "def greet():\n    return 'hi'\n"},
        created_at=T0 + 6,
        node_id="t1",
    )
    a1b = store.append_message(sid, "assistant", "Done: greet() returns 'hi'.", created_at=T0 + 8, node_id="a1b")
    store.commit_turn(sid)
    turn1 = store.get_turns(sid)[0]
    result = home.projects.commit_agent_turn(
        watch, turn1, session_id=sid, turn_number=1, user_message=u1.content, model="claude-test"
    )
    assert result.commit, result
    store.append_message(sid, "user", "Run the tests", created_at=T0 + 60, node_id="u2")
    a2 = store.append_message(sid, "assistant", "Running pytest.", created_at=T0 + 61, node_id="a2")
    store.append_message(
        sid,
        "tool",
        long_output,
        called_by=a2.id,
        name="Bash",
        input={"command": "pytest -q"},
        created_at=T0 + 62,
        node_id="t2",
    )
    store.append_message(sid, "assistant", "All green.", created_at=T0 + 70, node_id="a2b")
    store.commit_turn(sid)
    store.append_message(sid, "user", "Thanks", created_at=T0 + 120, node_id="u3")
    store.append_message(sid, "assistant", "You're welcome.", created_at=T0 + 121, node_id="a3")
    store.commit_turn(sid)
    del t1, a1b

    (workdir / "README.md").write_text("shop\n\nA small shop.\n")
    git(workdir, "add", "-A")
    git(workdir, "commit", "-q", "-m", "docs: describe the shop", when=T0 + 300)
    user_commit = git(workdir, "rev-parse", "HEAD").strip()

    other = "codex-notes"
    store.append_message(other, "user", "Summarise the notes", created_at=T0 + 1000, node_id="ou1")
    store.append_message(other, "assistant", "Here is the summary.", created_at=T0 + 1001, node_id="oa1")
    store.commit_turn(other)
    store.flush()
    return Built(home, project.id, workdir, sid, other, result.commit, user_commit)


@dataclass(frozen=True)
class Memory:
    worker: str  # entity ids
    port: str
    old_port: str
    uvicorn: str
    hub: str | None
    other_project_event: str  # an event of another project's scope: never visible from the shop


def _prov(built: Built, turn: int, when: float, session: str | None = None, project: str | None = None) -> Provenance:
    return Provenance(
        built.project_id if project is None else project,
        built.session_id if session is None else session,
        (f"u{turn}",),
        None,
        when,
        when + 5,
        turn,
    )


def add_memory(built: Built, *, hub_edges: int = 0) -> Memory:
    """A distilled memory over the built store: events, entities, a superseded edge, scopes."""
    memory = built.home.memory
    project = project_scope(built.project_id)

    def ent(kind: str, name: str, scope: str = project, aliases: tuple[str, ...] = ()) -> Entity:
        return Entity(entity_id(kind, name), kind, name, aliases, {}, scope, _prov(built, 1, T0))

    worker = ent("service", "worker", aliases=("the worker",))
    port = ent("port", ":18109")
    old_port = ent("port", ":8000")
    uvicorn = ent("package", "uvicorn", scope=GLOBAL)
    greet = ent("file", "greet.py")
    entities = [worker, port, old_port, uvicorn, greet]

    def ev(summary: str, turn: int, when: float, kind: str = "work", scope: str = project, **kw: str) -> Event:
        p = _prov(built, turn, when, **kw)
        ids = tuple(e.id for e in entities if e.name.strip(":") in summary)
        return Event(Event.make_id(summary, kind, p), summary, kind, 0.8, p, ids, scope)

    events = [
        ev("Added greet.py with a greet() function", 1, T0 + 5),
        ev("Decided the worker listens on :18109 instead of :8000", 2, T0 + 65, kind="decision"),
        ev("Learnt that uvicorn needs --reload off in tests", 3, T0 + 121, kind="learning", scope=GLOBAL),
        ev("Work in a session that was deleted since", 1, T0 + 30, session="gone-session"),
        ev("Another project's event", 1, T0 + 40, scope="project:elsewhere-123456", project="elsewhere-123456"),
    ]

    def edge(src: Entity, relation: str, dst: Entity, turn: int, when: float, confidence: float = 0.9) -> Edge:
        p = _prov(built, turn, when)
        return Edge(Edge.make_id(src.id, relation, dst.id, p), src.id, dst.id, relation, p, confidence, project)

    old = edge(worker, "listens-on", old_port, 1, T0 + 10)
    new = edge(worker, "listens-on", port, 2, T0 + 65)
    edges = [old, new, edge(worker, "depends-on", uvicorn, 2, T0 + 66), edge(greet, "part-of", worker, 1, T0 + 6)]
    hub = None
    if hub_edges:
        center = ent("concept", "hub")
        hub = center.id
        spokes = [ent("file", f"spoke_{i:05d}.py") for i in range(hub_edges)]
        entities += [center, *spokes]
        edges += [edge(center, "mentions", s, 1, T0 + 200 + i, 0.8) for i, s in enumerate(spokes)]
    memory.append([*entities, *events, *edges])
    memory.supersede(old.id, new.id, reason="the worker moved to :18109")
    memory.close()
    return Memory(worker.id, port.id, old_port.id, uvicorn.id, hub, events[-1].id)


def build_index(built: Built) -> None:
    """memory/index.sqlite over the store and its memory, as `opmem index rebuild` makes it."""
    service = built.home.search_index
    service.rebuild()
    service.close()
