"""aider: chat history Markdown split into runs, dated by the input history."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opmem_tui.backend.importers import SOURCES, run_import
from opmem_tui.backend.importers.aider import HISTORY_NAME, INPUT_NAME, parse_input_history, parse_line
from opmem_tui.backend.importers.base import ImportFormatError, ImportReport
from opmem_tui.backend.importers.ingest import ingest

from .dag_helpers import assert_well_formed, branch, by_id, parse_from, tools_of, turn_count

aider = SOURCES["aider"]

CHAT = """\

# aider chat started at 2025-05-04 17:06:40

> Aider v0.82.0  
> Main model: anthropic/claude-sonnet-4 with diff edit format  
> Git repo: .git with 12 files  
> Repo-map: using 4096 tokens  

#### add a hello function  
#### to hello.py  

I'll add it.

hello.py
```python
<<<<<<< SEARCH
=======
def hello():
    print("> not aider output")
>>>>>>> REPLACE
```

> Tokens: 3.2k sent, 222 received. Cost: $0.01 message, $0.01 session.  
> Applied edit to hello.py  
> Commit c339495 feat: Add hello function  

#### /ask what does it print?  

#### what does it print?  

It prints a quoted line.

#### /add notes.md  
> Added notes.md to the chat  

#### thanks  

You're welcome.

# aider chat started at 2025-05-05 09:00:00

> Aider v0.82.0  
> Model: gpt-4o with diff edit format  

#### second day  

Hello again.
"""

INPUTS = """
# 2025-05-04 17:06:57.158813
+add a hello function
+to hello.py

# 2025-05-04 17:08:01.500000
+/ask what does it print?

# 2025-05-04 17:09:00.000000
+/add notes.md

# 2025-05-04 17:10:30.000000
+thanks

