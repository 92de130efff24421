"""MemoryStore: appends, idempotence, folding, supersede and alias patches, bad lines, the derived cache."""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
import math
import os
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from opmem_tui.backend.home import Home
from opmem_tui.backend.memory.cache import CACHE_NAME, MemoryRecord, _json_texts
from opmem_tui.backend.memory.logs import LogAppender, month_log
from opmem_tui.backend.memory.records import Event, Patch
from opmem_tui.backend.memory.results import AmbiguousEntity, EntityNotFound, RecordNotFound
from opmem_tui.backend.memory.sqlite_files import remove_database
from opmem_tui.backend.memory.store import InvalidRecord, MemoryStore
from opmem_tui.backend.memory.temporal import pack_ids, unpack_ids
from opmem_tui.backend.memory.timeline import InvalidQuery
from opmem_tui.backend.memory.writer import _line, _plain
from opmem_tui.backend.model import Provenance
from opmem_tui.backend.store.files import dump_compact_json, dump_json_line

from .sample import DAY, T0, edge, entity, event

WORKER = entity("service", "worker")
P8080 = entity("port", ":8080")
P9090 = entity("port", ":9090")


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return MemoryStore(tmp_path / "memory")


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_append_writes_the_agreed_layout_and_is_idempotent(store: MemoryStore):
    ev = event("Moved the worker to :9090", T0 + 40 * DAY, entities=(WORKER,))
    e1 = edge(WORKER, "listens-on", P8080, T0)
    first = store.append([WORKER, P8080, ev, e1])
    assert (first.entities, first.events, first.edges, first.skipped) == (2, 1, 1, 0)
    again = store.append([WORKER, P8080, ev, e1, e1])
    assert again.added == 0 and again.skipped == 5
    root = store.root
    assert lines_of(root / "timeline" / "2026-07.jsonl") == [json.dumps(ev.to_json(), separators=(",", ":"))]
    assert len(lines_of(root / "graph" / "entities.jsonl")) == 2
    assert len(lines_of(root / "graph" / "edges.jsonl")) == 1
    assert store.event(ev.id) == ev and store.edge(e1.id) == e1
    assert store.stats().events == 1 and store.problems() == ()


def test_supersede_folds_without_editing_and_orders_by_event_time(store: MemoryStore):
    old, new = edge(WORKER, "listens-on", P8080, T0), edge(WORKER, "listens-on", P9090, T0 + 10 * DAY)
    store.append([WORKER, P8080, P9090, old, new])
    before = (store.root / "graph" / "edges.jsonl").read_bytes()
    patch = store.supersede(old.id, new.id, "listens-on is single-valued", at=T0 + 11 * DAY)
    after = (store.root / "graph" / "edges.jsonl").read_bytes()
    assert after.startswith(before)  # appended, never edited
    assert json.loads(after[len(before) :]) == patch.to_json()
    assert store.edge(old.id).superseded_by == new.id and store.edge(new.id).superseded_by is None
    assert store.supersede(old.id, new.id, "again") is None  # idempotent
    # the argument order does not matter: the later fact retires the earlier
    older = edge(WORKER, "listens-on", entity("port", ":7070"), T0 - DAY)
    store.append([older])
    swapped = store.supersede(new.id, older.id, "late import")
    assert (swapped.id, swapped.by) == (older.id, new.id)
    assert store.edge(new.id).superseded_by is None
    page = store.neighbors("worker")
    assert [g.edge.id for g in page.edges] == [new.id] and page.hidden_superseded == 2


P7070 = entity("port", ":7070")
LATE = edge(WORKER, "listens-on", P7070, T0 + 5 * DAY)  # in a torn tail only


