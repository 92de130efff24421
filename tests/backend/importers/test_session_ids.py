"""Native session ids map to opmem session ids injectively, for every importer and every store."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from opmem_tui.backend.importers import SOURCES, run_import
from opmem_tui.backend.importers.base import UNSTORED, ImportedSession, ImportReport
from opmem_tui.backend.importers.ingest import ingest
from opmem_tui.backend.importers.registry import ID_PREFIXES
from opmem_tui.backend.importers.session_ids import legacy_session_id, session_id_for
from opmem_tui.backend.model import Node, check_session_id

from .conftest import Transcript
from .test_codex import Rollout
from .test_gemini import HEADER
from .test_gemini import user as gemini_user
from .test_openprogram import Folder

PREFIXED = [*sorted(ID_PREFIXES), "some new agent"]
native_ids = st.text(min_size=0, max_size=160)


@settings(max_examples=400, deadline=None)
@given(source=st.sampled_from(PREFIXED), a=native_ids, b=native_ids)
def test_two_native_ids_never_share_a_session_id(source: str, a: str, b: str) -> None:
    sa, sb = session_id_for(source, a), session_id_for(source, b)
    assert check_session_id(sa) == sa and check_session_id(sb) == sb
    assert sa == session_id_for(source, a)  # stable
    assert (sa == sb) == (a == b)


@settings(max_examples=200, deadline=None)
@given(
    source=st.sampled_from(PREFIXED),
    native=st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,60}[A-Za-z0-9_]", fullmatch=True),
)
def test_ids_that_were_already_safe_are_kept_as_they_were(source: str, native: str) -> None:
    sid = session_id_for(source, native)
    assert sid == legacy_session_id(source, native)
    assert sid.endswith("-" + native)


def test_the_reported_collisions_are_gone() -> None:
    assert session_id_for("jsonl", "../../etc") != session_id_for("jsonl", "etc")
    assert session_id_for("jsonl", "a/b") != session_id_for("jsonl", "a-b")
    assert session_id_for("jsonl", "etc") == "jsonl-etc" and session_id_for("jsonl", "a-b") == "jsonl-a-b"


def test_jsonl_sessions_with_colliding_names_stay_apart(home, tmp_path: Path) -> None:
    path = tmp_path / "talk.jsonl"
    names = ["../../etc", "etc", "a/b", "a-b"]
    path.write_text(
        "".join(
            json.dumps({"session": s, "id": "m1", "role": "user", "content": f"hello from {s}"}) + "\n" for s in names
        )
    )
    report = run_import(home, "jsonl", [path])
    assert (report.new_sessions, report.warnings) == (4, [])
    listed = {m.source_ref["native_id"]: m.id for m in home.sessions.list_sessions().sessions}
    assert sorted(listed) == sorted(names)
    for native, sid in listed.items():
        nodes = home.sessions.get_nodes(sid)
        assert [n.content for n in nodes] == [f"hello from {native}"]  # one root each


# -- stores written before ids were injective ---------------------------------------------------


def one_node(native: str, source: str = "claude-code", text: str = "hi") -> ImportedSession:
    node = Node(f"n-{text}", UNSTORED, "user", text)
    return ImportedSession(source=source, native_id=native, source_file="/x.jsonl", nodes=(node,))


def test_a_session_stored_under_its_earlier_id_is_found_again(home) -> None:
    native = "0f8e6d1c-aaaa-4bbb-8ccc-123456789abc/agent-a1b2"  # a Claude subagent
    old = legacy_session_id("claude-code", native)
    assert old == "cc-0f8e6d1c-aaaa-4bbb-8ccc-123456789abc-agent-a1b2" != session_id_for("claude-code", native)
    ingest(home.sessions, one_node(native, text="first"), ImportReport(), session_id=old)  # as before
    sid = ingest(home.sessions, one_node(native, text="second"), ImportReport())
    assert sid == old
    assert [n.content for n in home.sessions.get_nodes(old)] == ["first", "second"]
    assert not home.sessions.exists(session_id_for("claude-code", native))


def test_an_id_held_by_another_native_id_is_not_shared(home) -> None:
    # An earlier version stored native "a/b" as jsonl-a-b; native "a-b" must not write into it.
    ingest(home.sessions, one_node("a/b", "jsonl", "slash"), ImportReport(), session_id="jsonl-a-b")
    sid = ingest(home.sessions, one_node("a-b", "jsonl", "dash"), ImportReport())
    assert sid != "jsonl-a-b"
    assert [n.content for n in home.sessions.get_nodes("jsonl-a-b")] == ["slash"]
    assert [n.content for n in home.sessions.get_nodes(sid)] == ["dash"]
    assert ingest(home.sessions, one_node("a-b", "jsonl", "dash"), ImportReport()) == sid  # stable
    assert ingest(home.sessions, one_node("a/b", "jsonl", "slash"), ImportReport()) == "jsonl-a-b"


# -- every importer carries the native id through to the mapping --------------------------------

ids = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40)
file_names = ids.filter(
    lambda s: "/" not in s and "\x00" not in s and s not in (".", "..") and not s.startswith("agent-")
)


def parsed_native(source: str, native: str, folder: Path) -> str:
    """Write a minimal session of `source` whose native id is `native`; parse it back."""
    report = ImportReport()
    if source == "jsonl":
        path = folder / "s.jsonl"
        path.write_text(json.dumps({"session": native, "id": "m", "role": "user", "content": "x"}) + "\n")
        sessions = SOURCES["jsonl"].parse_file(path, report)
    elif source == "codex":
        path = folder / "rollout-x.jsonl"
        Rollout().meta(native).prompt("x").write(path)
        sessions = SOURCES["codex"].parse_file(path, report, final=True)
    elif source == "gemini":
        path = folder / "chats" / "session-x.jsonl"
        path.parent.mkdir()
        path.write_text(json.dumps(HEADER | {"sessionId": native}) + "\n" + json.dumps(gemini_user("u1", "x")) + "\n")
        sessions = SOURCES["gemini"].parse_file(path, report, final=True)
    elif source == "openprogram":
        session = Folder(folder)
        session.node("user", "u1", "x", caller="ROOT", pred="ROOT")
        (session.path / "meta.json").write_text(json.dumps({"id": native}))
        sessions = SOURCES["openprogram"].parse_file(session.path, report, final=True)
    else:
        t = Transcript(session=native)
        t.prompt("x")
        sessions = SOURCES["claude"].parse_file(t.write(folder / f"{native}.jsonl"), report, final=True)
    assert report.warnings == [] and len(sessions) == 1
    return sessions[0].native_id


@settings(max_examples=25, deadline=None)
@given(source=st.sampled_from(["jsonl", "codex", "gemini", "openprogram", "claude-code"]), a=file_names, b=file_names)
def test_each_importer_keeps_distinct_native_ids_distinct(source: str, a: str, b: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        first, second = Path(tmp) / "a", Path(tmp) / "b"
        first.mkdir(), second.mkdir()
        na, nb = parsed_native(source, a, first), parsed_native(source, b, second)
    assert (na, nb) == (a, b)
    assert (session_id_for(source, na) == session_id_for(source, nb)) == (a == b)
