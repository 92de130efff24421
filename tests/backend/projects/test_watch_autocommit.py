"""`opmem watch` auto-commits live turns of bound sessions: a real project repository, a Claude
Code transcript appended record by record while the watcher polls it."""

from __future__ import annotations

import json
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from opmem_tui.backend.importers.watch import Watcher
from opmem_tui.backend.projects.autocommit import AutoCommitEvent

from ..importers.conftest import Transcript, text, tool_use
from ..importers.test_openprogram import Folder
from .project_repo_helpers import git, make_repo, write

SID = "bbbbbbbb-0000-4000-8000-000000000002"
CC = f"cc-{SID}"


class Live:
    """A project, a transcript file the 'agent' appends to, and a watcher driven by hand."""

    def __init__(self, home, tmp_path: Path, *, ago: timedelta = timedelta(0), **watch_options) -> None:
        self.home = home
        self.repo = make_repo(tmp_path / "proj", {"README.md": "hello\n", "app.py": "print(1)\n"})
        self.t = Transcript(session=SID, cwd=str(self.repo))
        self.path = tmp_path / "claude" / "projects" / "-proj" / f"{SID}.jsonl"
        self.path.parent.mkdir(parents=True)
        self.path.touch()
        self.written = 0
        self.events: list[AutoCommitEvent] = []
        self.watcher = Watcher(
            home, ["claude"], [tmp_path / "claude"], idle_seconds=0.0, on_commit=self.events.append, **watch_options
        )
        # The transcript's clock starts `ago` before the watch did (not before this constructor
        # began: on a loaded machine building the watcher can take seconds).
        started = self.watcher.committer.started_at if self.watcher.committer else datetime.now(UTC).timestamp()
        self.t.clock = datetime.fromtimestamp(started, UTC) - ago

    def flush(self) -> None:
        """The agent's new records reach the file; the watcher reads them, then the file goes quiet."""
        lines = self.t.lines()
        with open(self.path, "a") as handle:
            handle.write("".join(lines[self.written :]))
        self.written = len(lines)
        self.watcher.poll(self.path)
        self.watcher.tick(time.monotonic() + 5)

    def write_tool(self, tool_id: str, rel: str, content: str, name: str = "Write", message: str = "") -> None:
        call = self.t.assistant(
            message or f"msg_{tool_id}", tool_use(tool_id, name, file_path=str(self.repo / rel), content=content)
        )
        write(self.repo / rel, content)  # the tool runs
        self.t.result(tool_id, "ok", parent=call)

    def edit_tool(self, tool_id: str, rel: str, old: str, new: str, name: str = "Edit") -> None:
        """A Claude Code Edit as the CLI records it: the old and new strings, then the file changed."""
        call = self.t.assistant(
            f"msg_{tool_id}", tool_use(tool_id, name, file_path=str(self.repo / rel), old_string=old, new_string=new)
        )
        path = self.repo / rel
        path.write_text(path.read_text().replace(old, new, 1))
        self.t.result(tool_id, "ok", parent=call)

    def agent_commits(self) -> list[str]:
        return git(self.repo, "log", "--format=%H", "--author=via opmem").split()

    def changed(self, oid: str) -> list[str]:
        return git(self.repo, "show", "--name-only", "--format=", oid).split()


def test_a_live_turn_commits_exactly_the_paths_its_tools_wrote(home, tmp_path: Path) -> None:
    live = Live(home, tmp_path)
    live.t.prompt("add a greeting module")
    live.flush()
    assert home.sessions.get_meta(CC).project_id  # bound on first sight
    write(live.repo / "scratch.txt", "the user's own notes\n")  # the user, meanwhile
    live.write_tool("toolu_1", "greet.py", "def hi():\n    return 'hi'\n")
    live.flush()
    assert live.agent_commits() == []  # the model has not answered yet: the turn is still running
    live.t.assistant("msg_done", text("Added greet.py."))
    live.flush()

    [oid] = live.agent_commits()
    assert live.changed(oid) == ["greet.py"]
    subject = git(live.repo, "log", "-1", "--format=%s%n%an", oid).splitlines()
    assert subject == [f"[agent {CC}] turn 1: add a greeting module", "agent (claude-test-1 via opmem)"]
    assert "?? scratch.txt" in git(live.repo, "status", "--porcelain")  # never staged
    assert [(e.turn, e.commit, e.paths) for e in live.events] == [(1, oid, ("greet.py",))]
    [link] = home.projects.links_for_commit(home.sessions.get_meta(CC).project_id, oid)
    assert (link.session_id, link.turn, link.confidence, link.reason) == (CC, 1, "high", "opmem")

    # the next turn gets its own commit; turn 1 is not committed again
    live.t.prompt("now edit app.py")
    live.flush()
    live.write_tool("toolu_2", "app.py", "print(2)\n", name="Edit")
    live.t.assistant("msg_done2", text("Edited."))
    live.flush()
    newest, first = live.agent_commits()
    assert first == oid and live.changed(newest) == ["app.py"]
    assert git(live.repo, "status", "--porcelain") == "?? scratch.txt\n"