def _patched_history(root: Path, tail: bytes = b"") -> tuple[MemoryStore, list[tuple[str, str, str, float]]]:
    """Edges and events in two months, one pair already patched, and patches to write: swapped,
    repeated, already held, a record missing, an edge with an event, one retiring `LATE`."""
    store = MemoryStore(root)
    e = [edge(WORKER, "listens-on", p, T0 + k * DAY, session=f"s{k}") for k, p in enumerate((P8080, P9090) * 2)]
    a, b, c = event("Tests fail", T0), event("Tests fail (again)", T0 + 40 * DAY), event("CI red", T0 + 41 * DAY)
    store.append([WORKER, P8080, P9090, P7070, *e, a, b, c])
    store.supersede(e[2].id, e[3].id, "held before", at=T0 + 50 * DAY)
    if tail:
        with (root / "graph" / "edges.jsonl").open("ab") as fh:
            fh.write(tail)  # a write cut before its "\n"
    at = T0 + 60 * DAY
    patches = [
        (e[1].id, e[0].id, "swapped", at),
        (a.id, b.id, "duplicate", at + 1),
        (c.id, a.id, "to the newer month", at + 2),
        (e[0].id, "ed-missing", "missing", at + 3),
        (e[1].id, b.id, "an edge with an event", at + 4),
        (e[0].id, e[1].id, "repeated", at + 5),
        (e[2].id, e[3].id, "held", at + 6),
        (e[0].id, LATE.id, "retired by the torn tail's record", at + 7),
        (e[1].id, e[2].id, "last", at + 8),
    ]
    return store, patches


