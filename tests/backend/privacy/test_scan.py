"""backend/privacy/scan.py: every secret of the store found in place, its value never reported."""

from __future__ import annotations

import json

import pytest

from opmem_tui.backend.home import Home
from opmem_tui.backend.model import OpmemError
from opmem_tui.backend.privacy import redact_text
from opmem_tui.backend.privacy.scan import scan, scan_session

from .secret_store import AWS, GITHUB, OTHER, PG_URL, VALUES, build


@pytest.fixture
def home(tmp_path) -> Home:
    home = Home(tmp_path / "home", durable=False)
    build(home)
    return home


def places(findings) -> set[tuple]:
    return {(f.session, f.turn, f.node, f.field, f.kind) for f in findings}


def test_every_place_a_session_holds_text_is_scanned(home: Home) -> None:
    found = list(scan(home.sessions))
    assert places(found) == {
        ("leaky", 1, "u1", "content", "github-token"),
        ("leaky", 1, "a1", "content", "url-password"),
        ("leaky", 1, "t1", "input", "openai-key"),
        ("leaky", 1, "t2", "content", "aws-access-key"),
        ("leaky", 1, "t2", "reads", "url-password"),
        ("leaky", 2, "a2", "metadata", "openai-key"),
        ("leaky", 1, "r1", "content", "aws-access-key"),  # the retry branch's reply to turn 1
        ("other", 1, "o1", "content", "github-token"),
        ("other", None, None, "meta.json title", "github-token"),
        ("other", None, None, "meta.json preview", "github-token"),
    }
    assert not [f for f in found if f.session == "clean"]


def test_the_same_value_has_the_same_fingerprint_and_no_value_is_reported(home: Home) -> None:
    found = list(scan(home.sessions))
    aws = {f.fingerprint for f in found if f.kind == "aws-access-key"}
    assert len(aws) == 1  # t2 and r1 hold the same key
    assert {f.fingerprint for f in found if f.session == "other"} == {redact_text(OTHER)[-5:-1]}
    dumped = json.dumps([f.to_json() for f in found])
    for value in VALUES:
        assert value not in dumped
        assert value[:8] not in dumped
    assert set(found[0].to_json()) == {"session", "turn", "node", "field", "kind", "fingerprint"}


def test_one_session_and_a_missing_one(home: Home) -> None:
    assert {f.session for f in scan(home.sessions, "other")} == {"other"}
    assert list(scan(home.sessions, "clean")) == []
    with pytest.raises(OpmemError, match="no session 'nope'"):
        list(scan(home.sessions, "nope"))
    with pytest.raises(OpmemError):
        list(scan(home.sessions, "../leaky"))


def test_markers_of_an_earlier_redaction_are_not_secrets(tmp_path) -> None:
    home = Home(tmp_path / "home", durable=False)
    text = redact_text(f"use {GITHUB} and {PG_URL} and Authorization: Bearer {AWS}")
    assert "[secret:" in text and GITHUB not in text
    home.sessions.append_message("done", "user", text, node_id="d1")
    home.sessions.commit_turn("done")
    assert list(scan(home.sessions)) == []


def test_a_bad_node_file_is_a_problem_not_a_crash(home: Home) -> None:
    history = home.sessions_dir / "leaky" / "history"
    (history / "000099-u-broken.json").write_text("{not json")
    problems: list[str] = []
    found = list(scan(home.sessions, "leaky", problems))
    assert len(found) == 7
    assert len(problems) == 1 and "000099-u-broken.json" in problems[0] and "not a node file" in problems[0]


def test_scan_reads_the_files_and_nothing_else(home: Home) -> None:
    result = scan_session(home.sessions_dir / "leaky", "leaky")
    assert sorted(f.name.split("-", 2)[2] for f in result.affected) == [
        "a1.json",
        "a2.json",
        "r1.json",
        "t1.json",
        "t2.json",
        "u1.json",
    ]
    assert not result.meta_affected  # the title holds only a cut-off start of the token


def test_a_session_with_a_bad_meta_json_is_named_as_not_scanned(home: Home) -> None:
    (home.sessions_dir / "other" / "meta.json").write_text("[1, 2")
    problems: list[str] = []
    found = list(scan(home.sessions, problems=problems))
    assert {f.session for f in found} == {"leaky"}
    assert len(problems) == 1 and "other" in problems[0] and problems[0].endswith("(not scanned)")
