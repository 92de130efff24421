"""Private sessions and [memory] exclusions: kept and browsable, never distilled, indexed or recalled.

Real store, real distillation, real search index, the real recall tools. Each kept-out session
speaks distinctive words, and every file under memory/ is searched for them byte by byte.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from opmem_tui.backend.distill.pipeline import run
from opmem_tui.backend.distill.state import load_state
from opmem_tui.backend.home import Home
from opmem_tui.backend.memory.entity_finder import EntityFinder
from opmem_tui.backend.model import OpmemError, SessionMeta
from opmem_tui.backend.orchestration import set_private
from opmem_tui.backend.privacy.exclusions import (
    REASON_PRIVATE,
    Exclusions,
    is_excluded,
    path_matches,
)
from opmem_tui.backend.recall.context import recall_for
from opmem_tui.backend.recall.registry import call_json

START = 1_700_000_000.0
PUBLIC_WORD = "heliotropeparsnip"
PRIVATE_WORD = "zanzibarquokka"
PATH_WORD = "marzipanaardvark"
PROJECT_WORD = "quetzalbanjo"


def write_session(home: Home, sid: str, word: str, *, cwd: str = "/work/proj", project_id: str = "", at=START):
    """A coding turn that edits and tests a file named after `word`, and says `word` in its text."""
    store = home.sessions
    meta = {"cwd": cwd, **({"project_id": project_id} if project_id else {})}
    user = store.append_message(sid, "user", f"please fix the {word} parser", created_at=at, session_meta=meta)
    reply = store.append_message(sid, "assistant", f"Fixing {word} now.", parent_id=user.id, created_at=at + 1)
    store.append_message(
        sid,
        "tool",
        "ok",
        parent_id=reply.id,
        called_by=reply.id,
        name="Edit",
        input={"file_path": f"{cwd}/{word}.py", "old_string": "a", "new_string": "b"},
        created_at=at + 2,
    )
    store.append_message(
        sid,
        "tool",
        "==== 3 passed in 0.10s ====",
        parent_id=reply.id,
        called_by=reply.id,
        name="Bash",
        input={"command": f"pytest -q tests/test_{word}.py"},
        created_at=at + 3,
    )
    store.append_message(
        sid,
        "assistant",
        f"The {word} parser is fixed; decided to keep {word} strict.",
        parent_id=reply.id,
        created_at=at + 4,
    )
    store.commit_turn(sid)


def memory_bytes(home: Home) -> dict[str, bytes]:
    return {str(p.relative_to(home.memory_dir)): p.read_bytes() for p in home.memory_dir.rglob("*") if p.is_file()}


def all_cores(home: Home) -> str:
    """Every core.md block (the global one and each project's): what agents are handed."""
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(home.memory_dir.rglob("core.md")))


def files_holding(home: Home, word: str) -> list[str]:
    needle = word.encode()
    return sorted(name for name, data in memory_bytes(home).items() if needle in data.lower())