def _logs(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.jsonl"))}


@pytest.mark.parametrize(
    "tail",
    [
        b"",
        json.dumps(LATE.to_json(), separators=(",", ":")).encode(),  # a whole record, sealed into a good line
        b'{"op":"supersede","id":"ed-x","by"',
    ],
    ids=["clean", "torn-record", "torn-bytes"],
)
def test_supersede_many_lands_as_one_by_one(tmp_path: Path, tail: bytes, monkeypatch: pytest.MonkeyPatch):
    one, patches = _patched_history(tmp_path / "one" / "memory", tail)
    expected: list = []
    for old, new, reason, at in patches:
        try:
            expected.append(one.supersede(old, new, reason, at=at))
        except RecordNotFound:
            expected.append(None)
    many, _ = _patched_history(tmp_path / "many" / "memory", tail)
    appends: list[str] = []
    write = LogAppender.write
    monkeypatch.setattr(
        LogAppender, "write", lambda self, name, lines: appends.append(name) or write(self, name, lines)
    )
    with many.batch() as writer:
        got = writer.supersede_many(patches)
    assert got == expected and expected.count(None) == (4 if tail[-1:] == b"}" else 5)
    assert _logs(many.root) == _logs(one.root)
    if not tail:  # one append per log, not one per patch
        assert sorted(appends) == ["graph/edges.jsonl", "timeline/2026-07.jsonl"]
    for s in (many, MemoryStore(many.root)):
        for view in (
            lambda m: [(g.edge.id, g.edge.superseded_by) for g in m.edges(include_superseded=True, limit=None)],
            lambda m: [(e.id, e.superseded_by) for e in m.timeline(include_superseded=True).events],
        ):
            assert view(s) == view(one)
        assert [p.message for p in s.problems()] == [p.message for p in one.problems()]


def test_supersede_errors_are_typed(store: MemoryStore):
    e1 = edge(WORKER, "listens-on", P8080, T0)
    ev = event("x", T0)
    store.append([e1, ev])
    with pytest.raises(RecordNotFound, match="nope"):
        store.supersede(e1.id, "nope")
    with pytest.raises(RecordNotFound):
        store.supersede(e1.id, ev.id)  # an edge is not retired by an event
    with pytest.raises(InvalidRecord, match="itself"):
        store.supersede(e1.id, e1.id)


def test_event_supersede_goes_to_the_newer_month_and_folds_on_reopen(store: MemoryStore):
    a = event("Tests fail on CI", T0, importance=0.9)
    b = event("Tests fail on CI (re-distilled)", T0 + 40 * DAY, importance=0.9)
    store.append([a, b])
    store.supersede(a.id, b.id, "duplicate", at=T0 + 41 * DAY)
    assert '"op":"supersede"' in (store.root / "timeline" / "2026-07.jsonl").read_text()
    reopened = MemoryStore(store.root)
    page = reopened.timeline()
    assert [e.id for e in page.events] == [b.id] and page.hidden_superseded == 1
    with_old = reopened.timeline(include_superseded=True)
    assert [(e.id, e.superseded_by) for e in with_old.events] == [(b.id, None), (a.id, b.id)]


def test_events_with_key_find_the_copies_of_one_slot(store: MemoryStore):
    first = event("Edited 2 files", T0)
    second = event("Edited 2 files under backend/store", T0)
    first = Event(first.id, first.summary, first.kind, 0.5, first.provenance, key="work:s1:n1")
    second = Event(second.id, second.summary, second.kind, 0.5, second.provenance, key="work:s1:n1")
    store.append([first])
    store.append([second, event("unrelated", T0)])
    assert [e.id for e in store.events_with_key("work:s1:n1")] == [first.id, second.id]
    store.supersede(first.id, second.id, "re-distilled")
    assert [e.superseded_by for e in store.events_with_key("work:s1:n1")] == [second.id, None]
    assert MemoryStore(store.root).event(second.id).key == "work:s1:n1"
    assert store.events_with_key("") == ()


def test_bad_records_are_refused(store: MemoryStore):
    bad_scope = Event("ev-1", "s", "work", 0.5, event("s", T0).provenance, (), "../etc")
    with pytest.raises(InvalidRecord, match="scope"):
        store.append([bad_scope])
    with pytest.raises(InvalidRecord, match="kind"):
        store.append([Event("ev-2", "s", "gossip", 0.5, event("s", T0).provenance)])
    assert store.stats().events == 0


def test_torn_last_line_is_skipped_then_sealed(store: MemoryStore):
    e1 = edge(WORKER, "listens-on", P8080, T0)
    store.append([WORKER, P8080, e1])
    log = store.root / "graph" / "edges.jsonl"
    with log.open("ab") as fh:
        fh.write(b'{"id": "ed-torn", "from": "a"')  # a crash mid-append
    reader = MemoryStore(store.root)
    assert reader.stats().edges == 1
    (problem,) = reader.problems()
    assert (problem.path, problem.line) == (str(log), 2) and "incomplete last line" in problem.message
    e2 = edge(WORKER, "listens-on", P9090, T0 + DAY)
    store.append([P9090, e2])  # the writer seals the torn bytes first: never glued to a record
    assert log.read_bytes().count(b"\n") == 3
    for s in (store, reader, MemoryStore(store.root)):
        assert s.edge(e2.id) == e2
        (problem,) = s.problems()
        assert problem.line == 2 and "invalid JSON" in problem.message


def test_corrupt_lines_are_reported_with_file_and_line_and_the_rest_read(store: MemoryStore):
    good = [event(f"event {i}", T0 + i) for i in range(4)]
    log = store.root / "timeline" / "2026-05.jsonl"
    log.parent.mkdir(parents=True)
    rows = [json.dumps(e.to_json()).encode() for e in good]
    rows.insert(1, b"{not json")
    bad_kind = {"id": "x", "summary": "s", "kind": "gossip", "provenance": good[0].provenance.to_json()}
    rows.insert(3, json.dumps(bad_kind).encode())
    rows.insert(4, b'"\xff\xfe"')
    log.write_bytes(b"\n".join(rows) + b"\n")
    page = store.timeline(newest_first=False)
    assert [e.summary for e in page.events] == [e.summary for e in good]
    problems = {p.line: p for p in store.problems()}
    assert set(problems) == {2, 4, 5}
    assert "invalid JSON" in problems[2].message and "unknown event kind" in problems[4].message
    assert "not UTF-8" in problems[5].message
    assert str(problems[2]).startswith(f"{log}:2: ")


def test_cache_rebuilds_when_the_logs_do_not_match(store: MemoryStore):
    e1, e2 = edge(WORKER, "uses", P8080, T0), edge(WORKER, "uses", P9090, T0 + 1)
    store.append([WORKER, P8080, P9090, e1, e2])
    generation = store.cache.generation
    # an untouched memory reopens on the cache as it is
    assert MemoryStore(store.root).cache.generation == generation
    # a log rewritten (here: the second edge removed) is never trusted: rebuilt from the logs
    log = store.root / "graph" / "edges.jsonl"
    log.write_text(lines_of(log)[0] + "\n", encoding="utf-8")
    reopened = MemoryStore(store.root)
    assert reopened.stats().edges == 1 and reopened.edge(e2.id) is None
    assert reopened.cache.generation != generation
    # a cache that is not a database at all is replaced
    store.close()
    reopened.close()
    remove_database(store.root / CACHE_NAME)
    (store.root / CACHE_NAME).write_bytes(b"garbage" * 100)
    assert MemoryStore(store.root).stats().edges == 1


def test_another_process_append_is_seen_by_an_open_store(store: MemoryStore, tmp_path: Path):
    store.append([WORKER])
    assert store.stats().entities == 1
    other = MemoryStore(store.root)
    other.append([P8080, edge(WORKER, "listens-on", P8080, T0)])
    assert [g.target for g in store.neighbors("worker").edges] == [P8080.id]


def test_patch_before_its_records_folds_once_they_arrive(store: MemoryStore):
    old, new = edge(WORKER, "listens-on", P8080, T0), edge(WORKER, "listens-on", P9090, T0 + DAY)
    log = store.root / "graph" / "edges.jsonl"
    log.parent.mkdir(parents=True)
    patch = {"op": "supersede", "id": old.id, "by": new.id, "at": T0 + 2 * DAY, "reason": "hand-written"}
    log.write_text(json.dumps(patch) + "\n" + json.dumps(old.to_json()) + "\n", encoding="utf-8")
    assert [p.message for p in store.problems()] == [
        f"supersede patch names edge {new.id}, which the memory does not hold; ignored"
    ]
    assert store.edge(old.id).superseded_by is None
    with log.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(new.to_json()) + "\n")
    assert store.refresh()  # an edit from outside the store: seen within a second, or at once on refresh()
    assert store.edge(old.id).superseded_by == new.id and store.problems() == ()