def test_a_user_dirty_file_the_agent_also_wrote_is_not_committed(home, tmp_path: Path) -> None:
    live = Live(home, tmp_path)
    write(live.repo / "README.md", "hello\nthe user's unsaved idea\n")  # dirty before the turn
    live.t.prompt("update the readme")
    live.flush()
    live.write_tool("toolu_1", "README.md", "hello\nthe user's unsaved idea\nagent text\n", name="Edit")
    live.write_tool("toolu_2", "new.py", "x = 1\n")
    live.t.assistant("msg_done", text("Updated."))
    live.flush()

    assert live.agent_commits() == []  # one dirty path stops the whole turn's commit
    project_id = home.sessions.get_meta(CC).project_id
    [warning] = home.projects.warnings(project_id)
    assert warning.paths == ("README.md",) and warning.turn == 1
    assert [e.warning for e in live.events] == [warning.message]
    assert "README.md" in live.events[0].warning
    assert git(live.repo, "status", "--porcelain") == " M README.md\n?? new.py\n"
    # later quiet moments do not repeat the warning
    live.watcher.tick(time.monotonic() + 10)
    assert len(home.projects.warnings(project_id)) == 1 and len(live.events) == 1


def test_a_turn_that_pauses_before_a_slow_tool_call_is_still_committed(home, tmp_path: Path) -> None:
    live = Live(home, tmp_path)
    live.t.prompt("write it")
    live.t.assistant("msg_1", text("Let me write the file."))
    live.flush()  # quiet: the reply so far looks like the end of the turn; nothing to commit
    assert live.agent_commits() == []
    call = live.t.assistant("msg_1", tool_use("toolu_1", "Write", file_path=str(live.repo / "slow.py"), content="s\n"))
    live.flush()  # the call is running: no result yet
    write(live.repo / "slow.py", "s\n")
    live.t.result("toolu_1", "ok", parent=call)
    live.t.assistant("msg_2", text("Written."))
    live.flush()
    [oid] = live.agent_commits()
    assert live.changed(oid) == ["slow.py"]


def test_no_autocommit_option_and_config(home, tmp_path: Path) -> None:
    live = Live(home, tmp_path, autocommit=False)
    live.t.prompt("add a file")
    live.flush()
    live.write_tool("toolu_1", "a.py", "a\n")
    live.t.assistant("msg_done", text("Done."))
    live.flush()
    assert home.sessions.get_meta(CC).project_id and live.agent_commits() == [] and live.events == []

    home.config.set("projects.autocommit", False)
    home.config.save()
    other = tmp_path / "other"
    other.mkdir()
    again = Live(home, other)
    assert again.watcher.committer is None


def test_history_and_turns_seen_late_are_not_auto_committed(home, tmp_path: Path) -> None:
    # a turn from before the watch started: its start state is unknown
    old = Live(home, tmp_path, ago=timedelta(hours=2))
    old.t.prompt("old work")
    old.flush()
    old.write_tool("toolu_1", "old.py", "o\n")
    old.t.assistant("msg_done", text("Done."))
    old.flush()
    assert old.agent_commits() == [] and old.events == []


