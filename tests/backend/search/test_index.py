"""The index: incremental equals rebuilt, cursors, deleted sessions, memory logs, size."""

from __future__ import annotations

import random
import sqlite3

from backend.home import Home
from backend.memory.index import KIND_MESSAGE, KIND_TOOL, SearchIndexError

from .conftest import DAY, T0, add_chat, edge, entity, event, write_log


def live_rows(home: Home) -> list[tuple]:
    db = sqlite3.connect(home.search_index.path)
    try:
        turns = db.execute(
            "SELECT s.session_id, s.scope, d.kind, d.node, d.seq, d.role, d.turn, d.commit_id, d.time, d.speaker, "
            "(SELECT p.node FROM docs p WHERE p.id = d.prev) FROM docs d JOIN sessions s ON s.id = d.sess "
            "WHERE s.dead = 0 ORDER BY s.session_id, d.seq"
        ).fetchall()
        records = db.execute(
            "SELECT record_id, kind, session_id, node_ids, time, scope, body FROM records "
            "WHERE record_id NOT IN (SELECT record_id FROM superseded) ORDER BY record_id"
        ).fetchall()
        fts = db.execute("SELECT count(*) FROM turns_fts").fetchone()
    finally:
        db.close()
    return [turns, records, fts]


def results(home: Home, queries: list[str]) -> list[list[tuple]]:
    out = []
    for q in queries:
        hits = home.search(q, k=10)
        out.append([(h.kind, h.session_id, h.node_ids, h.turn, h.commit, h.snippet) for h in hits])
    return out


QUERIES = ["worker port", "failing tests pytest", "plant tomatoes", "config/worker.toml", "Caroline pottery"]


def test_incremental_update_equals_rebuild(coding_home: Home, tmp_path) -> None:
    index = coding_home.search_index
    index.update()
    add_chat(coding_home, "s-port", [("and the scheduler port?", "The scheduler listens on 18111.")], start=T0 + DAY)
    add_chat(coding_home, "s-new", [("Caroline took a pottery class", "Pottery is relaxing.")], start=T0 + 30 * DAY)
    write_log(
        coding_home.memory_dir / "timeline" / "2023-11.jsonl", [event("Caroline took a pottery class", "s-new", [], T0)]
    )
    index.update()
    incremental = live_rows(coding_home), results(coding_home, QUERIES)
    report = index.rebuild()
    assert report.rows > 0
    rebuilt = live_rows(coding_home), results(coding_home, QUERIES)
    assert incremental == rebuilt
    assert any(incremental[1])


def test_update_reads_only_what_is_new(coding_home: Home) -> None:
    index = coding_home.search_index
    first = index.update()
    assert first.rows == 9  # 8 messages with text (an empty assistant message is skipped) + 1 tool call
    again = index.update()
    assert again.rows == 0 and again.sessions_updated == 0
    add_chat(coding_home, "s-port", [("one more", "sure")], start=T0 + DAY)
    third = index.update()
    assert third.rows == 2 and third.sessions_updated == 1


def test_rows_carry_turns_commits_and_kinds(coding_home: Home) -> None:
    coding_home.search_index.update()
    turns, _records, _fts = live_rows(coding_home)
    port = [r for r in turns if r[0] == "s-port"]
    assert [r[6] for r in port] == [1, 1, 2, 2]
    assert all(r[7] for r in port)  # every turn was committed
    commits = {r[6]: r[7] for r in port}
    log = coding_home.sessions.session_commits("s-port")
    assert set(commits.values()) == {c.oid for c in log}
    tool = [r for r in turns if r[2] == KIND_TOOL]
    assert len(tool) == 1 and tool[0][9] == "Bash"
    assert all(r[2] == KIND_MESSAGE for r in port)
    assert port[1][10] == port[0][3]  # the reply points at the question


def test_deleted_session_vanishes_at_next_update(coding_home: Home) -> None:
    index = coding_home.search_index
    index.update()
    assert any(h.session_id == "s-garden" for h in coding_home.search("tomatoes basil"))
    coding_home.sessions.delete_session("s-garden")
    report = index.update()
    assert report.sessions_dropped == 1
    assert not any(h.session_id == "s-garden" for h in coding_home.search("tomatoes basil"))
    assert "s-garden" not in index.index.cursors()