def test_a_patch_by_an_older_record_is_ignored_and_reported(store: MemoryStore):
    newer, older = edge(WORKER, "listens-on", P9090, T0 + DAY), edge(WORKER, "listens-on", P8080, T0)
    log = store.root / "graph" / "edges.jsonl"
    log.parent.mkdir(parents=True)
    patch = {"op": "supersede", "id": newer.id, "by": older.id, "at": T0 + 2 * DAY}
    log.write_text("\n".join(json.dumps(x) for x in (newer.to_json(), older.to_json(), patch)) + "\n")
    assert store.edge(newer.id).superseded_by is None
    (problem,) = store.problems()
    assert problem.line == 3 and "older than" in problem.message


def test_lookup_by_id_name_alias_with_suggestions(store: MemoryStore):
    pytest_cmd = entity("command", "pytest")
    pytest_pkg = entity("package", "pytest")
    worker = entity("service", "worker", aliases=("the worker",))
    store.append([pytest_cmd, pytest_pkg, worker])
    assert store.entity(worker.id) == worker
    assert store.entity("  WORKER ").id == worker.id
    assert store.entity("The Worker").id == worker.id
    with pytest.raises(AmbiguousEntity) as info:
        store.entity("pytest")
    assert {c.id for c in info.value.candidates} == {pytest_cmd.id, pytest_pkg.id}
    assert {e.id for e in store.find_entities("pytest")} == {pytest_cmd.id, pytest_pkg.id}
    with pytest.raises(EntityNotFound) as miss:
        store.entity("wrker")
    assert miss.value.suggestions[0].id == worker.id and "did you mean worker" in str(miss.value)
    with pytest.raises(EntityNotFound) as nothing:
        store.entity("zzzzqqq")
    assert nothing.value.suggestions == ()


