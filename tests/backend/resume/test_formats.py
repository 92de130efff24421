"""The files `opmem resume` writes, checked against each agent's format (JSON Schemas derived from
the cited sources, a public reader where one is on PyPI), and what else of the agents' stores they
touch: nothing but what lists the new session."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from itertools import pairwise
from pathlib import Path

import jsonschema
import pytest

from opmem_tui.backend.home import Home
from opmem_tui.backend.resume import resume

from .sessions import import_into, shape, worked_session
from .test_round_trip import agent_env

SCHEMAS = Path(__file__).with_name("schemas")
CODEX_FIXTURE = (
    Path(__file__).resolve().parents[3]
    / ".."
    / "shared"
    / "fixtures"
    / "transcripts"
    / "codex"
    / "acidicsoil-rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"
)


def validator(name: str) -> jsonschema.Draft202012Validator:
    schema = json.loads((SCHEMAS / name).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def written_home(tmp_path: Path) -> tuple[Home, str]:
    home = Home(tmp_path / "home", durable=False)
    return home, worked_session(home.sessions)


def test_claude_records_match_the_schema(tmp_path: Path, written_home) -> None:
    home, sid = written_home
    written = resume(home.sessions, sid, "claude", cwd="/work/app", env=agent_env(tmp_path))
    assert written.path.parent == tmp_path / "claude" / "projects" / "-work-app"
    records = lines(written.path)
    check = validator("claude_record.json")
    for record in records:
        check.validate(record)
    chain = [r for r in records if "uuid" in r]
    assert chain[0]["parentUuid"] is None
    assert all(b["parentUuid"] == a["uuid"] for a, b in pairwise(chain))
    uses = {
        b["id"] for r in chain if r["type"] == "assistant" for b in r["message"]["content"] if b["type"] == "tool_use"
    }
    results = {
        b["tool_use_id"]
        for r in chain
        if r["type"] == "user" and isinstance(r["message"]["content"], list)
        for b in r["message"]["content"]
    }
    assert uses == results and len(uses) == 3
    with pytest.raises(jsonschema.ValidationError):  # the schema can fail: a record without its session id
        check.validate({k: v for k, v in chain[0].items() if k != "sessionId"})


def test_claude_file_reads_in_a_public_reader(tmp_path: Path, written_home) -> None:
    """claude-code-log (daaain/claude-code-log on PyPI) validates every line with its pydantic models."""
    factory = pytest.importorskip("claude_code_log.factories.transcript_factory")
    converter = pytest.importorskip("claude_code_log.converter")
    home, sid = written_home
    written = resume(home.sessions, sid, "claude", cwd="/work/app", env=agent_env(tmp_path))
    kinds = [type(factory.create_transcript_entry(record)).__name__ for record in lines(written.path)]
    assert kinds[0] == "SummaryTranscriptEntry" and kinds.count("AssistantTranscriptEntry") == 4
    entries = converter.load_transcript(written.path, silent=True)
    said = [e for e in entries if type(e).__name__ in ("UserTranscriptEntry", "AssistantTranscriptEntry")]
    assert len(said) == len(lines(written.path)) - 1


def test_codex_lines_match_the_schema(tmp_path: Path, written_home) -> None:
    home, sid = written_home
    written = resume(home.sessions, sid, "codex", cwd="/work/app", env=agent_env(tmp_path))
    assert written.path.name.startswith("rollout-") and written.path.name.endswith(f"-{written.native_id}.jsonl")
    assert written.path.parent.parent.parent.parent == tmp_path / "codex" / "sessions"
    check = validator("codex_line.json")
    rollout = lines(written.path)
    for line in rollout:
        check.validate(line)
    assert rollout[0]["type"] == "session_meta" and rollout[0]["payload"]["id"] == written.native_id
    calls = [x["payload"] for x in rollout if x["payload"].get("type") == "function_call"]
    assert all(isinstance(json.loads(c["arguments"]), dict) for c in calls) and len(calls) == 3
    with pytest.raises(jsonschema.ValidationError):
        check.validate({**rollout[0], "payload": {**rollout[0]["payload"], "source": "elsewhere"}})


def test_the_codex_schema_accepts_codex_own_lines() -> None:
    """The schema is no narrower than Codex itself: its real lines of the kinds opmem writes pass."""
    if not CODEX_FIXTURE.is_file():
        pytest.skip("real fixture codex/acidicsoil-rollout-*.jsonl is absent")
    check = validator("codex_line.json")
    kinds = {"message", "function_call", "function_call_output", "user_message", "agent_message", None}
    seen = 0
    for line in lines(CODEX_FIXTURE):
        if line["type"] in ("session_meta", "turn_context") or line["payload"].get("type") in kinds - {None}:
            check.validate(line)
            seen += 1
    assert seen > 50


def test_nothing_else_of_the_agents_is_touched(tmp_path: Path, written_home) -> None:
    home, sid = written_home
    env = agent_env(tmp_path)
    other_claude = tmp_path / "claude" / "projects" / "-work-app" / "other.jsonl"
    index = tmp_path / "codex" / "session_index.jsonl"
    registry = tmp_path / "gemini-home" / ".gemini" / "projects.json"
    for path, text in (
        (other_claude, '{"type":"summary","summary":"x","leafUuid":"y"}\n'),
        (
            index,
            '{"id":"019a0000-0000-7000-8000-000000000000","thread_name":"old","updated_at":"2025-01-01T00:00:00Z"}\n',
        ),
        (registry, json.dumps({"projects": {"/work/app": "app"}})),
    ):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    before = {p: p.read_bytes() for p in (other_claude, index, registry)}
    written = {t: resume(home.sessions, sid, t, cwd="/work/app", env=env) for t in ("claude", "codex", "gemini")}
    assert other_claude.read_bytes() == before[other_claude] and registry.read_bytes() == before[registry]
    assert index.read_bytes().startswith(before[index])
    added = index.read_bytes()[len(before[index]) :].decode().splitlines()
    assert [json.loads(x)["id"] for x in added] == [written["codex"].native_id]
    assert written["gemini"].path.parent == tmp_path / "gemini-home" / ".gemini" / "tmp" / "app" / "chats"
    header = lines(written["gemini"].path)[0]
    assert header["projectHash"] == hashlib.sha256(b"/work/app").hexdigest()


def test_gemini_marks_a_folder_it_has_not_seen(tmp_path: Path, written_home) -> None:
    home, sid = written_home
    written = resume(home.sessions, sid, "gemini", cwd="/work/My App", env=agent_env(tmp_path))
    folder = written.path.parent.parent
    assert folder.name == "my-app" and (folder / ".project_root").read_text() == "/work/My App"
    assert not (tmp_path / "gemini-home" / ".gemini" / "projects.json").exists()
    again = resume(home.sessions, sid, "gemini", cwd="/work/My App", env=agent_env(tmp_path))
    assert again.path.parent.parent == folder  # found again by its marker, as Gemini's registry does


# OpenCode 1.2's tables (packages/opencode/src/session/session.sql.ts, project/project.sql.ts):
# more required columns than opmem fills, which must get their defaults.
OPENCODE_SCHEMA = """
CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT NOT NULL, vcs TEXT, name TEXT, icon_url TEXT,
  icon_color TEXT, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, time_initialized INTEGER,
  sandboxes TEXT NOT NULL);
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL REFERENCES project(id) ON DELETE CASCADE,
  workspace_id TEXT, parent_id TEXT, slug TEXT NOT NULL, directory TEXT NOT NULL, path TEXT, title TEXT NOT NULL,
  version TEXT NOT NULL, share_url TEXT, summary_additions INTEGER, summary_deletions INTEGER, summary_files INTEGER,
  summary_diffs TEXT, cost REAL NOT NULL DEFAULT 0, tokens_input INTEGER NOT NULL DEFAULT 0,
  tokens_output INTEGER NOT NULL DEFAULT 0, revert TEXT, permission TEXT, agent TEXT, model TEXT,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, time_compacting INTEGER, time_archived INTEGER);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL REFERENCES session(id) ON DELETE CASCADE,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL REFERENCES message(id) ON DELETE CASCADE,
  session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE account (id TEXT PRIMARY KEY, email TEXT, access_token TEXT);
