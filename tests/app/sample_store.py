"""A small, fully deterministic store for app tests, snapshots and screenshots.

Built through the public SessionStore API with the wall clock pinned, so created_at,
updated_at, commit times and therefore commit ids are the same on every run.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

from opmem_tui.backend.home import Home

NOW = 1_767_225_600.0  # 2026-01-01 00:00:00 UTC: the clock ages are measured against
DAY = 86_400.0
HOSTILE_TITLE = "[bold red]pwned[/] \x1b[2J title"
HOSTILE_TEXT = (
    "markup [bold red]x[/] and [link=https://evil.example]click[/link]\n"
    "osc52 \x1b]52;c;SGVsbG8=\x07 clear \x1b[2J bell \x07 and \x9b31m c1-csi\n"
    "tab\tstays, carriage\r\nreturn"
)


@contextlib.contextmanager
def pinned_clock(start: float) -> Iterator[None]:
    """time.time() returns start, start+1, ... while building (commit times included)."""
    ticks = [start]

    def fake() -> float:
        ticks[0] += 1.0
        return ticks[0]

    with mock.patch("time.time", fake):
        yield


def node_id(sid: str) -> str:
    """Deterministic node ids (the store would draw random ones), so branch names are stable."""
    _COUNTS[sid] = _COUNTS.get(sid, 0) + 1
    return f"{sid[:6]}{_COUNTS[sid]:04d}"


_COUNTS: dict[str, int] = {}


def _turn(store, sid, user, reply, at, *, meta=None, tools=(), thinking=None, model="claude-sonnet-4"):
    u = store.append_message(sid, "user", user, created_at=at, session_meta=meta, node_id=node_id(sid))
    a = store.append_message(
        sid,
        "assistant",
        reply,
        name=model,
        created_at=at + 5,
        metadata={"thinking": thinking} if thinking else None,
        node_id=node_id(sid),
    )
    for index, (name, args, result) in enumerate(tools):
        store.append_message(
            sid, "tool", result, called_by=a.id, name=name, input=args, created_at=at + 6 + index, node_id=node_id(sid)
        )
    store.commit_turn(sid)
    return u, a


def _commit(repo, files: dict[str, str], message: str, when: float, author: tuple[str, str]) -> None:
    import pygit2

    index = repo.index
    for name, text in files.items():
        target = Path(repo.workdir) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        index.add(name)
    index.write()
    tree = index.write_tree()
    sig = pygit2.Signature(author[0], author[1], int(when), 0)
    parents = [] if repo.head_is_unborn else [repo.head.target]
    repo.create_commit("HEAD", sig, sig, message, tree, parents)


DANA = ("Dana Developer", "dana@example.com")
AGENT = ("agent (claude-sonnet-4 via opmem)", "agent@opmem.invalid")


def build_projects(home: Home, root: Path) -> dict[str, str]:
    """Two bound projects with fixed-time commits, one of them made by an agent turn.

    Returns {name: project id}. Workdirs live under `root` (the tests' fake $HOME), so the
    header shows them as ~/projects/<name> on every machine.
    """
    import pygit2

    webapp = root / "projects" / "webapp"
    webapp.mkdir(parents=True, exist_ok=True)
    repo = pygit2.init_repository(str(webapp), initial_head="main")
    t = NOW - 30 * DAY
    _commit(
        repo,
        {
            "src/auth/middleware.py": "def require_login(request):\n    if not request.session.get('user'):\n        return redirect('/login?next=' + request.path)\n"
        },
        "Add login middleware",
        t,
        DANA,
    )
    _commit(repo, {"README.md": "# webapp\n\nA small web app.\n"}, "Write a README", t + DAY, DANA)
    _commit(
        repo,
        {
            "src/auth/middleware.py": "def require_login(request):\n    if request.path != '/login' and not request.session.get('user'):\n        return redirect('/login?next=' + request.path)\n"
        },
        "[agent fix-login] turn 2: Run the tests after your fix.\n\nOpmem-Session: fix-login\nOpmem-Turn: 2\n",
        NOW - 2 * DAY + 660,
        AGENT,
    )
    _commit(repo, {"CHANGELOG.md": "- Fix the login redirect loop\n"}, "Changelog for the login fix", NOW - DAY, DANA)
    compiler = root / "projects" / "compiler"
    compiler.mkdir(parents=True, exist_ok=True)
    repo = pygit2.init_repository(str(compiler), initial_head="main")
    _commit(
        repo,
        {"tokenizer.py": "def tokens(text):\n    return text.split()\n"},
        "Tokenizer in its own module",
        NOW - 20 * DAY,
        DANA,
    )
    registry = home.projects
    with pinned_clock(NOW - 31 * DAY):
        ids = {
            "webapp": registry.resolve_project(webapp, "webapp").id,
            "compiler": registry.resolve_project(compiler, "compiler").id,
        }
    registry.set_status(ids["compiler"], "paused")
    return ids


def build_sample_store(
    path: Path, *, tool_calls: int = 24, output_lines: int = 400, projects_root: Path | None = None
) -> Home:
    """Five sessions (one forked, one hostile, one with many tool calls), one broken folder and,
    with `projects_root`, two bound projects."""
    _COUNTS.clear()
    home = Home(path, durable=False)
    home.ensure()
    store = home.sessions
    ids = (
        build_projects(home, projects_root)
        if projects_root is not None
        else {"webapp": "webapp", "compiler": "compiler"}
    )
    with contextlib.ExitStack() as clock:
        # 1. A three-turn session with tool calls, thinking and a retry on turn 3.
        sid = "fix-login"
        clock.enter_context(pinned_clock(NOW - 2 * DAY))
        meta = {"source": "claude-code", "title": "Fix the login redirect loop", "created_at": NOW - 2 * DAY}
        t0 = NOW - 2 * DAY
        _turn(
            store,
            sid,
            "Login redirects forever after the session expires. Can you look?",
            "I'll read the auth middleware first.",
            t0,
            meta=meta,
            tools=[
                (
                    "read",
                    {"file_path": "src/auth/middleware.py"},
                    "def require_login(request):\n    if not request.session.get('user'):\n        return redirect('/login?next=' + request.path)\n",
                )
            ],
            thinking="The redirect target is probably the login page itself.",
        )
        long_log = "\n".join(f"tests/test_auth.py::test_case_{i} PASSED" for i in range(output_lines))
        _turn(
            store,
            sid,
            "Run the tests after your fix.",
            "Fixed: the middleware now skips /login. All tests pass.",
            t0 + 600,
            tools=[
                (
                    "edit",
                    {
                        "file_path": "src/auth/middleware.py",
                        "old": "if not",
                        "new": "if request.path != '/login' and not",
                    },
                    "ok",
                ),
                ("bash", {"command": "pytest -q tests/test_auth.py"}, long_log),
            ],
        )
        u3, _ = _turn(
            store, sid, "Add a regression test.", "Added test_login_no_loop to tests/test_auth.py.", t0 + 1200
        )
        store.append_message(
            sid,
            "assistant",
            "Retry: wrote tests/test_redirects.py with three cases instead.",
            parent_id=u3.id,
            name="claude-sonnet-4",
            created_at=t0 + 1300,
            node_id=node_id(sid),
        )
        store.commit_turn(sid)

        # 2. Hostile content: markup and escape sequences must show literally or stripped.
        sid = "hostile"
        clock.close()
        clock.enter_context(pinned_clock(NOW - DAY))
        _turn(
            store,
            sid,
            HOSTILE_TEXT,
            "Reply with " + HOSTILE_TEXT,
            NOW - 1 * DAY,
            meta={"source": "codex", "title": HOSTILE_TITLE, "created_at": NOW - DAY},
            tools=[("bash", {"command": "printf '\\x1b[2J'"}, HOSTILE_TEXT)],
            model="gpt-5-codex",
        )

        # 3. Many tool calls with long outputs in one turn.
        sid = "many-tools"
        clock.close()
        clock.enter_context(pinned_clock(NOW - 5 * 3600))
        tools = [
            (
                "grep",
                {"pattern": f"TODO-{i}", "path": "src"},
                "\n".join(f"src/mod_{i}.py:{n}: TODO-{i} line {n}" for n in range(40)),
            )
            for i in range(tool_calls)
        ]
        _turn(
            store,
            sid,
            "Find every TODO in src.",
            f"Found TODOs in {tool_calls} modules.",
            NOW - 5 * 3600,
            meta={"source": "claude-code", "title": "Sweep TODO comments", "created_at": NOW - 5 * 3600},
            tools=tools,
        )

        # 4-5. Plain sessions for sorting and filtering.
        clock.close()
        clock.enter_context(pinned_clock(NOW - 20 * DAY))
        _turn(
            store,
            "parser-refactor",
            "Refactor the tokenizer into its own module.",
            "Done; tokenizer.py holds it now.",
            NOW - 20 * DAY,
            meta={"source": "gemini", "title": "Refactor the parser", "created_at": NOW - 20 * DAY},
        )
        clock.close()
        clock.enter_context(pinned_clock(NOW - 40 * 60))
        _turn(
            store,
            "docs",
            "Write the README install section.",
            "Added install steps for pipx and uv.",
            NOW - 40 * 60,
            meta={"source": "aider", "created_at": NOW - 40 * 60},
        )
    # Bound after the turns were committed: a project id holds a digest of its (tmp) path, and
    # keeping it out of the committed meta.json keeps the session commit ids the same on every run.
    for name, sid in (("webapp", "fix-login"), ("webapp", "many-tools"), ("compiler", "parser-refactor")):
        store.update_session(sid, project_id=ids[name])
        if projects_root is not None:
            home.projects.add_session_to_project(ids[name], sid)
    # A folder without meta.json: listed as skipped, never fatal.
    broken = store.root / "broken-folder"
    broken.mkdir(parents=True, exist_ok=True)
    (broken / "history").mkdir(exist_ok=True)
    return home


def fresh_home(path: Path) -> Home:
    """A Home object that shares nothing (no caches) with the one that built the store."""
    return Home(path, durable=False)


if __name__ == "__main__":  # pragma: no cover - manual look at the sample store
    import sys

    target = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/opmem-sample")
    os.environ.setdefault("TZ", "UTC")
    time.tzset()
    build_sample_store(target)
    print(target)