def test_alias_merge_fold_and_unmerge(store: MemoryStore):
    full = entity("file", "/home/u/proj/backend/app.py")
    short = entity("file", "backend/app.py")
    dotted = entity("file", "./backend/app.py")
    other = entity("file", "backend/other.py")
    e_full = edge(full, "imports", other, T0)
    e_short = edge(short, "edited-by", entity("person", "ann"), T0 + DAY)
    store.append([full, short, dotted, other, e_full, e_short])
    merge = store.merge(full.id, short.id, "same path under the project", 0.97, at=T0 + 2 * DAY)
    assert store.merge(short.id, full.id, "again") is None  # already one entity
    second = store.merge(short.id, dotted.id, "relative form", at=T0 + 3 * DAY)
    assert (second.into, second.merged) == (full.id, dotted.id)  # recorded between canonical ids
    found = store.entity("./backend/app.py")
    assert found.id == full.id and {"backend/app.py", "./backend/app.py"} <= set(found.aliases)
    page = store.neighbors(short.id)
    assert {g.edge.id for g in page.edges} == {e_full.id, e_short.id}
    assert all(g.source == full.id for g in page.edges)
    infos = store.aliases("backend/app.py")
    assert [(i.merged.id, i.merge.reason, i.active) for i in infos] == [
        (short.id, "same path under the project", True),
        (dotted.id, "relative form", True),
    ]
    # as the memory knew it before the merge: two entities
    assert {g.edge.id for g in store.neighbors(full.id, known_at=T0 + 1.5 * DAY).edges} == {e_full.id}
    assert store.unmerge(merge.id, "not the same file", at=T0 + 4 * DAY).id == merge.id
    assert store.unmerge(merge.id) is None
    assert store.entity("backend/app.py").id == short.id
    assert {g.edge.id for g in store.neighbors(full.id).edges} == {e_full.id}
    assert store.merge(full.id, short.id, "linker again") is None  # the unmerge stands
    assert [i.active for i in store.aliases(full.id)] == [False, True]
    with pytest.raises(RecordNotFound):
        store.unmerge("al-missing")
    with pytest.raises(RecordNotFound):
        store.merge(full.id, "file.none", "no such entity")


def test_neighbors_hops_limit_and_bad_arguments(store: MemoryStore):
    a, b, c, d = (entity("concept", n) for n in "abcd")
    store.append([a, b, c, d, edge(a, "r", b, T0), edge(b, "r", c, T0 + 1), edge(c, "r", d, T0 + 2)])
    assert [g.hop for g in store.neighbors("a", hops=3).edges] == [1, 2, 3]
    two = store.neighbors("a", hops=2)
    assert [(g.source, g.target) for g in two.edges] == [(a.id, b.id), (b.id, c.id)] and two.truncated is False
    assert two.entities[c.id].name == "c"
    assert store.neighbors("c").edges[0].target == d.id  # newest first
    assert store.neighbors("c", limit=1).truncated
    for bad in (0, 4):
        with pytest.raises(InvalidQuery):
            store.neighbors("a", hops=bad)


def test_deleted_session_provenance_is_skipped(tmp_path: Path):
    home = Home(tmp_path / "home")
    home.sessions.append_message("alive", "user", "hello")
    home.sessions.append_message("gone", "user", "bye")
    home.sessions.delete_session("gone")
    memory = home.memory
    kept = edge(WORKER, "listens-on", P8080, T0, session="alive")
    lost = edge(WORKER, "listens-on", P9090, T0 + 1, session="gone")
    sessionless = edge(WORKER, "part-of", entity("project", "opmem"), T0 + 2, session="")
    memory.append([WORKER, P8080, P9090, kept, lost, sessionless])
    memory.append([event("said hello", T0, session="alive"), event("said bye", T0, session="gone")])
    assert {g.edge.id for g in memory.neighbors("worker").edges} == {kept.id, sessionless.id}
    assert [e.summary for e in memory.timeline().events] == ["said hello"]


