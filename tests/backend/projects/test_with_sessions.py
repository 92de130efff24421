"""Projects with the real SessionStore: an in-project session, auto-commit from stored turns,
and links computed from `store.get_turns`."""

from pathlib import Path

from opmem_tui.backend.home import Home

from .project_repo_helpers import changed_in, fsck, make_repo, status, user_commit

T0 = 1_700_000_000.0


def test_in_project_session_autocommit_and_links(home: Home, tmp_path: Path):
    repo = make_repo(tmp_path / "proj", {"app.py": "v1\n"}).resolve()
    registry, store = home.projects, home.sessions
    project = registry.resolve_project(repo)
    sid = "sess-1"
    location = registry.session_location(project.id, sid)

    watch = registry.begin_turn(project.id)
    meta = {"project_id": project.id, "source": "opmem"}
    store.append_message(sid, "user", "update the app", created_at=T0, session_meta=meta, location=location)
    assistant = store.append_message(sid, "assistant", "done", name="demo-model", created_at=T0 + 1)
    (repo / "app.py").write_text("v2\n")
    store.append_message(
        sid,
        "tool",
        "ok",
        called_by=assistant.id,
        name="Edit",
        input={"file_path": str(repo / "app.py"), "old_string": "v1", "new_string": "v2"},
        created_at=T0 + 2,
    )
    store.commit_turn(sid)
    [turn] = store.get_turns(sid)
    result = registry.commit_agent_turn(watch, turn, session_id=sid)

    assert (location / "meta.json").is_file()  # the session repo lives inside the project
    assert result.commit and changed_in(repo, result.commit) == {"app.py"}
    assert status(repo) == []  # neither .opmem/ nor the agent's file shows up
    fsck(repo)
    [link] = registry.links_for_commit(project.id, result.commit)
    assert (link.session_id, link.turn, link.head_id) == (sid, 1, assistant.id)

    # an imported-style second turn: the user commits what the agent wrote, inside the window
    store.append_message(sid, "user", "now add a helper", created_at=T0 + 100)
    helper = store.append_message(sid, "assistant", "added", created_at=T0 + 101)
    store.append_message(
        sid, "tool", "ok", called_by=helper.id, name="Write", input={"file_path": "helper.py"}, created_at=T0 + 102
    )
    store.commit_turn(sid)
    manual = user_commit(repo, "helper", {"helper.py": "def h(): ...\n"}, when=T0 + 130)
    links = registry.link_session(project.id, sid, store.get_turns(sid))
    got = {item.commit: (item.turn, item.confidence) for item in links}
    assert got[manual] == (2, "low")
