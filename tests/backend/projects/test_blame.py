"""Blame on a real repository: two agent turns committed through opmem's auto-commit, the user's
own commit that adds a line and moves the agents' lines (inside the file and from another file).
Every line gets the session turn that wrote it, the user's lines none."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmem_tui.backend.home import Home
from opmem_tui.backend.model import OpmemError
from opmem_tui.backend.projects.blame import Blamer, blame_path, parse_porcelain, parse_spec
from opmem_tui.backend.projects.repository import ProjectGitError

from .project_repo_helpers import git, make_repo, user_commit

T0 = 1_700_000_000.0
SID = "blame-sess"

BASE = "import os\n\n\ndef user_main():\n    return os.getcwd()\n"
AGENT_FN = (
    "\n\ndef agent_total(items):\n"
    '    """Sum the prices of the cart items, skipping the ones without a price."""\n'
    "    return sum(item.price for item in items if item.price is not None)\n"
)
HELPER = (
    "def agent_helper():\n"
    '    return "the helper value the agent computed for every caller of it"\n'
    "\n\ndef agent_other():\n"
    '    return "a second helper line that stays where the agent wrote it"\n'
)


def _turn(home: Home, project_id: str, repo: Path, number: int, prompt: str, path: str, old: str, new: str) -> str:
    """One agent turn that edits `path` (the file written as the edit says), auto-committed."""
    registry, store = home.projects, home.sessions
    location = registry.session_location(project_id, SID)
    watch = registry.begin_turn(project_id)
    start = T0 + 100 * number
    store.append_message(
        SID,
        "user",
        f"{prompt}\nsecond line of the prompt",
        created_at=start,
        session_meta={"project_id": project_id, "source": "opmem"},
        location=location,
    )
    reply = store.append_message(SID, "assistant", "on it", name="claude-test-4", created_at=start + 1)
    target = repo / path
    before = target.read_text() if target.exists() else ""
    if old:
        target.write_text(before.replace(old, new, 1))
        tool_input = {"file_path": str(target), "old_string": old, "new_string": new}
        name = "Edit"
    else:
        target.write_text(new)
        tool_input = {"file_path": str(target), "content": new}
        name = "Write"
    store.append_message(SID, "tool", "ok", called_by=reply.id, name=name, input=tool_input, created_at=start + 2)
    store.commit_turn(SID)
    turn = store.get_turns(SID)[number - 1]
    result = registry.commit_agent_turn(watch, turn, session_id=SID)
    assert result.commit, result
    return result.commit


@pytest.fixture
def project(home: Home, tmp_path: Path) -> tuple[Home, str, Path, dict[str, str]]:
    repo = make_repo(tmp_path / "proj", {"app.py": BASE}).resolve()
    project = home.projects.resolve_project(repo)
    commits = {"initial": git(repo, "rev-parse", "HEAD").strip()}
    commits["turn1"] = _turn(
        home,
        project.id,
        repo,
        1,
        "Add a cart total  ghp_" + "a" * 36,
        "app.py",
        "return os.getcwd()\n",
        "return os.getcwd()\n" + AGENT_FN,
    )
    commits["turn2"] = _turn(home, project.id, repo, 2, "Write the helpers", "helper.py", "", HELPER)
    # The user's own commit: a line of theirs on top, the agent's function moved to the end of
    # the file below a function of their own, and agent_helper moved in from helper.py.
    moved_fn = "".join(HELPER.splitlines(True)[:2])
    app = (
        "# the user's own note about this module, written by hand\n"
        + BASE
        + "\n\ndef user_more():\n    return 'a function the user wrote themselves, nothing else'\n"
        + AGENT_FN
        + moved_fn
    )
    helper = HELPER.replace(moved_fn + "\n\n", "")
    commits["user"] = user_commit(repo, "tidy up by hand", {"app.py": app, "helper.py": helper})
    return home, project.id, repo, commits


def _by_text(report) -> dict[str, object]:
    return {line.text: line for line in report.lines}


def test_each_line_gets_the_turn_that_wrote_it_through_moves(project) -> None:
    home, project_id, _repo, commits = project
    report = Blamer(home.projects, home.sessions, project_id).blame("app.py")
    lines = _by_text(report)
    assert [line.line for line in report.lines] == list(range(1, len(report.lines) + 1))

    # the agent's function, moved below the user's code by the user's commit: still turn 1
    moved = lines['    """Sum the prices of the cart items, skipping the ones without a price."""']
    assert moved.commit == commits["turn1"]
    assert (moved.origin.session_id, moved.origin.turn, moved.origin.reason) == (SID, 1, "opmem")
    assert moved.origin.model == "claude-test-4" and moved.origin.time == T0 + 100
    # the prompt's first line, redacted (the token in it never leaves the session)
    assert moved.origin.prompt.startswith("Add a cart total  [secret:github-token#")
    assert "ghp_" not in moved.origin.prompt and "second line" not in moved.origin.prompt
    assert lines["def agent_total(items):"].origin.turn == 1

    # a line moved in from helper.py (which the same commit changed): the turn that wrote it
    across = lines['    return "the helper value the agent computed for every caller of it"']
    assert across.commit == commits["turn2"] and across.origin.turn == 2
    assert across.origin.prompt == "Write the helpers" and lines["def agent_helper():"].origin.turn == 2

    # the user's own lines: their commit, no session, no agent
    for text in ("# the user's own note about this module, written by hand", "def user_more():"):
        line = lines[text]
        assert line.commit == commits["user"] and line.origin is None
        assert line.author == "Uma User <uma@example.com>"
    # the first commit's lines stay the user's too
    assert lines["def user_main():"].commit == commits["initial"] and lines["def user_main():"].origin is None
    assert report.problems == ()


def test_json_shape_and_a_line_range(project) -> None:
    home, _project_id, repo, commits = project
    report = blame_path(home.projects, home.sessions, repo / "app.py", 1, 2)
    assert [line.line for line in report.lines] == [1, 2]
    data = [line.to_json() for line in report.lines]
    assert data[0]["session"] is None and data[0]["author"] == "Uma User <uma@example.com>"
    assert data[0]["commit"] == commits["user"] and data[1]["commit"] == commits["initial"]
    assert set(data[0]) >= {"line", "commit", "session", "turn", "prompt", "model", "time", "author"}
    tail = blame_path(home.projects, home.sessions, repo / "app.py", 16, 17)
    last = tail.lines[-1].to_json()
    assert last["session"] == SID and last["turn"] == 2 and last["prompt"] == "Write the helpers"
    assert last["time"] == "2023-11-14T22:16:40Z"  # T0 + 200, the prompt's time
    assert last["model"] == "claude-test-4" and last["commit"] == commits["turn2"]


def test_uncommitted_lines_and_a_session_gone(project) -> None:
    home, project_id, repo, commits = project
    (repo / "helper.py").write_text((repo / "helper.py").read_text() + "# not committed yet by anyone\n")
    home.sessions.delete_session(SID)
    blamer = Blamer(home.projects, home.sessions, project_id)
    report = blamer.blame("helper.py")
    last = report.lines[-1]
    assert last.commit is None and last.origin is None and last.author == "not committed yet"
    # the commit still names its session and turn; the prompt is gone with the session
    kept = next(line for line in report.lines if line.commit == commits["turn2"])
    assert (kept.origin.session_id, kept.origin.turn, kept.origin.prompt) == (SID, 2, "")
    assert report.problems and SID in report.problems[0]


def test_a_user_commit_linked_by_hash_from_a_git_commit_tool_call(home: Home, tmp_path: Path) -> None:
    """Not opmem's auto-commit: an agent that ran `git commit` itself; the link store ties it to the turn."""
    repo = make_repo(tmp_path / "p2", {"a.py": "x = 1\n"}).resolve()
    project = home.projects.resolve_project(repo)
    oid = user_commit(
        repo, "agent made this", {"a.py": "x = 1\ny = 'written by the agent through its own git commit'\n"}, when=T0 + 2
    )
    store = home.sessions
    store.append_message("s2", "user", "commit it yourself", created_at=T0)
    reply = store.append_message("s2", "assistant", "committing", created_at=T0 + 1)
    store.append_message(
        "s2", "tool", f"[main {oid[:7]}] agent made this", called_by=reply.id, name="Bash",
        input={"command": "git commit -am 'agent made this'"}, created_at=T0 + 2,
    )  # fmt: skip
    store.commit_turn("s2")
    home.projects.link_session(project.id, "s2", store.get_turns("s2"))
    report = blame_path(home.projects, home.sessions, repo / "a.py")
    second = report.lines[1]
    assert second.origin is not None and (second.origin.session_id, second.origin.turn) == ("s2", 1)
    assert (second.origin.confidence, second.origin.reason) == ("high", "hash")
    assert second.origin.prompt == "commit it yourself"
    assert report.lines[0].origin is None