def test_partial_update_for_the_ingest_hook(coding_home: Home) -> None:
    index = coding_home.search_index
    index.update()  # the first build covers every session (test_search.py); then the hook's
    store = coding_home.sessions
    for session_id in ("s-port", "s-garden"):
        store.append_message(session_id, "user", f"a zebra crossing near {session_id}")
        store.commit_turn(session_id)
    index.after_ingest(frozenset({"s-port"}))
    assert {h.session_id for h in coding_home.search("zebra crossing")} == {"s-port"}
    index.after_ingest(frozenset({"s-garden", "no-such-session"}))
    assert {h.session_id for h in coding_home.search("zebra crossing")} == {"s-port", "s-garden"}


def test_memory_records_are_indexed_incrementally(home: Home) -> None:
    ids = add_chat(
        home, "s1", [("Caroline went to a support group", "That sounds powerful.")], speakers=("Caroline", "Mel")
    )
    caroline = entity("person", "Caroline", ["Caz"])
    group = entity("activity", "support group")
    log = home.memory_dir / "graph"
    write_log(log / "entities.jsonl", [caroline, group])
    write_log(log / "edges.jsonl", [edge(caroline.id, "attended", group.id, "s1", ids[:1], T0)])
    index = home.search_index
    first = index.update()
    assert first.records == 3
    ev = event("Caroline attended a support group on 7 May 2023", "s1", ids[:1], T0)
    write_log(home.memory_dir / "timeline" / "2023-11.jsonl", [ev])
    with open(log / "edges.jsonl", "a") as out:
        out.write('{"id": "torn", "from": ')  # a torn last line waits for its newline
    second = index.update()
    assert second.records == 1
    hits = home.search("support group attended", k=5)
    assert hits and hits[0].node_ids == (ids[0],)
    assert ev.id in hits[0].via or any(h.record_id == ev.id for h in hits)


def test_a_rewritten_log_is_read_again(home: Home) -> None:
    path = home.memory_dir / "graph" / "entities.jsonl"
    write_log(path, [entity("person", "Alice"), entity("person", "Bob")])
    index = home.search_index
    assert index.update().records == 2
    path.unlink()
    write_log(path, [entity("person", "Carol")])
    assert index.update().records == 1
    assert [h.snippet for h in home.search("Carol")] == ["Carol (person)"]
    assert home.search("Alice") == () and home.search("Bob") == ()


def test_deleting_the_file_rebuilds_on_next_search(coding_home: Home) -> None:
    index = coding_home.search_index
    index.update()
    index.close()
    index.path.unlink()
    assert coding_home.search("worker port")


def test_index_size_within_budget_of_indexed_text(home: Home) -> None:
    rng = random.Random(7)
    vocabulary = [f"{rng.choice('bcdfgklmnprst')}{rng.choice('aeiou')}{rng.choice('lmnrst')}{n}" for n in range(3000)]
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]  # Zipf, like words in prose

    def sentence(n: int) -> str:
        return " ".join(rng.choices(vocabulary, weights, k=n))

    text_bytes = 0
    for s in range(12):
        exchanges = [(sentence(25), sentence(160)) for _ in range(30)]
        text_bytes += sum(len(u.encode()) + len(a.encode()) for u, a in exchanges)
        add_chat(home, f"s{s}", exchanges)
    index = home.search_index
    index.rebuild()
    assert index.stats().bytes <= 1.5 * text_bytes


def test_an_index_of_another_version_is_rebuilt(coding_home: Home) -> None:
    index = coding_home.search_index
    index.update()
    index.close()
    db = sqlite3.connect(index.path)
    db.execute("UPDATE meta SET value = 'old' WHERE key = 'schema'")
    db.commit()
    db.close()
    assert any(h.session_id == "s-port" for h in coding_home.search("worker port"))
    assert index.update().rows == 0  # rebuilt whole, nothing left to add