# 2025-05-05 09:00:12.000000
+second day
"""


def local(text: str) -> float:
    return time.mktime(datetime.fromisoformat(text).timetuple()) + datetime.fromisoformat(text).microsecond / 1e6


def write(folder: Path, chat: str = CHAT, inputs: str | None = INPUTS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / HISTORY_NAME
    path.write_text(chat, encoding="utf-8")
    if inputs is not None:
        (folder / INPUT_NAME).write_text(inputs, encoding="utf-8")
    return path


def parse(path: Path, start_offset: int = 0, **kwargs):
    report = ImportReport()
    kwargs.setdefault("final", True)
    if start_offset:
        return parse_from(aider, path, start_offset, final=kwargs["final"]), report
    return aider.parse_file(path, report, **kwargs), report


def test_runs_turns_and_output_blocks(tmp_path: Path):
    path = write(tmp_path / "repo")
    sessions, report = parse(path)
    assert report.warnings == []
    assert len(sessions) == 2
    first, second = sessions
    for session in sessions:
        assert_well_formed(session)
    assert first.model == "anthropic/claude-sonnet-4" and second.model == "gpt-4o"
    assert first.cwd == str((tmp_path / "repo").resolve())
    assert first.native_id.endswith("-20250504T170640") and second.native_id.endswith("-20250505T090000")
    assert first.native_id.startswith("aider-") and first.native_id != second.native_id

    chain = branch(first)
    assert [n.role for n in chain] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "system",
        "user",
        "assistant",
    ]
    banner, prompt, edit, ask, _answer, add, added, _thanks, _welcome = chain
    assert banner.content.startswith("Aider v0.82.0\nMain model:")
    assert prompt.content == "add a hello function\nto hello.py"  # two #### lines, breaks kept
    assert edit.content.startswith("I'll add it.") and '    print("> not aider output")' in edit.content
    assert edit.content.endswith(">>>>>>> REPLACE\n```")  # fenced lines stay in the reply
    assert edit.metadata["tokens"].startswith("3.2k sent, 222 received.")
    (tool,) = tools_of(first, edit.id)
    assert tool.name == "aider" and tool.input == {
        "paths": ["hello.py"],
        "commits": [{"sha": "c339495", "message": "feat: Add hello function"}],
    }
    assert ask.content == "what does it print?" and ask.metadata["command"] == "/ask what does it print?"
    assert add.content == "/add notes.md" and added.content == "Added notes.md to the chat"
    assert turn_count(first) == 4 and turn_count(second) == 1
    assert prompt.id == f"{HISTORY_NAME}:9"  # the line of its first ####


def test_input_history_dates_the_turns(tmp_path: Path):
    first, second = parse(write(tmp_path / "repo"))[0]
    chain = branch(first)
    users = [n for n in chain if n.role == "user"]
    assert [n.created_at for n in users] == [
        local("2025-05-04 17:06:57.158813"),
        local("2025-05-04 17:08:01.5"),
        local("2025-05-04 17:09:00"),
        local("2025-05-04 17:10:30"),
    ]
    assert chain[0].created_at == local("2025-05-04 17:06:40")  # the banner: the run's start
    assert chain[2].created_at == users[0].created_at  # a reply carries its prompt's time
    assert branch(second)[1].created_at == local("2025-05-05 09:00:12")


def test_without_input_history_times_are_the_run_start(tmp_path: Path):
    first, _ = parse(write(tmp_path / "repo", inputs=None))[0]
    assert {n.created_at for n in first.nodes} == {local("2025-05-04 17:06:40")}


def test_text_before_any_header_is_an_undated_run(tmp_path: Path):
    sessions, _report = parse(write(tmp_path / "r", chat="#### hello  \n\nhi there\n", inputs=None))
    (session,) = sessions
    assert session.native_id.endswith("-L1") and [n.role for n in branch(session)] == ["user", "assistant"]


def test_live_tail_and_incremental_reads(tmp_path: Path):
    path = write(tmp_path / "repo")
    whole = {n.id: n for s in parse(path)[0] for n in s.nodes}
    text = CHAT
    seen: dict = {}
    offset = 0
    for cut in (40, 300, 520, 700, 900, len(text)):
        path.write_text(text[:cut], encoding="utf-8")
        sessions, _ = parse(path, start_offset=offset, final=cut == len(text))
        for session in sessions:
            assert_well_formed(session, seen)
            for node in session.nodes:
                assert node.id not in seen
                seen[node.id] = node
            offset = session.extra["end_offset"]
    assert seen.keys() == whole.keys()
    assert seen == whole


def test_discover_searches_folders_but_skips_heavy_ones(tmp_path: Path):
    a = write(tmp_path / "work" / "a")
    b = write(tmp_path / "work" / "deep" / "b")
    write(tmp_path / "work" / "node_modules" / "pkg")
    write(tmp_path / "work" / ".hidden")
    explicit = tmp_path / "elsewhere.md"
    explicit.write_text(CHAT)
    assert aider.discover([tmp_path / "work", explicit, tmp_path / "missing"]) == [a, b, explicit]


def test_default_paths_are_cwd_and_git_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    repo = tmp_path / "repo"
    sub = repo / "src" / "pkg"
    sub.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    monkeypatch.chdir(sub)
    assert aider.default_paths() == [sub, repo.resolve()]
    monkeypatch.chdir(tmp_path)
    assert aider.default_paths() == [tmp_path]


def test_bad_lines_are_reported_and_skipped(tmp_path: Path):
    path = write(tmp_path / "r", chat="# aider chat started at yesterday\n#### hi  \n\nyo\n", inputs=None)
    with path.open("ab") as handle:
        handle.write(b"\xff\xfe\n#### again  \n")
    sessions, report = parse(path)
    assert [w.split(": ", 1)[0] for w in report.warnings] == [f"{path}:1", f"{path}:5"]
    assert [n.content for n in branch(sessions[0])] == ["hi", "yo", "again"]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=120))
def test_parse_line_raises_only_format_errors(line):
    try:
        parsed = parse_line(line)
    except ImportFormatError:
        return
    assert parsed.kind in ("header", "user", "output", "text")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_input_history_parser_never_raises(text):
    for stamp, entry in parse_input_history(text):
        assert isinstance(stamp, float) and isinstance(entry, str)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "# aider chat started at 2025-01-01 10:00:00",
                "#### ask",
                "> out",
                "text",
                "",
                "```",
                "# aider chat started at nonsense",
                "#### /ask ask",
            ]
        )
        | st.text(max_size=20),
        max_size=30,
    )
)
def test_parse_file_never_raises(tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("fuzz") / HISTORY_NAME
    path.write_text("\n".join(line.replace("\n", " ").replace("\r", " ") for line in lines), encoding="utf-8")
    for session in parse(path)[0]:
        assert_well_formed(session)
        assert by_id(session)


def test_line_parser_for_watch(tmp_path: Path):
    path = write(tmp_path / "repo")
    whole = {n.id: n for s in parse(path)[0] for n in s.nodes}
    report = ImportReport()
    parser = aider.open_parser(path, report)
    seen: dict = {}
    for number, line in enumerate(CHAT.encode().splitlines(keepends=True), 1):
        parser.feed_line(line, number)
        for session in parser.take(final=False):
            for node in session.nodes:
                assert node.id not in seen
                seen[node.id] = node
    assert parser.holding()  # the last reply could still get aider's output lines
    for session in parser.take(final=False, idle=True):
        seen.update({n.id: n for n in session.nodes})
    assert seen == whole and not parser.holding() and report.warnings == []


def test_sessions_keep_their_ids_when_the_repository_moves(home, tmp_path: Path):
    path = write(tmp_path / "old-place" / "repo")
    os.utime(path, (1_600_000_000, 1_600_000_000))
    first = run_import(home, "aider", [path])
    assert first.new_sessions == 2
    ids = {m.id for m in home.sessions.list_sessions().sessions}
    moved = tmp_path / "new-place"
    (tmp_path / "old-place").rename(moved)
    again = run_import(home, "aider", [moved / "repo" / HISTORY_NAME], force=True)
    assert (again.new_sessions, again.nodes) == (0, 0)
    assert {m.id for m in home.sessions.list_sessions().sessions} == ids


def test_a_session_stored_under_its_path_based_id_is_found_again(home, tmp_path: Path):
    """Ids before 2025-12 hashed the history file's path; those sessions are kept."""
    path = write(tmp_path / "repo")
    os.utime(path, (1_600_000_000, 1_600_000_000))
    sessions, _ = parse(path)
    for session in sessions:
        ingest(home.sessions, replace(session, native_id=session.aliases[0], aliases=()), ImportReport())
    report = run_import(home, "aider", [path], force=True)
    assert (report.new_sessions, report.nodes) == (0, 0)
    assert len(home.sessions.list_sessions().sessions) == 2