INSERT INTO project VALUES ('abc123', '/work/app', 'git', NULL, NULL, NULL, 1, 1, NULL, '[]');
INSERT INTO account VALUES ('acc_1', 'me@example.com', 'oc-ACCESS');
"""


def test_opencode_database_gets_rows_in_the_folder_project(tmp_path: Path, written_home) -> None:
    home, sid = written_home
    env = agent_env(tmp_path)
    db = tmp_path / "xdg" / "opencode" / "opencode.db"
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    conn.executescript(OPENCODE_SCHEMA)
    conn.close()
    written = resume(home.sessions, sid, "opencode", raw=True, cwd="/work/app", env=env)
    assert written.path == db and written.native_id.startswith("ses_")
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT project_id, directory FROM session").fetchall() == [("abc123", "/work/app")]
    assert conn.execute("SELECT count(*) FROM project").fetchone() == (1,)
    assert conn.execute("SELECT * FROM account").fetchall() == [("acc_1", "me@example.com", "oc-ACCESS")]
    ids = [row[0] for row in conn.execute("SELECT id FROM message ORDER BY time_created, id")]
    conn.close()
    assert ids == sorted(ids)  # ascending ids: OpenCode orders by them
    back = Home(tmp_path / "back", durable=False)
    new = import_into(back, "opencode", db)
    assert shape(back.sessions, new) == shape(home.sessions, sid)