def test_a_failed_rebuild_leaves_the_old_index_and_no_half_built_file(coding_home: Home, monkeypatch) -> None:
    """The fresh copy fails as on a full disk (SQLite's max_page_count): the rebuild raises,
    the index in use still answers the same, and no index.sqlite.new is left beside it."""
    index = coding_home.search_index
    index.update()
    before = results(coding_home, QUERIES)
    connect = sqlite3.connect

    def limited(database, *args, **kwargs):
        db = connect(database, *args, **kwargs)
        if str(database).endswith(".new"):
            db.execute("PRAGMA max_page_count = 12")  # the schema fits, the rows do not
        return db

    monkeypatch.setattr(sqlite3, "connect", limited)
    try:
        index.rebuild()
    except SearchIndexError as exc:
        assert "the rebuild failed" in str(exc) and "full" in str(exc) and "unchanged" in str(exc), exc
    else:
        raise AssertionError("the rebuild should have failed on the page limit")
    monkeypatch.setattr(sqlite3, "connect", connect)
    folder = index.path.parent
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith("index.sqlite")) == ["index.sqlite"]
    assert results(coding_home, QUERIES) == before


def test_a_rebuild_that_cannot_swap_in_names_the_index_and_leaves_no_half_built_file(coding_home: Home) -> None:
    """index.sqlite is a directory (not ours to remove): the rebuild's swap fails with an error
    naming it, the directory and what is in it stay, and no index.sqlite.new is left beside it."""
    index = coding_home.search_index
    index.path.mkdir(parents=True)
    (index.path / "kept").write_text("someone's file")
    try:
        index.rebuild()
    except SearchIndexError as exc:
        assert str(exc).startswith(f"{index.path}: the rebuild failed") and "unchanged" in str(exc), exc
    else:
        raise AssertionError("the rebuild should have failed on the directory")
    folder = index.path.parent
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith("index.sqlite")) == ["index.sqlite"]
    assert (index.path / "kept").read_text() == "someone's file"


def test_terminal_escapes_in_a_message_do_not_hide_its_words(home: Home) -> None:
    """Pasted terminal output (Claude Code keeps `!cmd` output with its colours) wraps words in
    CSI/OSC sequences; indexed raw, "\\x1b[31mredis" became the token "31mredis" and a search
    for redis missed it. The index reads the text as the screen shows it (safe_text.plain)."""
    add_chat(
        home,
        "s1",
        [
            ("\x1b[31mFAILED\x1b[0m tests/test_cache.py \x1b]0;title\x07 use \x1b[1mredis\x1b[22m now", "ok"),
            ("unrelated question", "we tried \x1b[32mmemcached\x1b[0m first"),
        ],
    )
    hits = home.search("redis")
    assert hits and hits[0].session_id == "s1" and hits[0].turn == 1
    assert "\x1b" not in hits[0].snippet and "FAILED" in hits[0].snippet
    assert home.search("FAILED") and home.search("memcached")


def test_rows_get_the_ids_one_insert_at_a_time_gives(tmp_path, monkeypatch) -> None:
    """add_turns names each row's id (one executemany): the ids, prev links and FTS rowids are
    those SQLite gives rows inserted one by one, also after the newest rows were deleted."""
    from backend.memory import index as index_module
    from backend.memory.index import SearchIndex, TurnRow

    def rows(session: str, count: int) -> list[TurnRow]:
        out = []
        for i in range(count):
            kind = KIND_TOOL if i % 3 == 2 else KIND_MESSAGE
            prev = f"{session}-{i - 1}" if i and kind == KIND_MESSAGE else None
            out.append(TurnRow(kind, f"{session}-{i}", i, "user", 1, None, 1.0 + i, "user", f"body {i}", "", prev))
        return out

    def build(name: str) -> list[list[tuple]]:
        index = SearchIndex(tmp_path / name)
        with index.write() as db:
            index.add_turns(db, "s1", "global", rows("s1", 7), 7, "a")
        with index.write() as db:  # the newest rows gone: the next ids are the largest left + 1
            db.execute("DELETE FROM docs WHERE id > 4")
        with index.write() as db:
            index.add_turns(db, "s2", "global", rows("s2", 5), 5, "b")
            index.add_turns(db, "s1", "global", rows("s1-more", 4), 11, "c")
        db = index.db
        out = [
            db.execute("SELECT * FROM docs ORDER BY id").fetchall(),
            db.execute("SELECT rowid FROM turns_fts ORDER BY rowid").fetchall(),
        ]
        index.close()
        return out

    named = build("named.sqlite")
    monkeypatch.setattr(index_module, "_MAX_ROWID", 0)  # every row inserted alone, SQLite picking its id
    assert build("one-by-one.sqlite") == named
    assert len(named[0]) == 13 and any(row[-1] for row in named[0])