def test_write_waits_for_the_lock_then_reports_it(store: MemoryStore, tmp_path: Path):
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from opmem_tui.backend.memory.store import MemoryStore\n"
        f"s = MemoryStore({str(store.root)!r})\n"
        "with s.batch():\n"
        "    print('locked', flush=True)\n"
        "    sys.stdin.readline()\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "locked"
        impatient = MemoryStore(store.root, lock_timeout=0.05)
        with pytest.raises(Exception) as info:
            impatient.append([WORKER])
        assert type(info.value).__name__ == "MemoryLocked" and ".lock" in str(info.value)
        assert impatient.stats().entities == 0  # reading never waits for the lock
    finally:
        child.stdin.close()
        child.wait(timeout=30)
    assert child.returncode == 0
    assert MemoryStore(store.root, lock_timeout=30).append([WORKER]).entities == 1


def test_two_processes_appending_at_once_lose_and_tear_nothing(store: MemoryStore):
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from opmem_tui.backend.memory.store import MemoryStore\n"
        "from tests.backend.memory.sample import T0, edge, entity\n"
        "tag = sys.argv[1]\n"
        f"s = MemoryStore({str(store.root)!r}, durable=False)\n"
        "hub = entity('concept', 'hub')\n"
        "for i in range(40):\n"
        "    leaf = entity('concept', f'{tag}-{i}')\n"
        "    s.append([hub, leaf, edge(hub, 'has', leaf, T0 + i)])\n"
    )
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": str(root)}
    children = [subprocess.Popen([sys.executable, "-c", script, tag], cwd=root, env=env) for tag in ("x", "y")]
    assert [c.wait(timeout=120) for c in children] == [0, 0]
    assert store.stats().edges == 80 and store.stats().entities == 81 and store.problems() == ()
    assert len(store.neighbors("hub", limit=1000).edges) == 80
    assert len(lines_of(store.root / "graph" / "edges.jsonl")) == 80
    assert MemoryStore(store.root).stats().edges == 80


def test_home_memory_is_the_store_under_memory_dir(tmp_path: Path):
    home = Home(tmp_path / "h")
    assert isinstance(home.memory, MemoryStore) and home.memory.root == home.memory_dir


def test_a_batch_may_append_through_the_store_and_other_threads_wait(store: MemoryStore):
    import threading

    with store.batch() as writer:
        writer.append([WORKER])
        store.append([P8080])  # the same thread: the lock is re-entrant, no self-deadlock
        done = threading.Event()
        other = threading.Thread(target=lambda: (store.append([P9090]), done.set()))
        other.start()
        assert not done.wait(0.2)  # another thread waits for the batch
    other.join(timeout=30)
    assert done.is_set() and store.stats().entities == 3


def test_a_log_that_cannot_be_written_is_named(store: MemoryStore):
    from opmem_tui.backend.memory.logs import MemoryWriteFailed

    (store.root / "graph" / "edges.jsonl").mkdir(parents=True)  # not a file: open() fails
    with pytest.raises(MemoryWriteFailed, match=r"edges\.jsonl: cannot write"):
        store.append([WORKER, P8080, edge(WORKER, "listens-on", P8080, T0)])
    assert store.stats().edges == 0


def test_raw_reads_for_the_distiller_ignore_alias_folding(store: MemoryStore):
    alias = entity("service", "wrk")
    e1 = edge(WORKER, "listens-on", P8080, T0)
    e2 = edge(alias, "listens-on", P9090, T0 + DAY)
    e3 = edge(WORKER, "uses", P9090, T0 + 2 * DAY, scope="project:p", session="anything")
    store.append([WORKER, alias, P8080, P9090, e1, e2, e3])
    store.merge(WORKER.id, alias.id, "acronym")
    assert [e.id for e in store.current_edges(WORKER.id, "listens-on")] == [e1.id]  # not folded
    assert {e.id for e in store.current_edges(relation="listens-on")} == {e1.id, e2.id}
    store.supersede(e1.id, e2.id, "single-valued")
    assert [e.id for e in store.current_edges(relation="listens-on")] == [e2.id]
    assert {e.id for e in store.current_edges(WORKER.id)} == {e3.id}
    assert [e.name for e in store.entity_records({"service"})] == sorted(
        ["worker", "wrk"], key=lambda n: entity("service", n).id
    )
    assert len(store.entity_records()) == 4 and store.entity_records({"none"}) == ()