def configure(path: Path, **memory) -> Home:
    path.mkdir(parents=True, exist_ok=True)
    lines = ["[memory]"] + [f"{key} = {json.dumps(list(value))}" for key, value in memory.items()]
    (path / "config.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Home(path)  # a fresh Home: its config is read once


def tool(home: Home, name: str, args: dict, cwd: Path) -> tuple[dict, bool]:
    text, error = call_json(recall_for(home, cwd=cwd), name, args)
    return json.loads(text), error


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    return tmp_path / "user"


# -- the rule ---------------------------------------------------------------------------------------


def test_path_globs_expand_the_home_and_cover_the_folder_itself(user_home: Path):
    pattern = "~/work/secret-client/**"
    assert path_matches(str(user_home / "work/secret-client"), pattern)
    assert path_matches(str(user_home / "work/secret-client/app/src"), pattern)
    assert path_matches("~/work/secret-client/app", pattern)
    assert not path_matches(str(user_home / "work/secret-clientele"), pattern)
    assert not path_matches("/elsewhere/work/secret-client", pattern)
    assert path_matches("/srv/a/b/private", "/srv/*/b/*")
    assert not path_matches("/srv/a/x/b/private", "/srv/*/b/*")
    assert path_matches("/srv/a/x/b/private", "/srv/**/private")
    assert path_matches(str(user_home / "clients/acme"), "~/clients/*")
    assert not path_matches("", pattern)


def meta(**fields) -> SessionMeta:
    extra = fields.pop("extra", {})
    return SessionMeta.from_json({"id": "s1", **fields, **extra})


def test_one_function_says_why_a_session_is_kept_out(user_home: Path):
    home = configure(user_home / "opmem", exclude_projects=["clientx", "Acme App"], exclude_paths=["~/secret/**"])
    lookup = {"p-acme": ("Acme App", "/work/acme"), "p-open": ("open", str(user_home / "secret/open"))}.get
    rules = Exclusions.of(home.config.memory, lookup)
    assert rules.reason(meta()) is None
    assert rules.reason(meta(extra={"private": True})) == REASON_PRIVATE
    assert rules.reason(meta(extra={"private": False})) is None
    assert "clientx" in rules.reason(meta(project_id="clientx"))  # by id
    assert "Acme App" in rules.reason(meta(project_id="p-acme"))  # by name
    assert "~/secret/**" in rules.reason(meta(extra={"cwd": str(user_home / "secret/x")}))  # by cwd
    assert "~/secret/**" in rules.reason(meta(project_id="p-open"))  # by the project's folder
    assert rules.reason(meta(project_id="p-unknown", extra={"cwd": "/work/other"})) is None
    assert is_excluded(meta(extra={"cwd": str(user_home / "secret")}), home.config) is not None
    assert is_excluded(meta(extra={"cwd": "/work/other"}), home.config.memory) is None
    assert rules.fingerprint != Exclusions().fingerprint


# -- never distilled, never indexed, never recalled -------------------------------------------------


def test_kept_out_sessions_leave_nothing_under_memory_and_stay_browsable(user_home: Path, tmp_path: Path):
    home = configure(tmp_path / "opmem", exclude_projects=["clientx"], exclude_paths=["~/work/secret-client/**"])
    write_session(home, "pub", PUBLIC_WORD)
    write_session(home, "priv", PRIVATE_WORD, at=START + 100)
    set_private(home, "priv")
    write_session(home, "bypath", PATH_WORD, cwd=str(user_home / "work/secret-client/app"), at=START + 200)
    write_session(home, "byproject", PROJECT_WORD, project_id="clientx", at=START + 300)

    report = run(home)
    assert report.sessions == 1, (load_state(home.memory_dir), report)  # only the public one
    home.search_index.update()  # the importers' hook: every session, as after an import
    assert files_holding(home, PUBLIC_WORD)  # the check can fail: the public words are there
    assert any(name.endswith("core.md") for name in files_holding(home, PUBLIC_WORD))
    for word in (PRIVATE_WORD, PATH_WORD, PROJECT_WORD):
        assert files_holding(home, word) == [], word
    assert set(load_state(home.memory_dir).withheld) == {"priv", "bypath", "byproject"}

    # kept and browsable: listed, and every turn replays
    listed = {m.id for m in home.sessions.list_sessions().sessions}
    assert listed == {"pub", "priv", "bypath", "byproject"}
    for sid in ("priv", "bypath", "byproject"):
        [turn] = home.sessions.get_turns(sid)
        assert turn.commit and "parser" in turn.user.content

    # the recall tools: nothing from them
    cwd = tmp_path
    for word in (PRIVATE_WORD, PATH_WORD, PROJECT_WORD):
        found, error = tool(home, "memory_search", {"query": word}, cwd)
        assert not error and found["hits"] == []
        found, error = tool(home, "memory_graph_neighbors", {"entity": f"{word}.py"}, cwd)
        assert error and found["error"]["code"] == "unknown_entity"
        assert word not in json.dumps(found["error"].get("suggestions", []))
        found, error = tool(home, "memory_graph_neighbors", {"entity": word[:-2]}, cwd)  # no "did you mean"
        assert error and word not in json.dumps(found["error"].get("suggestions", []))
    found, error = tool(home, "memory_search", {"query": PUBLIC_WORD}, cwd)
    assert not error and found["hits"]
    for sid in ("priv", "bypath", "byproject"):
        found, error = tool(home, "memory_open_session", {"session_id": sid}, cwd)
        assert error and found["error"]["code"] == "private"
        assert "parser" not in json.dumps(found)
    timeline, _ = tool(home, "memory_timeline", {}, cwd)
    assert {e["source"] for e in timeline["events"]} == {"session:pub"}
    # a mistyped id suggests no private session
    found, error = tool(home, "memory_open_session", {"session_id": "pri"}, cwd)
    assert error and "priv" not in found["error"].get("suggestions", [])


def test_turning_private_withdraws_what_it_gave_and_off_brings_it_back(tmp_path: Path, user_home: Path):
    home = configure(tmp_path / "opmem")
    write_session(home, "pub", PUBLIC_WORD)
    write_session(home, "later", PRIVATE_WORD, at=START + 100)
    run(home)
    cwd = tmp_path
    assert PRIVATE_WORD in all_cores(home)
    assert tool(home, "memory_search", {"query": PRIVATE_WORD}, cwd)[0]["hits"]
    views = home.memory_dir / "graph/views/entity"
    assert any(PRIVATE_WORD in p.name for p in views.iterdir())

    assert EntityFinder(home.memory).find(PRIVATE_WORD)  # the app's entity search finds it while public
    change = set_private(home, "later")
    assert change.changed and change.reason == REASON_PRIVATE
    assert EntityFinder(home.memory).find(PRIVATE_WORD) == ()
    assert EntityFinder(home.memory).find(PUBLIC_WORD)
    assert PRIVATE_WORD not in all_cores(home)
    assert PUBLIC_WORD in all_cores(home)
    assert not any(PRIVATE_WORD in p.read_text(encoding="utf-8") or PRIVATE_WORD in p.name for p in views.iterdir())
    assert tool(home, "memory_search", {"query": PRIVATE_WORD}, cwd)[0]["hits"] == []
    stats = home.search_index.index.db.execute("SELECT count(*) FROM records WHERE session_id='later'").fetchone()[0]
    assert stats == 0
    assert home.search_index.index.cursors().get("later") is None
    assert [e.provenance.session_id for e in home.memory.timeline().events] == ["pub"] * len(
        home.memory.timeline().events
    )
    # the logs are append-only: the lines stay as history, the current memory shows none of them
    assert files_holding(home, PRIVATE_WORD)
    assert all(
        name.startswith(("timeline/", "graph/entities", "graph/edges", ".cache", "index"))
        for name in files_holding(home, PRIVATE_WORD)
    )
    # a distillation now leaves it alone
    assert run(home).sessions == 0
    assert PRIVATE_WORD not in all_cores(home)

    back = set_private(home, "later", False)
    assert back.changed and back.reason is None
    assert "later" not in load_state(home.memory_dir).sessions  # its cursor is reset
    report = run(home)
    assert report.sessions == 1 and report.written.total == 0  # the same records, already in the logs
    assert PRIVATE_WORD in all_cores(home)
    assert tool(home, "memory_search", {"query": PRIVATE_WORD}, cwd)[0]["hits"]
    assert any(PRIVATE_WORD in p.name for p in views.iterdir())
    assert not tool(home, "memory_open_session", {"session_id": "later"}, cwd)[1]


def test_adding_an_exclusion_withdraws_and_removing_it_readmits(tmp_path: Path, user_home: Path):
    folder = str(user_home / "work/secret-client/app")
    home = configure(tmp_path / "opmem")
    write_session(home, "pub", PUBLIC_WORD)
    write_session(home, "client", PATH_WORD, cwd=folder, at=START + 100)
    run(home)
    assert PATH_WORD in all_cores(home)

    assert [h.session_id for h in home.search(PATH_WORD)][:1] == ["client"]
    home = configure(tmp_path / "opmem", exclude_paths=["~/work/secret-client/**"])
    # at once, before any run: the memory's queries and the app's search leave it out
    assert PATH_WORD not in json.dumps(tool(home, "memory_timeline", {}, tmp_path)[0])
    assert "client" not in {h.session_id for h in home.search(PATH_WORD)}
    run(home)
    assert PATH_WORD not in all_cores(home)
    assert tool(home, "memory_search", {"query": PATH_WORD}, tmp_path)[0]["hits"] == []
    assert load_state(home.memory_dir).withheld == {
        "client": "folder matches ~/work/secret-client/** ([memory] exclude_paths)"
    }

    home = configure(tmp_path / "opmem")
    run(home)
    assert PATH_WORD in all_cores(home)
    assert tool(home, "memory_search", {"query": PATH_WORD}, tmp_path)[0]["hits"]
    assert load_state(home.memory_dir).withheld == {}


def test_git_tools_leave_out_a_private_sessions_commits_and_an_excluded_project(tmp_path: Path):
    from tests.backend.recall.stores import build_store

    built = build_store(tmp_path)
    home = built.home
    log, error = tool(home, "memory_git_log", {}, built.workdir)
    assert not error and built.agent_commit[:12] in {c["commit"] for c in log["commits"]}
    set_private(home, built.session_id)
    log, error = tool(home, "memory_git_log", {}, built.workdir)
    commits = {c["commit"] for c in log["commits"]}
    assert not error and built.agent_commit[:12] not in commits and built.user_commit[:12] in commits
    shown, error = tool(home, "memory_git_show", {"commit": built.agent_commit[:10]}, built.workdir)
    assert error and shown["error"]["code"] == "private"
    assert not tool(home, "memory_git_show", {"commit": built.user_commit[:10]}, built.workdir)[1]

    home = configure(home.path, exclude_projects=[built.project_id])
    log, error = tool(home, "memory_git_log", {"project_id": built.project_id}, built.workdir)
    assert error and log["error"]["code"] == "private"


def test_a_long_lived_reader_sees_a_session_turn_private_in_another_process(tmp_path: Path, user_home: Path):
    """The MCP server keeps one Home for hours; `opmem sessions private` runs in another process."""
    server = configure(tmp_path / "opmem")
    write_session(server, "pub", PUBLIC_WORD)
    write_session(server, "later", PRIVATE_WORD, at=START + 100)
    run(server)
    assert {e.provenance.session_id for e in server.memory.timeline().events} == {"pub", "later"}
    set_private(Home(server.path), "later")  # another Home: as another process would
    assert {e.provenance.session_id for e in server.memory.timeline().events} == {"pub"}
    set_private(Home(server.path), "later", False)
    assert {e.provenance.session_id for e in server.memory.timeline().events} == {"pub", "later"}


def test_no_llm_title_is_asked_for_an_excluded_or_private_session(tmp_path: Path, user_home: Path):
    from opmem_tui.backend.config import LlmSettings
    from opmem_tui.backend.distill.titles import install_title_hook
    from tests.backend.distill.llm_server import ChatServer, Reply

    home = configure(tmp_path / "opmem", exclude_paths=["~/work/secret-client/**"])
    write_session(home, "priv", PRIVATE_WORD)  # no title asked yet (no hook)
    set_private(home, "priv")
    with ChatServer() as server:
        server.default = Reply('Title: "A title"')
        llm = LlmSettings(base_url=server.base_url, model="m", max_retries=0, timeout_s=5.0)
        maker = install_title_hook(home.sessions, llm, excluded=lambda meta: home.exclusions().reason(meta))
        assert maker is not None
        write_session(home, "client", PATH_WORD, cwd=str(user_home / "work/secret-client/app"), at=START + 100)
        home.sessions.append_message("priv", "user", f"more on {PRIVATE_WORD}", created_at=START + 200)
        home.sessions.commit_turn("priv")
        write_session(home, "pub", PUBLIC_WORD, at=START + 300)
        maker.wait(10)
        [request] = server.requests  # the check can fail: the public session was titled
        assert PUBLIC_WORD in json.dumps(request)
    assert home.sessions.get_meta("pub").title == "A title"
    assert home.sessions.get_meta("priv").title_source != "llm"
    assert home.sessions.get_meta("client").title_source != "llm"


def test_the_index_record_filter_reads_the_listing_once_and_answers_as_get_meta_does(tmp_path: Path, user_home: Path):
    """The memory-record filter of an index pass takes each session's meta from the store's
    listing (one read per pass, no session opened); its answers are those of get_meta per session."""
    folder = str(user_home / "work/secret-client/app")
    home = configure(tmp_path / "opmem", exclude_paths=["~/work/secret-client/**"])
    write_session(home, "pub", PUBLIC_WORD)
    write_session(home, "client", PATH_WORD, cwd=folder, at=START + 100)
    write_session(home, "later", PRIVATE_WORD, at=START + 200)
    set_private(home, "later")
    updater = home.search_index.updater
    updater._rules = updater.rules()
    rules = updater._rules

    def uncached(session_id: str, scope: str) -> bool:
        if session_id:
            try:
                if rules.reason(home.sessions.get_meta(session_id)) is not None:
                    return True
            except OpmemError:
                pass
        return scope.startswith("project:") and rules.project_reason(scope[len("project:") :]) is not None

    asks = [(sid, scope) for sid in ("pub", "client", "later", "gone", "") for scope in ("", "project:p1", "global")]
    hidden = updater.record_filter()
    opened = []
    real_get_meta = home.sessions.get_meta
    home.sessions.get_meta = lambda sid: opened.append(sid) or real_get_meta(sid)
    try:
        cached = [hidden(sid, scope) for sid, scope in asks * 2]
    finally:
        del home.sessions.get_meta
    assert opened == ["gone"]  # only a session the listing does not have is asked for on its own
    assert cached == [uncached(sid, scope) for sid, scope in asks * 2]
    assert cached[:3] == [False] * 3 and cached[3:9] == [True] * 6
