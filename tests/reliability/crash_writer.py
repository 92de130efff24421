"""The writer process of the crash suite: `python crash_writer.py KIND HOME ACKS [SEED]`.

It writes through the real code and reports each write the code acknowledged (returned from)
by appending a line to ACKS and fsyncing it, so the parent knows what must survive a SIGKILL.
It prints "ready" once its imports are done; the parent kills it at a random moment after that.
The endless kinds (append, commit, memory, autocommit) write until killed.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

from opmem_tui.backend.home import Home


class Acks:
    def __init__(self, path: Path) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def __call__(self, *fields: str) -> None:
        os.write(self.fd, (" ".join(fields) + "\n").encode())
        os.fsync(self.fd)


def node_text(session_id: str, number: int) -> str:
    return f"message {number} of {session_id}: " + "lorem ipsum " * (number % 7)


def append_nodes(home: Home, ack: Acks, seed: int) -> None:
    """Nodes into three sessions, never committed (the next open backfills them)."""
    store = home.sessions
    number = 0
    while True:
        sid = f"append-{seed}-{number % 3}"
        role = "user" if number % 2 == 0 else "assistant"
        node = store.append_message(sid, role, node_text(sid, number))
        ack("node", sid, node.id, str(number))
        number += 1


def commit_turns(home: Home, ack: Acks, seed: int) -> None:
    """User, assistant, a tool node, then commit_turn; a retry branch now and then."""
    store = home.sessions
    number = 0
    while True:
        sid = f"commit-{seed}-{number % 2}"
        user = store.append_message(sid, "user", node_text(sid, number))
        ack("node", sid, user.id, str(number))
        reply = store.append_message(sid, "assistant", node_text(sid, number + 1))
        ack("node", sid, reply.id, str(number + 1))
        tool = store.append_message(sid, "tool", "ok", called_by=reply.id, name="Read", input={"file_path": "a.py"})
        ack("node", sid, tool.id, "tool")
        oid = store.commit_turn(sid)
        if oid:
            ack("commit", sid, oid)
        if number % 5 == 4:  # a retry from the turn before: a new branch
            again = store.append_message(sid, "assistant", node_text(sid, number + 2), parent_id=user.id)
            ack("node", sid, again.id, str(number + 2))
            oid = store.commit_turn(sid)
            if oid:
                ack("commit", sid, oid)
        number += 3


def import_transcript(home: Home, ack: Acks, seed: int) -> None:
    from opmem_tui.backend.importers import run_import
    from opmem_tui.backend.importers.hooks import IngestHooks

    transcript = home.path.parent / "transcript.jsonl"
    hooks = IngestHooks(after_ingest=(home.search_index.after_ingest,))
    report = run_import(home, "jsonl", [transcript], bind=False, hooks=hooks)
    ack("imported", str(report.nodes))


def memory_append(home: Home, ack: Acks, seed: int) -> None:
    from opmem_tui.backend.memory.records import Edge, Entity, Event, entity_id
    from opmem_tui.backend.model import Provenance

    memory = home.memory
    number = 0
    while True:
        prov = Provenance("", f"s{number % 4}", (f"n{number}",), None, 1_780_000_000.0 + number, 1_790_000_000.0)
        name = f"module{number % 11}.py"
        ent = Entity(entity_id("file", name), "file", name, (), {}, "global", prov)
        summary = f"edited {name} in step {number} ({seed})"
        event = Event(Event.make_id(summary, "work", prov), summary, "work", 0.5, prov, (ent.id,))
        person = Entity(entity_id("person", "Mel"), "person", "Mel", (), {}, "global", prov)
        edge = Edge(Edge.make_id(person.id, "edited", ent.id, prov), person.id, ent.id, "edited", prov, 0.9, "global")
        memory.append([ent, person, event, edge])
        ack("event", event.id)
        ack("edge", edge.id)
        number += 1


def distill_run(home: Home, ack: Acks, seed: int) -> None:
    """A whole run as `opmem distill` does it: records, then core.md, entity views and the index."""
    from opmem_tui.backend.distill.pipeline import RunOptions, run

    run(home, RunOptions(project=PROJECT, flush_records=1))
    ack("distilled")


def index_update(home: Home, ack: Acks, seed: int) -> None:
    report = home.search_index.update()
    ack("indexed", str(report))


def autocommit(home: Home, ack: Acks, seed: int) -> None:
    """An agent turn in a bound project: the agent writes a file, opmem commits it for the agent."""
    project_dir = home.path.parent / "project"
    registry = home.projects
    project = registry.resolve_project(project_dir)
    store = home.sessions
    sid = f"agent-{seed}"
    number = 0
    while True:
        watch = registry.begin_turn(project.id)
        user = store.append_message(sid, "user", f"write file {number}")
        reply = store.append_message(sid, "assistant", "writing it")
        rel = f"src/agent_{number % 4}.py"
        content = f"# written by the agent, turn {number}\nvalue = {number}\n"
        path = project_dir / rel
        path.parent.mkdir(exist_ok=True)
        path.write_text(content)
        tool = store.append_message(
            sid,
            "tool",
            "File written",
            called_by=reply.id,
            name="Write",
            input={"file_path": str(path), "content": content},
        )
        store.commit_turn(sid)
        result = registry.commit_agent_turn(watch, [user, reply, tool], session_id=sid, turn_number=number + 1)
        ack("project", result.commit or "-", rel, str(number))
        number += 1


KINDS = {
    "append": append_nodes,
    "commit": commit_turns,
    "import": import_transcript,
    "memory": memory_append,
    "distill": distill_run,
    "index": index_update,
    "autocommit": autocommit,
}


PROJECT = "project" in sys.argv[5:]  # the distillation run projects too (the crash suite's default)


def main() -> None:
    kind, home_path, acks = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    home = Home(home_path)
    ack = Acks(acks)
    if kind in ("import", "distill", "index"):  # load the heavy modules before "ready"
        for module in ("distill.pipeline", "importers", "memory.search_service"):
            importlib.import_module(f"opmem_tui.backend.{module}")
    print("ready", flush=True)
    KINDS[kind](home, ack, seed)
    print("finished", flush=True)


if __name__ == "__main__":
    main()
