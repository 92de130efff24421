"""Claude Code <= 1.0 `--resume`: a new session file that starts with a copy of the resumed one."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

from opmem_tui.backend.importers import SOURCES, run_import
from opmem_tui.backend.importers.base import ImportReport

from .conftest import Transcript, text

A = "aaaaaaaa-0000-4000-8000-000000000001"
B = "bbbbbbbb-0000-4000-8000-000000000002"
C = "cccccccc-0000-4000-8000-000000000003"


def resumed(earlier: Transcript, session: str) -> Transcript:
    """What `claude --resume` wrote: a summary, the earlier records under the new sessionId, then on."""
    t = Transcript(session=session)
    t.meta("summary", summary="Earlier work", leafUuid=earlier.last)
    for record in earlier.records:
        if "uuid" in record:
            t.records.append(copy.deepcopy(record) | {"sessionId": session})
    t.count, t.last, t.clock = earlier.count + 100, earlier.last, earlier.clock
    return t


def chain(folder: Path) -> tuple[Transcript, Transcript, Transcript]:
    a = Transcript(session=A)
    a.prompt("first question")
    a.assistant("msg_a1", text("first answer"))
    b = resumed(a, B)
    b.prompt("second question")
    b.assistant("msg_b1", text("second answer"))
    c = resumed(b, C)
    c.prompt("third question")
    c.assistant("msg_c1", text("third answer"))
    for t, age in ((a, 100), (b, 200), (c, 300)):
        path = t.write(folder / f"{t.session}.jsonl")
        os.utime(path, (1_600_000_000 + age, 1_600_000_000 + age))
    return a, b, c


def test_resume_copies_are_left_out_and_sessions_form_a_tree(home, tmp_path: Path) -> None:
    folder = tmp_path / "projects" / "-tmp-project"
    chain(folder)
    report = run_import(home, "claude", [tmp_path / "projects"])
    assert report.warnings == [] and report.new_sessions == 3
    store = home.sessions
    prompts = {sid: [t.user.content for t in store.get_turns(sid)] for sid in (f"cc-{A}", f"cc-{B}", f"cc-{C}")}
    assert prompts == {
        f"cc-{A}": ["first question"],
        f"cc-{B}": ["second question"],
        f"cc-{C}": ["third question"],
    }
    assert [n.content for n in store.get_nodes(f"cc-{C}")] == ["third question", "third answer"]
    b, c = store.get_meta(f"cc-{B}").extra, store.get_meta(f"cc-{C}").extra
    assert (b["kind"], b["parent_session"], c["kind"], c["parent_session"]) == ("fork", f"cc-{A}", "fork", f"cc-{B}")
    assert c["source_extra"]["record_counts"]["resume_copy"] == 4  # A's two records and B's two


def test_the_copy_is_found_whatever_the_import_order(home, tmp_path: Path) -> None:
    folder = tmp_path / "p"
    chain(folder)
    for session in (C, A, B):
        run_import(home, "claude", [folder / f"{session}.jsonl"])
    assert [n.content for n in home.sessions.get_nodes(f"cc-{B}")] == ["second question", "second answer"]
    assert len(home.sessions.get_nodes(f"cc-{A}")) == 2


def test_a_live_resumed_file_skips_its_copies(tmp_path: Path) -> None:
    folder = tmp_path / "p"
    a, b, _ = chain(folder)
    (folder / f"{C}.jsonl").unlink()
    parser = SOURCES["claude"].open_parser(folder / f"{B}.jsonl", ImportReport())
    for number, line in enumerate(b.lines(), 1):
        parser.feed_line(line, number)
    (session,) = parser.take(final=True)
    assert [n.content for n in session.nodes] == ["second question", "second answer"]
    assert (session.kind, session.parent_native_id) == ("fork", A)
    assert session.extra["parent_record"] == a.last


def test_unrelated_sessions_with_distinct_roots_are_untouched(home, tmp_path: Path) -> None:
    folder = tmp_path / "p"
    for session in (A, B):
        t = Transcript(session=session)
        t.prompt(f"hello {session[0]}")
        t.write(folder / f"{session}.jsonl")
    report = run_import(home, "claude", [folder])
    assert report.new_sessions == 2
    assert {home.sessions.get_meta(f"cc-{s}").extra["kind"] for s in (A, B)} == {"trunk"}
    # Transcript numbers uuids from 1 in each session: the two share their first uuid, but not
    # the record, so neither is a copy of the other.
    firsts = {json.loads((folder / f"{s}.jsonl").read_text().splitlines()[0])["uuid"] for s in (A, B)}
    assert len(firsts) == 1