def test_a_file_written_before_the_watcher_saw_the_prompt_counts_as_the_users(home, tmp_path: Path) -> None:
    live = Live(home, tmp_path, ago=timedelta(seconds=4))
    live.t.prompt("quick one")  # stamped 3 s ago: the watch had started, the turn is live
    live.write_tool("toolu_1", "quick.py", "q\n")  # ... and the agent wrote before the watcher looked
    live.flush()
    live.t.assistant("msg_done", text("Done."))
    live.flush()
    assert live.agent_commits() == []
    [event] = live.events
    assert event.paths == ("quick.py",) and "nothing was committed" in event.warning
    # the recorded warning says what happened, not that the user had changes
    [warning] = home.projects.warnings(home.sessions.get_meta(CC).project_id)
    assert warning.message == event.warning and warning.paths == ("quick.py",)
    assert "before opmem saw the turn's prompt" in warning.message
    assert "your uncommitted changes" not in warning.message


def test_a_line_the_user_adds_during_the_turn_is_not_committed_as_the_agents(home, tmp_path: Path) -> None:
    live = Live(home, tmp_path)
    live.t.prompt("print 2 and add a helper")
    live.flush()
    live.edit_tool("toolu_1", "app.py", "print(1)", "print(2)")
    live.write_tool("toolu_2", "helper.py", "def help():\n    pass\n")
    live.flush()
    with open(live.repo / "app.py", "a") as handle:  # the user, in their editor, before the turn ends
        handle.write("user_line = True\n")
    live.t.assistant("msg_done", text("Done."))
    live.flush()

    [oid] = live.agent_commits()
    assert live.changed(oid) == ["helper.py"]  # the agent's own file is committed
    assert "user_line" not in git(live.repo, "show", "HEAD")
    assert git(live.repo, "show", "HEAD:app.py") == "print(1)\n"
    assert (live.repo / "app.py").read_text() == "print(2)\nuser_line = True\n"  # the user's edit is kept
    assert git(live.repo, "status", "--porcelain") == " M app.py\n"
    [event] = live.events
    assert event.commit == oid and "app.py changed outside the agent during the turn" in event.warning
    [warning] = home.projects.warnings(home.sessions.get_meta(CC).project_id)
    assert warning.paths == ("app.py",) and warning.message == event.warning


def test_edits_replayed_on_the_turn_start_content_are_committed(home, tmp_path: Path) -> None:
    live = Live(home, tmp_path)
    live.t.prompt("two edits")
    live.flush()
    live.edit_tool("toolu_1", "app.py", "print(1)", "print(1)\nprint(3)")
    live.edit_tool("toolu_2", "app.py", "print(3)", "print(4)")
    call = live.t.assistant(
        "msg_m",
        tool_use(
            "toolu_3",
            "MultiEdit",
            file_path=str(live.repo / "README.md"),
            edits=[
                {"old_string": "hello", "new_string": "hi"},
                {"old_string": "hi", "new_string": "hey", "replace_all": True},
            ],
        ),
    )
    (live.repo / "README.md").write_text("hey\n")
    live.t.result("toolu_3", "ok", parent=call)
    live.t.assistant("msg_done", text("Done."))
    live.flush()
    [oid] = live.agent_commits()
    assert sorted(live.changed(oid)) == ["README.md", "app.py"] and live.events[0].warning == ""
    assert git(live.repo, "show", "HEAD:app.py") == "print(1)\nprint(4)\n"
    assert git(live.repo, "status", "--porcelain") == ""


def test_a_change_inside_an_openprogram_session_folder_reimports_that_folder(home, tmp_path: Path) -> None:
    state = tmp_path / "op"
    folder = Folder(state / "sessions")
    folder.root()
    folder.turn("u1", "first question", "first answer", pred="ROOT")
    watcher = Watcher(home, ["openprogram"], [state], idle_seconds=0.0)
    node_file = next((folder.path / "history").glob("*-u-u1.json"))
    assert watcher.poll(node_file).nodes == 2
    folder.turn("u2", "second question", "second answer", pred="u1_reply")
    new_file = next((folder.path / "history").glob("*-u-u2.json"))
    report = watcher.poll(new_file)
    assert report.nodes == 2
    sid = next(iter(home.sessions.list_sessions().sessions)).id
    assert [t.user.content for t in home.sessions.get_turns(sid)] == ["first question", "second question"]
    assert new_file.resolve() not in watcher.ignored