def test_a_batch_with_a_lone_surrogate_is_stored_as_one_record_at_a_time_would_be(tmp_path):
    from .sample import T0, entity, event

    files = [entity("file", n) for n in ("a.py", "b\ud800.py", "c.py")]
    events = [event(f"note {k}", T0 + k, entities=(files[k],)) for k in range(3)]
    events[1] = event("odd \udcff text", T0 + 1, entities=(files[1],))
    batched = MemoryStore(tmp_path / "batched", durable=False)
    batched.append([*files, *events])
    single = MemoryStore(tmp_path / "single", durable=False)
    for record in (*files, *events):
        single.append([record])
    for store in (batched, single):
        assert store.stats().events == 3 and store.stats().entities == 3
    assert batched.timeline(limit=None).events == single.timeline(limit=None).events
    assert [batched.timeline(entity=f.id).events for f in files] == [single.timeline(entity=f.id).events for f in files]
    assert batched.entity_ids() == single.entity_ids()
    batched.close()
    single.close()


def _rows(store: MemoryStore) -> dict[str, list[tuple]]:
    db = store.cache.db
    return {
        table: sorted(db.execute(f"SELECT * FROM {table}").fetchall(), key=repr)
        for table in ("events", "mentions", "edges", "adj", "entities", "names")
    }


def test_insert_appended_folds_as_insert_one_by_one(tmp_path: Path):
    """Runs all new, with one already held, with one given twice: what goes in, at which seq, is insert()'s."""
    held = event("held", T0, entities=(WORKER,))
    e1, e2 = edge(WORKER, "listens-on", P8080, T0), edge(WORKER, "listens-on", P9090, T0 + DAY)
    records = [
        event("a", T0 + 1, entities=(WORKER, P8080, WORKER)),
        event("b", T0 + 2),
        WORKER,
        P8080,
        WORKER,
        held,
        event("c", T0 + 3, entities=(P8080,)),
        e1,
        e2,
        P9090,
        e2,
        edge(P8080, "near", P9090, T0 + DAY),
    ]
    stores = [MemoryStore(tmp_path / name / "memory") for name in ("one", "many")]
    for store in stores:
        store.append([held])
    with stores[0].cache.writing() as touched_one:
        for line, record in enumerate(records, start=2):
            stores[0].cache.insert(record, "graph/x.jsonl", line)
    with stores[1].cache.writing() as touched_many:
        stores[1].cache.insert_appended((r, "graph/x.jsonl", line) for line, r in enumerate(records, start=2))
    assert _rows(stores[1]) == _rows(stores[0]) and len(_rows(stores[0])["events"]) == 4
    assert touched_many.added == touched_one.added


def test_month_log_names_the_month_fromtimestamp_gives_whatever_came_before():
    def expected(t: float) -> str:
        try:
            moment = datetime.fromtimestamp(t, UTC)
        except (OverflowError, OSError, ValueError):
            moment = datetime.fromtimestamp(0, UTC)
        return f"timeline/{moment:%Y-%m}.jsonl"

    bounds = [
        datetime(y, m, 1, tzinfo=UTC).timestamp() for y, m in ((2026, 6), (2027, 1), (2024, 3), (1970, 1), (1969, 12))
    ]
    end = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC).timestamp()
    offsets = (-1.5, -1.0, -0.5, -1e-6, -6e-7, -5e-7, -4e-7, 0.0, 4e-7, 5e-7, 1.0, 1.5, 86_400.0, -86_400.0)
    times = [b + o for b in bounds for o in offsets] + [end, end + 0.9999, end + 1, math.nan, math.inf, -math.inf, 1e20]
    for order in (times, times[::-1], sorted(times, key=lambda t: (t % 7, t))):
        for primer in (bounds[0] + 1000, bounds[1] - 1000, end - 10):
            month_log(primer)  # whichever month was named last
            assert [month_log(t) for t in order] == [expected(t) for t in order]