def test_bad_paths_and_specs(project, tmp_path: Path) -> None:
    home, _project_id, repo, _ = project
    assert parse_spec("a.py:3-7", lambda _: False) == ("a.py", 3, 7)
    assert parse_spec("a.py:3", lambda _: False) == ("a.py", 3, 3)
    assert parse_spec("odd:3", lambda _: True) == ("odd:3", None, None)  # a file really named so
    with pytest.raises(OpmemError, match="lines run from 1"):
        parse_spec("a.py:7-3", lambda _: False)
    outside = tmp_path / "elsewhere.py"
    outside.write_text("x\n")
    with pytest.raises(OpmemError, match="not in a bound project"):
        blame_path(home.projects, home.sessions, outside)
    with pytest.raises(OpmemError, match="no such file"):
        blame_path(home.projects, home.sessions, repo / "missing.py")
    with pytest.raises(ProjectGitError, match="git blame failed"):
        blame_path(home.projects, home.sessions, repo / "app.py", 900, 901)


def test_porcelain_parser_reuses_the_first_header_of_a_commit() -> None:
    a, b = "a" * 40, "b" * 40
    out = (
        f"{a} 1 1 2\nauthor Ann\nauthor-mail <ann@x>\nauthor-time 100\nsummary s\nfilename f\n\tline one\n"
        f"{a} 2 2\n\tline two\n"
        f"{b} 5 3 1\nauthor Bob\nauthor-mail <bob@x>\nauthor-time 200\nfilename f\n\tline three\n"
    ).encode()
    assert parse_porcelain(out) == [
        (1, a, "Ann <ann@x>", 100.0, "line one"),
        (2, a, "Ann <ann@x>", 100.0, "line two"),
        (3, b, "Bob <bob@x>", 200.0, "line three"),
    ]