def test_watch_run_commits_a_live_turn(home, tmp_path: Path) -> None:
    """The real loop (watchfiles): the agent appends a whole turn; its commit follows."""
    live = Live(home, tmp_path)
    live.watcher.idle_seconds = 0.2
    stop, ready = threading.Event(), threading.Event()
    thread = threading.Thread(target=live.watcher.run, args=(stop,), kwargs={"ready": ready.set}, daemon=True)
    thread.start()
    try:
        assert ready.wait(10)
        live.t.prompt("make notes.md")
        with open(live.path, "a") as handle:
            handle.write("".join(live.t.lines()))
        deadline = time.monotonic() + 5
        while live.watcher.committer.turns.get(CC) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert live.watcher.committer.turns[CC].watch is not None
        live.write_tool("toolu_1", "notes.md", "n\n")
        live.t.assistant("msg_done", text("Done."))
        with open(live.path, "a") as handle:
            handle.write("".join(live.t.lines()[1:]))
        deadline = time.monotonic() + 5
        while not live.agent_commits() and time.monotonic() < deadline:
            time.sleep(0.05)
        [oid] = live.agent_commits()
        assert live.changed(oid) == ["notes.md"]
    finally:
        stop.set()
        thread.join(5)
    state = json.loads((home.path / "import-state.json").read_text())
    assert state["files"]


def test_an_agent_that_commits_itself_gets_its_commit_linked_and_no_extra_commit(home, tmp_path: Path) -> None:
    from .project_repo_helpers import user_commit

    live = Live(home, tmp_path)
    live.t.prompt("add lib.py and commit it")
    live.flush()
    live.write_tool("toolu_1", "lib.py", "L = 1\n")
    call = live.t.assistant("msg_c", tool_use("toolu_2", "Bash", command='git add lib.py && git commit -m "Add lib"'))
    oid = user_commit(live.repo, "Add lib", {"lib.py": "L = 1\n"}, when=live.t.clock.timestamp())  # the agent's shell
    live.t.result("toolu_2", f"[main {oid[:7]}] Add lib\n 1 file changed", parent=call)
    live.t.assistant("msg_done", text("Committed."))
    live.flush()

    assert live.agent_commits() == [] and live.events == []  # nothing left for opmem to commit
    [link] = home.projects.links_for_commit(home.sessions.get_meta(CC).project_id, oid)
    assert (link.session_id, link.turn, link.confidence, link.reason) == (CC, 1, "high", "hash")


def test_a_turn_that_grows_in_the_same_batch_as_the_next_prompt_is_committed_again(home, tmp_path: Path) -> None:
    live = Live(home, tmp_path)
    live.t.prompt("two files")
    live.flush()
    live.write_tool("toolu_1", "one.py", "1\n")
    live.t.assistant("msg_1", text("Wrote one.py."))
    live.flush()  # looks finished: committed
    [first] = live.agent_commits()
    live.write_tool("toolu_2", "two.py", "2\n", message="msg_2")  # the model went on...
    live.t.assistant("msg_3", text("And two.py."))
    live.t.prompt("next task")  # ... and the next prompt arrives in the same write
    live.flush()
    second, again = live.agent_commits()
    assert again == first and live.changed(second) == ["two.py"]
    assert git(live.repo, "log", "-1", "--format=%s").startswith(f"[agent {CC}] turn 1:")


def test_the_next_prompt_after_a_committed_turn_does_not_look_the_turn_up_again(
    home, tmp_path: Path, monkeypatch
) -> None:
    from opmem_tui.backend.projects.autocommit import LiveTurnCommitter

    live = Live(home, tmp_path)
    live.t.prompt("one file")
    live.flush()
    live.write_tool("toolu_1", "one.py", "1\n")
    live.t.assistant("msg_1", text("Done."))
    live.flush()
    looked: list[str] = []
    real = LiveTurnCommitter._find
    monkeypatch.setattr(LiveTurnCommitter, "_find", lambda self, turn: looked.append(turn.user_id) or real(self, turn))
    live.t.prompt("next")
    live.flush()
    # only the new turn is looked up (to see whether it is finished); the committed one is not
    assert looked == [live.watcher.committer.turns[CC].user_id]