@pytest.mark.parametrize(
    "ids",
    [
        (),
        ("n1",),
        ("n1", "n2", "n3"),
        ("",),
        ("", ""),
        ("a\x1fb",),
        ("n1", "a\x1f"),
        ("\x1f", "n2"),
        ("[x",),
        ("n", "[x"),
    ],
)
def test_pack_ids_joins_plain_ids_and_writes_json_for_the_others(ids: tuple[str, ...]):
    packed = pack_ids(ids)
    plain = not any("\x1f" in i for i in ids) and not (ids and ids[0].startswith("["))
    assert packed == ("\x1f".join(ids) if plain else json.dumps(list(ids), ensure_ascii=False))
    assert unpack_ids(packed) == (ids if ids != ("",) else ())


class _Odd(enum.Enum):
    A = "a"


# What orjson writes otherwise than json (or what does not read back equal), in any field
POISONS = [math.nan, -math.inf, _Odd.A, ("a",), uuid.UUID(int=1), 2**70, 1e-7, 1e-5, -5e-324, True, "\ud800"]


def _poisoned(record: MemoryRecord) -> Iterator[Callable[[], MemoryRecord]]:
    """Makers of `record` with each field to_json may write (its provenance's too) holding each
    poison in turn; a sequence field gets it in a tuple, a list and an iterator (made anew)."""
    for f in dataclasses.fields(record):
        value = getattr(record, f.name)
        paths = [(f.name, g.name) for g in dataclasses.fields(value)] if isinstance(value, Provenance) else [(f.name,)]
        for path in paths:
            for poison in POISONS:
                for make in _holding(_field(record, path), poison):
                    yield functools.partial(_replaced, record, path, make)


def _field(record: MemoryRecord, path: tuple[str, ...]) -> object:
    value: object = record
    for name in path:
        value = getattr(value, name)
    return value


def _holding(value: object, poison: object) -> list[Callable[[], object]]:
    if isinstance(value, tuple):
        return [lambda: (poison,), lambda: [poison], lambda: iter((poison,)), lambda: iter(value)]
    return [lambda: poison]


def _replaced(record: MemoryRecord, path: tuple[str, ...], make: Callable[[], object]) -> MemoryRecord:
    if len(path) == 2:
        inner = getattr(record, path[0])
        return dataclasses.replace(record, **{path[0]: dataclasses.replace(inner, **{path[1]: make()})})
    return dataclasses.replace(record, **{path[0]: make()})


def test_log_lines_skip_the_read_back_only_when_it_would_pass():
    """_line gives dump_json_line's bytes with every field of an edge, event or patch poisoned in
    turn (fields added later included), and skips the read-back for what distillation writes."""
    ev = event("Tests fail", T0, entities=(WORKER, P8080))
    records = [
        edge(WORKER, "listens-on", P8080, T0),
        Event(ev.id, ev.summary, ev.kind, 0.5, ev.provenance, ev.entities, key="work:s1:n1"),
        Patch("ed-1", "ed-2", T0 + DAY, "single-valued"),
        WORKER,
    ]
    assert [_plain(r) for r in records] == [True, True, True, False]
    checked = 0
    for record in records:
        for make in _poisoned(record):
            try:
                data = make().to_json()
            except (TypeError, ValueError):
                continue  # a poison to_json cannot take (attrs from a number)
            assert _line(make()) == dump_json_line(data) == dump_compact_json(data), make()
            checked += 1
    assert checked > 500


def test_json_each_reads_the_texts_of_an_orjson_array_as_of_json_dumps():
    """Every code point but the surrogates, one text each and all in one, and odd texts."""
    db = sqlite3.connect(":memory:")
    db.text_factory = bytes  # what SQLite holds, even where it is not UTF-8
    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    odd = ["", "a\x00b", '"\\', "\ud800 lone", "ed-1", "😀 é \u2028 \x7f \x1f", "".join(chars[:5000])]
    for texts in (chars, odd, ["".join(chars)]):
        read = "SELECT value FROM json_each(?)"
        assert db.execute(read, (_json_texts(texts),)).fetchall() == db.execute(read, (json.dumps(texts),)).fetchall()
