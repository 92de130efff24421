"""Hostile-content suite: names that try to leave their folder, links out of the home, text that
tries to style or drive the terminal, and the MCP tools called with all of it.

Everything runs in tmp_path with a sibling `outside/` folder: after each test nothing outside
the home (and the bound project) was created or changed.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
from pathlib import Path

import pygit2
import pytest

from opmem_tui.backend.distill.pipeline import RunOptions, run
from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import run_import
from opmem_tui.backend.model import OpmemError
from opmem_tui.backend.recall.context import recall_for
from opmem_tui.backend.recall.registry import TOOLS, call_json

TRAVERSAL = ["..", "../x", "../../etc/passwd", "a/b", "/etc", "", ".", ".hidden", "a\x00b", "x" * 200, "C:\\win", "~"]
MARKUP = "[bold red]pwned[/] [link=https://evil.example]click[/link]"
ESCAPES = "\x1b[2J\x1b]52;c;SGVsbG8=\x07\x9b31m\x1b[31m"


def tree(root: Path) -> dict[str, str]:
    """Every file (and link) under root with a digest of its bytes."""
    out: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            out[str(path)] = "-> " + os.readlink(path)
        elif path.is_file():
            out[str(path)] = hashlib.blake2b(path.read_bytes(), digest_size=8).hexdigest()
    return out


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    (folder / "etc").mkdir(parents=True)
    (folder / "etc" / "passwd").write_text("root:x:0:0\n")
    return folder


def test_session_ids_that_leave_their_folder_are_refused(tmp_path: Path, outside: Path) -> None:
    home = Home(outside / "a" / "b" / "home")  # `../..` from sessions/ lands in outside/
    home.sessions.append_message("good", "user", "hi")
    before = tree(outside)
    store = home.sessions
    for sid in TRAVERSAL:
        for action, args in (
            (store.append_message, (sid, "user", "x")),
            (store.get_meta, (sid,)),
            (store.rename_session, (sid, "t")),
            (store.delete_session, (sid,)),
            (store.get_nodes, (sid,)),
            (store.snapshot, (sid,)),
            (store.turn_starts, (sid,)),
        ):
            with pytest.raises(OpmemError):
                action(*args)
    assert tree(outside) == before


def test_imported_ids_and_paths_stay_inside_the_home(tmp_path: Path, outside: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    pygit2.init_repository(str(project))
    lines = []
    for n, sid in enumerate(TRAVERSAL):
        lines.append({"session": sid or "empty", "id": f"u{n}", "role": "user", "content": f"write {MARKUP}"})
        lines.append({"session": sid or "empty", "id": f"a{n}", "role": "assistant", "content": ESCAPES})
        lines.append(
            {
                "session": sid or "empty",
                "id": f"t{n}",
                "role": "tool",
                "name": "Write",
                "content": "ok",
                "input": {"file_path": f"../../outside/etc/{n}.txt", "content": "pwned"},
            }
        )
    source = tmp_path / "hostile.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in lines))
    home = Home(tmp_path / "home")
    before = tree(outside)
    report = run_import(home, "jsonl", [source])
    assert report.sessions == len(TRAVERSAL)
    sessions = home.sessions.list_sessions().sessions
    assert len(sessions) == len(TRAVERSAL)  # one each: no two ids merged
    for meta in sessions:
        assert home.sessions.path_for(meta.id).resolve().parent == home.sessions_dir.resolve()
    assert tree(outside) == before


def test_entity_names_and_slugs_stay_inside_the_memory(tmp_path: Path, outside: Path) -> None:
    """Sessions whose tools touch paths named to escape: the views, core.md and index stay in memory/."""
    home = Home(tmp_path / "home")
    for n, name in enumerate(
        ["../../../outside/etc/passwd", "..\\..\\outside", "/etc/passwd", "CON", "a\x00b.py", MARKUP]
    ):
        sid = f"s{n}"
        user = home.sessions.append_message(sid, "user", f"edit {name} please {ESCAPES}", session_meta={"cwd": "/work"})
        reply = home.sessions.append_message(sid, "assistant", f"Editing {name}.", parent_id=user.id)
        home.sessions.append_message(
            sid, "tool", "ok", parent_id=reply.id, called_by=reply.id, name="Edit",
            input={"file_path": name, "old_string": "a", "new_string": "b"},
        )  # fmt: skip
        home.sessions.commit_turn(sid)
    before = tree(outside)
    run(home, RunOptions())
    home.search_index.update()
    memory = home.memory_dir.resolve()
    written = [p for p in home.memory_dir.rglob("*") if p.is_file()]
    assert any(p.suffix == ".md" for p in written)
    for path in written:
        assert path.resolve().is_relative_to(memory), path
    assert tree(outside) == before


def test_links_out_of_the_home_are_not_followed(tmp_path: Path, outside: Path) -> None:
    stranger = Home(outside / "other")
    stranger.sessions.append_message("evil", "user", "a secret outside the home")
    stranger.sessions.commit_turn("evil")
    home = Home(tmp_path / "home")
    home.sessions.append_message("good", "user", "hi")
    home.sessions.commit_turn("good")
    os.symlink(stranger.sessions.path_for("evil"), home.sessions_dir / "evil")
    secret = outside / "secret.json"
    secret.write_text(json.dumps({"id": "zz", "seq": 9, "role": "user", "content": "SECRET", "created_at": 1.0}))
    os.symlink(secret, home.sessions.path_for("good") / "history" / "000009-u-zz.json")
    before = tree(outside)
    home = Home(home.path)
    assert [m.id for m in home.sessions.list_sessions(rescan=True).sessions] == ["good"]
    for action in (
        lambda: home.sessions.get_nodes("evil"),
        lambda: home.sessions.append_message("evil", "user", "written through the link"),
    ):
        with pytest.raises(OpmemError, match="symbolic link"):
            action()
    assert [n.content for n in home.sessions.get_nodes("good")] == ["hi"]
    assert any("000009-u-zz.json" in p and "symbolic link" in p for p in home.sessions.problems("good"))
    recall = recall_for(home, cwd=tmp_path)
    for args in ({"session": "evil"}, {"session": "good"}):
        reply, _ = call_json(recall, "memory_open_session", args)
        assert "SECRET" not in reply and "a secret outside" not in reply
    assert tree(outside) == before


def test_mcp_tools_are_read_only_and_bounded_under_hostile_arguments(tmp_path: Path, outside: Path) -> None:
    home = Home(tmp_path / "home")
    for n in range(3):
        user = home.sessions.append_message(f"s{n}", "user", f"{MARKUP} {ESCAPES} " + "long " * 5000)
        home.sessions.append_message(f"s{n}", "tool", "x" * 300_000, parent_id=user.id, name="Bash")
        home.sessions.commit_turn(f"s{n}")
    run(home, RunOptions())
    home.search_index.update()
    home.memory.close()
    home.search_index.close()
    del home
    gc.collect()  # the writers' connections are closed before the snapshot
    home = Home(tmp_path / "home")
    recall = recall_for(home, cwd=tmp_path)
    before = tree(tmp_path)
    hostile = [*TRAVERSAL, MARKUP, ESCAPES, "HEAD; rm -rf /", "--output=/tmp/x", "s0"]
    budget = recall.max_reply_bytes
    replies = 0
    for name, tool in TOOLS.items():
        props = tool.input_schema.get("properties", {})
        for value in hostile:
            args = {key: value for key, spec in props.items() if spec.get("type") == "string"}
            for key, spec in props.items():
                if spec.get("type") == "integer":
                    args[key] = spec.get("maximum", 10**9)
            reply, _ = call_json(recall, name, args)
            replies += 1
            assert len(reply.encode()) <= budget, (name, args)
            json.loads(reply)  # a whole JSON reply, even when cut to the budget
    assert replies == len(TOOLS) * len(hostile)
    assert tree(tmp_path) == before  # nothing written anywhere, the home included


async def test_entity_names_commit_messages_and_paths_on_screen_are_inert(tmp_path: Path) -> None:
    """The app (Pilot) over a store whose entity name, project commit message and commit paths
    carry console markup and terminal escapes: markup shows as typed, escapes never reach the
    terminal (the titles, messages, tool output, core.md and search snippets are in tests/app)."""
    from opmem_tui.backend.memory.records import Edge, Entity, entity_id
    from opmem_tui.widgets.commit_log import CommitLog
    from opmem_tui.widgets.graph_explorer import GraphExplorer
    from tests.app.conftest import make_app, press, settle, wait_until
    from tests.app.memory_sample import distil_sample
    from tests.app.sample_store import build_sample_store, fresh_home
    from tests.app.test_safety import screen_segments_text, screen_text

    store = tmp_path / "store"
    build_sample_store(store, projects_root=tmp_path)
    home = fresh_home(store)
    distil_sample(home)
    name = f"{MARKUP} {ESCAPES}entity"
    project = home.memory.entity("webapp")
    hostile = Entity(entity_id("file", name), "file", name, scope=project.scope)
    prov = project.provenance
    home.memory.append(
        [
            hostile,
            Edge(Edge.make_id(project.id, "edited", hostile.id, prov), project.id, hostile.id, "edited", prov, 0.9),
        ]
    )
    webapp = pygit2.Repository(str(tmp_path / "projects" / "webapp"))
    blob = webapp.create_blob(b"x = 1\n")
    builder = webapp.TreeBuilder(webapp.head.peel().tree)
    builder.insert(f"{MARKUP}{ESCAPES}.py".replace("/", "_"), blob, pygit2.GIT_FILEMODE_BLOB)
    sig = pygit2.Signature("Dana", "dana@example.com")
    webapp.create_commit(
        "HEAD", sig, sig, f"{MARKUP} {ESCAPES}commit\n\nbody {ESCAPES}", builder.write(), [webapp.head.target]
    )
    app = make_app(home)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "2")  # projects: the hostile commit is the newest of webapp
        await settle(pilot)
        log = app.screen.query_one(CommitLog)
        await wait_until(pilot, lambda: bool(log.commits) and "pwned" in log.commits[0].summary, "the commit")
        _inert(screen_text(app), screen_segments_text(app), MARKUP)
        await press(pilot, "3")  # memory: find the entity in the graph
        await settle(pilot)
        graph = app.screen.query_one(GraphExplorer)
        graph.finder.focus()
        await pilot.press(*"pwned")
        await wait_until(pilot, lambda: name in [m.name for m in graph._matches], "the entity found")
        _inert(screen_text(app), screen_segments_text(app), "[bold red]pwned[/]")  # the list of matches
        graph.choose(hostile.id)  # as enter on its row does
        await settle(pilot)
        _inert(screen_text(app), screen_segments_text(app), MARKUP)


def _inert(text: str, raw: str, markup: str) -> None:
    assert markup in text  # shown as typed, not applied
    for sequence in ("\x1b]52", "\x1b[2J", "\x9b31m", "\x07"):
        assert sequence not in raw
