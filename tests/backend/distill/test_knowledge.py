"""The project knowledge the rules find (extract/knowledge/) and the brief core.md leads with."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmem_tui.backend.distill.extract import knowledge as kn
from opmem_tui.backend.distill.extract import vocabulary
from opmem_tui.backend.distill.extract.knowledge import decisions, evidence, stack, techs
from opmem_tui.backend.distill.extract.shell import split_commands
from opmem_tui.backend.memory.core import CORE_BUDGET
from opmem_tui.backend.memory.records import entity_id

from .history import Call, Session, Turn, brief_of, distil_history, package_json

# -- the vocabulary ------------------------------------------------------------------------------


def test_the_vocabulary_is_data_with_categories_aliases_and_drivers():
    assert vocabulary.size() > 10_000
    assert vocabulary.lookup("postgres").name == "PostgreSQL"
    assert vocabulary.lookup("psycopg2").name == "PostgreSQL"  # a driver implies its database
    assert vocabulary.lookup("Jest").category == "test-framework"
    assert vocabulary.lookup("jest").slot == "test-framework"
    assert vocabulary.lookup("sqlalchemy").category == "orm"
    assert vocabulary.lookup("pnpm").category == "package-manager"
    assert vocabulary.lookup("tailwindcss").name == "Tailwind CSS"
    assert vocabulary.lookup("uvicorn[standard]").name == "Uvicorn"
    assert vocabulary.lookup("no-such-technology-xyz") is None
    # a popular registry package without a curated category is a library
    assert vocabulary.lookup("chalk").category == "library"


# -- cues, one by one ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Let's move from Jest to Vitest.", [("Jest", "Vitest")]),
        ("We're migrating the tests from nose to pytest", [("nose", "pytest")]),
        ("Replace Redux with Zustand in the store.", [("Redux", "Zustand")]),
        ("Use httpx instead of requests.", [("requests", "httpx")]),
        ("Instead of npm, use pnpm for everything.", [("npm", "pnpm")]),
        ("pnpm, not npm", [("npm", "pnpm")]),
        ("Switch the migrations from golang-migrate to goose", [("golang-migrate", "goose")]),
        ("Move from Flask to `Quokka`", [("Flask", "Quokka")]),  # unknown name, marked, takes Flask's category
        ("Move the files from src to lib", []),  # neither is a technology
        ("Biome replaces ESLint from today.", [("ESLint", "Biome")]),
    ],
)
def test_replacements(sentence, expected):
    assert kn.replacements(sentence) == expected


def test_drops_and_choices():
    assert kn.dropped("We're dropping Redux.") == ["Redux"]
    assert kn.dropped("Remove the unused import") == []
    techs = [t.name for t in kn.mentioned_techs("add Alpine.js and use htmx for the forms")]
    assert techs == ["Alpine.js", "htmx"]
    # plain English words that are also names do not count unless they are marked
    assert kn.mentioned_techs("go to the next page and make it express") == []
    assert [t.name for t in kn.mentioned_techs("the project is Django on MySQL with Celery")] == [
        "Django",
        "MySQL",
        "Celery",
    ]
    assert [t.name for t in kn.mentioned_techs("use `chalk` for colours")] == ["chalk"]
    assert [(t.name, v) for t, v in kn.versions("we're on Python 3.11 and Node 20")] == [
        ("Python", "3.11"),
        ("Node.js", "20"),
    ]


@pytest.mark.parametrize(
    ("sentence", "convention", "is_global"),
    [
        ("Always write docstrings for public functions.", True, False),
        ("Never commit directly to main.", True, False),
        ("Don't use print for logging, use the logger.", True, False),
        ("I prefer small commits.", True, False),
        ("In every Go project I want table-driven tests.", True, True),
        ("Across all my projects, always use type hints.", True, True),
        ("Don't worry about the old tests.", False, False),
        ("Why does it always fail?", False, False),
        ("Fix the login bug.", False, False),
        ("I want docstrings on public functions.", True, False),
        ("I want you to fix the login bug.", False, False),
    ],
)
def test_conventions_and_their_scope(sentence, convention, is_global):
    assert kn.is_convention(sentence) is convention
    if convention:
        assert kn.is_global(sentence) is is_global


@pytest.mark.parametrize(
    ("command", "normalized", "kind"),
    [
        ("pytest -q tests/test_cart.py -k rounding", "pytest -q", "test"),
        ("python -m pytest -x", "pytest -x", "test"),
        ("go test ./...", "go test ./...", "test"),
        ("npm run build", "npm run build", "build"),
        ("npm run dev", "npm run dev", "run"),
        ("ruff check .", "ruff check .", "lint"),
        ("ruff format backend", "ruff format backend", "format"),
        ("mypy --strict src/app", "mypy --strict src/app", "typecheck"),
        ("alembic upgrade head", "alembic upgrade head", "migrate"),
        ("python manage.py migrate", "python manage.py migrate", "migrate"),
        ("fly deploy", "fly deploy", "deploy"),
        ("mix phx.server", "mix phx.server", "run"),
        ("ls -la", "ls -la", ""),
    ],
)
def test_commands_are_normalized_and_classified(command, normalized, kind):
    [argv] = split_commands(command)
    line = kn.normalize_command(argv)
    assert line == normalized
    shell_kind = "test" if kind == "test" else "run"
    assert kn.command_kind(line, shell_kind) == kind


def test_manifests_imports_env_names_routes_and_ports():
    deps, versions = kn.manifest_facts(
        "pyproject.toml",
        '[project]\nrequires-python = ">=3.11"\ndependencies = ["django>=5", "celery", "psycopg2-binary"]\n'
        "[tool.pytest.ini_options]\n",
    )
    assert {"django", "celery", "pytest"} <= set(deps)
    assert versions == [("Python", "3.11")]
    deps, versions = kn.manifest_facts("go.mod", "module x\n\ngo 1.22\n\nrequire github.com/go-chi/chi/v5 v5.0.12\n")
    assert versions == [("Go", "1.22")] and deps == ["github.com/go-chi/chi/v5"]
    deps, versions = kn.manifest_facts("docker-compose.yml", "services:\n  db:\n    image: postgres:16\n")
    assert deps == ["PostgreSQL"] and versions == [("PostgreSQL", "16")]
    assert kn.imports("app/db.py", "import os\nfrom sqlalchemy import select\nimport httpx\n") == [
        "sqlalchemy",
        "httpx",
    ]
    assert kn.imports("src/a.ts", "import { z } from 'zod'\nimport fs from 'fs'\nimport x from './x'\n") == ["zod"]
    code = 'url = os.environ["DATABASE_URL"]\nkey = os.getenv("STRIPE_KEY", "dev")\nport = process.env.PORT\n'
    assert kn.env_names(code) == ["DATABASE_URL", "STRIPE_KEY", "PORT"]
    assert kn.env_names("API_TOKEN=abc123\nDEBUG_MODE=1\n", env_file=True) == ["API_TOKEN", "DEBUG_MODE"]
    routes = kn.routes('@app.get("/items/{id}")\ndef f(): ...\nrouter.post("/api/orders", h)\n')
    assert routes == ["GET /items/{id}", "POST /api/orders"]
    assert kn.exposed_ports("Dockerfile", "FROM python:3.12\nEXPOSE 8000\n") == [":8000"]


# -- a history through the real stages -----------------------------------------------------------


def _django_history() -> list[Session]:
    pyproject = (
        '[project]\nname = "shop"\nrequires-python = ">=3.11"\n'
        'dependencies = ["django>=5", "celery", "mysqlclient", "nose"]\n'
    )
    return [
        Session(
            "s-setup",
            [
                Turn(
                    "Set up the project. We use MySQL with Celery for the jobs.",
                    [
                        Call("write", path="/work/demo/pyproject.toml", content=pyproject),
                        Call("bash", command="poetry add django celery", output="Installing..."),
                        Call("bash", command="nosetests", output="Ran 4 tests\nOK", exit_code=0),
                    ],
                ),
                Turn("Always write docstrings for public functions.", reply="Noted."),
                Turn("Good.", reply="Anything else?"),
            ],
            day=0,
        ),
        Session(
            "s-tests",
            [
                Turn(
                    "Let's move the tests from nose to pytest.",
                    [
                        Call("bash", command="poetry add --group dev pytest", output="ok"),
                        Call(
                            "bash",
                            command="pytest -q tests/test_orders.py",
                            output="....F\n=== 1 failed, 4 passed in 0.5s ===",
                            exit_code=1,
                        ),
                    ],
                ),
                Turn(
                    "Fix it.",
                    [
                        Call("edit", path="/work/demo/shop/orders.py", content='TOKEN = os.environ["ORDERS_TOKEN"]\n'),
                        Call("bash", command="pytest -q", output="=== 5 passed in 0.4s ===", exit_code=0),
                        Call("bash", command="rm old_tests.py", output="", exit_code=0),
                    ],
                ),
            ],
            day=3,
        ),
        Session(
            "s-lint",
            [
                Turn(
                    "In every project I want ruff, not flake8.",
                    [Call("bash", command="ruff check .", output="All checks passed!", exit_code=0)],
                ),
            ],
            day=5,
        ),
    ]


def test_a_history_gives_a_brief_with_the_stack_commands_conventions_and_state(tmp_path: Path):
    memory = distil_history(tmp_path / "memory", _django_history())
    core = brief_of(memory)
    assert len(core.encode("utf-8")) <= CORE_BUDGET
    lines = core.splitlines()
    assert lines[3] == "[Project · demo]"
    (stack,) = _lines(core, "· stack: ")
    for name in ("Python 3.11", "Django", "MySQL", "Celery", "pytest (was nose)", "Poetry"):
        assert name in stack, (name, stack)
    assert "· stack: nose" not in core and ", nose" not in stack  # replaced: history, never current
    assert any("· test: pytest -q" in line and "lint: ruff check ." in line for line in lines), core
    assert any(
        line.startswith("· conventions: ") and "always write docstrings for public functions" in line for line in lines
    )
    assert any(line.startswith("· state: tests passing (") for line in lines), core
    assert any("decided" in line and "pytest replaces nose" in line for line in lines), core
    assert any("env: ORDERS_TOKEN" in line for line in lines), core
    # every content line carries its pointer
    content = [line for line in lines if line.startswith("· ")]
    assert content and all("↪ session:" in line for line in content)
    # the turn that said nothing has no event; the deletion is told
    events = [e.summary for e in memory.timeline(scope="project:demo", limit=None).events]
    assert not any(s.startswith(("Discussed: Good", "Asked: Anything")) for s in events), events
    assert any("deleted old_tests.py" in s.lower() for s in events), events


def test_the_replaced_fact_is_history_in_the_graph(tmp_path: Path):
    memory = distil_history(tmp_path / "memory", _django_history())
    project = entity_id("project", "demo")
    nose = entity_id("tech", "tech:nose")
    edges = memory.edges(scope="project:demo", include_superseded=True, limit=None)
    to_nose = [g for g in edges if g.edge.from_id == project and g.target == nose and g.relation != "dropped"]
    assert to_nose and all(g.edge.superseded_by is not None for g in to_nose)
    current = memory.edges(scope="project:demo", relations=["test-framework"], limit=None)
    assert [memory.entity_refs([g.target])[g.target].name for g in current] == ["pytest"]


def test_global_preferences_go_to_the_global_block(tmp_path: Path):
    memory = distil_history(tmp_path / "memory", _django_history())
    from opmem_tui.backend.memory.core import render_core

    glob = render_core(memory, __import__("datetime").date(2026, 6, 1))
    assert "[Preferences · global]" in glob
    assert "· preferences: I want ruff, not flake8  ↪ session:s-lint" in glob
    # and the project block lists it too (global scope shows in every project)
    assert "· preferences: I want ruff, not flake8" in brief_of(memory)


def test_a_later_decision_supersedes_and_the_block_keeps_its_budget(tmp_path: Path):
    history = [
        Session(
            f"s{i}",
            [
                Turn(
                    f"Implement feature {i} in the web app, keep it tidy and well tested please.",
                    [
                        Call(
                            "write",
                            path="/work/demo/package.json",
                            content=package_json({"react": "18"}, {"jest": "29"}),
                        )
                        if i == 0
                        else Call(
                            "edit", path=f"/work/demo/src/f{i}.ts", content=f"import {{ z }} from 'zod'\n// {i}\n"
                        ),
                        Call("bash", command="npm test", output=f"Tests: {i + 3} passed", exit_code=0),
                    ],
                    reply="Done: " + "details " * 30,
                )
            ],
            day=i,
        )
        for i in range(30)
    ]
    history.append(Session("s-vitest", [Turn("Let's move from Jest to Vitest.", [])], day=31))
    memory = distil_history(tmp_path / "memory", history)
    core = brief_of(memory)
    assert len(core.encode("utf-8")) <= CORE_BUDGET
    (stack,) = _lines(core, "· stack: ")
    assert "Vitest (was Jest)" in stack and "React" in stack and "Zod" in stack.replace("zod", "Zod")
    assert "Jest," not in stack and not stack.split("  ↪")[0].endswith("Jest")


def test_an_error_and_the_edit_that_fixed_it_are_in_the_brief(tmp_path: Path):
    failing = "E   KeyError: 'scope'\n=== 1 failed, 3 passed in 0.2s ==="
    history = [
        Session(
            "s-fix",
            [
                Turn("Run the tests.", [Call("bash", command="pytest -q", output=failing, exit_code=1)]),
                Turn(
                    "Fix the cache key.",
                    [
                        Call("edit", path="/work/demo/app/cache.py", content="key = (scope, name)\n"),
                        Call("bash", command="pytest -q", output="=== 4 passed in 0.2s ===", exit_code=0),
                    ],
                ),
            ],
        )
    ]
    core = brief_of(distil_history(tmp_path / "memory", history))
    assert any(
        line.startswith("· fixed ") and "KeyError" in line and "app/cache.py" in line for line in core.splitlines()
    )
    assert any(line.startswith("· state: tests passing (") for line in core.splitlines()), core


def _lines(core: str, prefix: str) -> list[str]:
    """The lines opening with `prefix`; the stack's is its two lines (the app's, then the tools') as one."""
    if prefix == "· stack: ":
        both = [line.split(": ", 1)[1] for line in core.splitlines() if line.startswith(("· stack: ", "· tools: "))]
        return ["· stack: " + ", ".join(both)] if both else []
    return [line for line in core.splitlines() if line.startswith(prefix)]


def test_a_project_described_in_one_sentence_gives_its_whole_stack(tmp_path: Path):
    said = "It's a Node project, TypeScript, running on Express with Prisma talking to Postgres."
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-d", [Turn(said)])]))
    (stack,) = _lines(core, "· stack: ")
    for name in ("Node.js", "TypeScript", "Express", "Prisma", "PostgreSQL"):
        assert name in stack, core


def test_commands_the_user_gives_as_the_way_are_the_commands(tmp_path: Path):
    turns = [
        Turn("We deploy with `fly deploy` from the repo root."),
        Turn("Type checking is `mypy src/` and the dev server is `python manage.py runserver`."),
        Turn("Run `make ci` to run the tests, not `npm test`."),
        Turn("Use `httpx` for the tests."),  # a name, not a command
        Turn("How do I run `cargo bench`?"),  # a question gives no command
    ]
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-c", turns)]))
    (commands,) = [line for line in core.splitlines() if line.startswith("· ") and " test: " in line]
    assert "test: make ci" in commands and "npm test" not in commands, core
    assert "deploy: fly deploy" in commands and "typecheck: mypy src/" in commands, core
    assert "run: python manage.py runserver" in commands, core
    assert "cargo bench" not in commands and "httpx" not in commands
    assert "mypy" in _lines(core, "· stack: ")[0]


def test_a_check_done_with_a_common_word_tool_names_the_tool(tmp_path: Path):
    said = "We format with black and lint with ruff. The walls are painted black."
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-t", [Turn(said)])]))
    (stack,) = _lines(core, "· stack: ")
    assert "Black" in stack and "Ruff" in stack, core
    assert techs.tech_name("black", curated=True) is not None  # it is the vocabulary's: only the cue decides


@pytest.mark.parametrize(
    ("said", "old", "new"),
    [
        ("We're moving off nose, everything should be pytest now.", "nose", "pytest"),
        ("Also stop using requests, use httpx everywhere in this project.", "requests", "httpx"),
    ],
)
def test_a_drop_that_names_its_successor_is_a_replacement(tmp_path: Path, said, old, new):
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-r", [Turn(said)])]))
    assert any(f"{new} replaces {old}" in line for line in _lines(core, "· decided ")), core
    assert not _lines(core, "· conventions: "), core  # a decision, not a convention


def test_a_failure_fixed_by_a_command_closes_the_problem(tmp_path: Path):
    error = "django.db.utils.OperationalError: (1054, \"Unknown column 'orders.shipped_at'\")"
    calls = [
        Call("bash", command="python manage.py migrate", output=error, exit_code=1),
        Call("bash", command="python manage.py makemigrations orders", output="Migrations for 'orders'"),
        Call("bash", command="python manage.py migrate", output="Applying orders.0007... OK"),
    ]
    core = brief_of(
        distil_history(tmp_path / "memory", [Session("s-m", [Turn(f"the migration fails: {error}", calls)])])
    )
    (fixed,) = _lines(core, "· fixed ")
    assert "OperationalError" in fixed and "python manage.py makemigrations" in fixed, core
    assert not _lines(core, "· open problem"), core
    assert "──fails-with──►" not in core  # fixed: history, not a current fact


@pytest.mark.parametrize(
    ("argv", "program", "kind"),
    [
        ("python manage.py migrate", "python manage.py migrate", "run"),
        ("uv run python manage.py test", "python manage.py test", "test"),
        ("php artisan migrate", "php artisan migrate", "run"),
        ("node server.js --port 3000", "node server.js", "run"),
        ("uv run pytest -q", "pytest", "test"),
        ("bundle exec rails db:migrate", "rails db:migrate", "run"),
        ("python -c 'print(1)'", "python", "run"),
        ("npm run build", "npm run build", "run"),
        ("pnpm run --silent lint", "pnpm run lint", "run"),
    ],
)
def test_what_ran_is_named_by_its_script_not_its_interpreter(argv, program, kind):
    from opmem_tui.backend.distill.extract.shell import classify

    (args,) = split_commands(argv)
    simple = classify(args)
    assert (simple.program, simple.kind) == (program, kind)


def test_a_command_that_failed_then_passed_in_the_turn_is_told_as_fixed(tmp_path: Path):
    calls = [
        Call("bash", command="cargo build", output="error[E0425]: cannot find value `x` in this scope", exit_code=1),
        Call("edit", path="/work/demo/src/main.rs", content="let x = 1;\n"),
        Call("bash", command="cargo build", output="Finished dev [unoptimized] target(s)"),
    ]
    memory = distil_history(tmp_path / "memory", [Session("s-b", [Turn("build it", calls)])])
    (line,) = [ln for ln in brief_of(memory).splitlines() if "Ran cargo build" in ln or "ran cargo build" in ln]
    assert "(fixed: error[E0425]" in line and "failed" not in line, line


def test_names_that_are_also_words_after_a_verb_of_choice_and_a_switch_to_one(tmp_path: Path):
    turns = [
        Turn("This service uses chi for routing and sqlc against Postgres. We run it in Docker on Kubernetes."),
        Turn("we're switching the migrations to goose, golang-migrate keeps breaking"),
        Turn("Let's move the handlers to a folder of their own."),  # no technology: nothing replaced
    ]
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-w", turns)]))
    (stack,) = _lines(core, "· stack: ")
    for name in ("chi", "sqlc", "PostgreSQL", "Docker", "Kubernetes", "goose"):
        assert name in stack, core
    assert "golang-migrate" not in stack
    assert any("goose replaces golang-migrate" in line for line in _lines(core, "· decided ")), core


def test_endpoints_the_user_names(tmp_path: Path):
    said = "The server exposes /healthz and GET /api/v1/orders; the config lives in /etc/svc and app/config.py."
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-e", [Turn(said)])]))
    (where,) = [line for line in core.splitlines() if "endpoints: " in line]
    assert "/healthz" in where and "GET /api/v1/orders" in where, core
    assert "/etc/svc" not in where and "config.py" not in where


def test_a_sentence_that_lists_the_stack_and_one_that_names_a_kind(tmp_path: Path):
    turns = [
        Turn("Quick context: Rails 7 monolith, Ruby 3.2, Postgres, Sidekiq for jobs, Hotwire on the front."),
        Turn("Specs are RSpec. Package manager is Bundler. Deployments go through Heroku."),
        Turn("Compare Django, Flask, FastAPI and Litestar for me."),  # options weighed: not the stack
        Turn("Please keep controllers thin, put logic in service objects."),
    ]
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-l", turns)]))
    (stack,) = _lines(core, "· stack: ")
    for name in ("Ruby on Rails 7", "Ruby 3.2", "PostgreSQL", "Sidekiq", "Hotwire", "RSpec", "Bundler", "Heroku"):
        assert name in stack, core
    for name in ("Django", "Flask", "FastAPI"):
        assert name not in stack, core
    assert any("controllers thin" in line for line in _lines(core, "· conventions: ")), core


def test_a_markdown_brief_in_a_prompt(tmp_path: Path):
    prompt = (
        "I want to build a habit tracker.\n\n## Stack\n- Backend: FastAPI\n- DB: Postgres via SQLAlchemy, "
        "migrations with Alembic\n- Frontend: React + Vite, Tailwind\n\n## Rules\n- Use uv for Python deps, never pip.\n"
        "- Tests go in tests/ and use pytest fixtures, no unittest classes.\n"
    )
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-md", [Turn(prompt)])]))
    (stack,) = _lines(core, "· stack: ")
    for name in ("FastAPI", "PostgreSQL", "SQLAlchemy", "Alembic", "React", "Vite", "Tailwind CSS", "uv", "pytest"):
        assert name in stack, core
    assert "unittest" not in stack and "pip" not in stack.replace("pipenv", ""), core  # said not to be used


def test_a_name_said_to_be_gone_is_dropped_and_its_successor_takes_its_place(tmp_path: Path):
    assert kn.dropped("Vite is our bundler now, webpack is gone.") == ["webpack"]
    assert kn.dropped("npm is banned here") == ["npm"]
    history = [
        Session("s-a", [Turn("We bundle with Webpack and use npm.")]),
        Session("s-b", [Turn("Vite is our bundler now, webpack is gone.")], day=2),
    ]
    core = brief_of(distil_history(tmp_path / "memory", history))
    (stack,) = _lines(core, "· stack: ")
    assert "Vite (was webpack)" in stack or ("Vite" in stack and "webpack" not in stack.replace("(was webpack)", "")), (
        core
    )
    assert any("Vite replaces webpack" in line for line in _lines(core, "· decided ")), core


@pytest.mark.parametrize(
    ("pattern", "literals"),
    [
        (stack._TOOL_FOR, ("format", "lint", "check", "test")),
        (decisions._DROP_AFTER, decisions._DROP_AFTER_LITERALS),
        (decisions._SWITCH_TO, ("to",)),
    ],
)
def test_the_pre_checks_never_skip_a_text_the_pattern_matches(pattern, literals):
    from hypothesis import given
    from hypothesis import strategies as st

    pieces = st.sampled_from(
        ["Format", "LINT", "type-check", "te\u017ft", "Test", "with", "using", "black", "ruff", " ", ",", "is", "gone",
         "GONE", "banned", "webpack", "switching", "the", "migrations", "TO", "goose", "\u212a", "\u017f", "Removed", "npm"]
    )  # fmt: skip

    @given(st.lists(pieces, max_size=12).map(" ".join))
    def check(text: str) -> None:
        if pattern.search(text):
            assert evidence.may_hold(text, literals), text

    check()


@pytest.mark.parametrize(
    ("said", "new", "old"),
    [
        ("We migrated the database to PostgreSQL last week.", "PostgreSQL", "MySQL"),
        ("Let's switch to Postgres.", "PostgreSQL", "MySQL"),
        ("We moved our jobs over to Sidekiq.", "Sidekiq", "Celery"),
    ],
)
def test_a_switch_to_a_database_or_queue_that_names_no_old_one_retires_the_old(tmp_path: Path, said, new, old):
    history = [
        Session("s-a", [Turn("The app is Django on MySQL with Celery for background jobs.")]),
        Session("s-b", [Turn(said)], day=2),
    ]
    memory = distil_history(tmp_path / "memory", history)
    core = brief_of(memory)
    (stack,) = _lines(core, "· stack: ")
    assert new in stack, core
    assert old not in stack.replace(f"(was {old})", ""), core  # history, never current
    project = entity_id("project", "demo")
    old_id = memory.entity_refs([entity_id("tech", f"tech:{old.lower()}")])
    assert old_id, "the old technology is still in the graph, as history"
    current = memory.edges(scope="project:demo", limit=None)
    assert not [g for g in current if g.edge.from_id == project and g.target in old_id and g.relation == "uses"]
    assert any(new in line for line in _lines(core, "· decided ")), core


def test_a_switch_of_one_part_keeps_the_other_databases(tmp_path: Path):
    """Projects hold several databases: only a switch of the database itself makes one the one."""
    history = [
        Session("s-a", [Turn("The app is Django on PostgreSQL with Redis as the cache.")]),
        Session("s-b", [Turn("Let's move the analytics to ClickHouse.")], day=2),
        Session("s-c", [Turn("We use SQLite for the tests.")], day=3),
    ]
    core = brief_of(distil_history(tmp_path / "memory", history))
    (stack,) = _lines(core, "· stack: ")
    for name in ("PostgreSQL", "Redis", "SQLite"):
        assert name in stack, core


def test_an_e2e_framework_and_test_helpers_never_take_the_unit_test_frameworks_place(tmp_path: Path):
    history = [
        Session("s-a", [Turn("Use Playwright for end-to-end tests and Vitest for unit tests.")]),
        Session(
            "s-b",
            [Turn("add coverage", [Call("bash", command="pip install pytest-cov hypothesis", output="Installed")])],
            day=1,
        ),
    ]
    core = brief_of(distil_history(tmp_path / "memory", history))
    (stack,) = _lines(core, "· stack: ")
    for name in ("Playwright", "Vitest", "pytest-cov", "Hypothesis"):
        assert name in stack, core
    assert "(was" not in stack, core  # neither helper replaced a framework


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("State lives in Zustand; we dropped Redux last month.", ["Redux"]),
        ("We got rid of jQuery in the templates.", ["jQuery"]),
        ("drop Redux Toolkit", ["Redux"]),
        ("remove the React import", []),  # a part of it, not the technology
        ("I removed the Django admin", []),
    ],
)
def test_drops_in_the_past_tense_and_not_a_part_of_a_name(sentence, expected):
    assert kn.dropped(sentence) == expected


def test_replacements_of_multi_word_names_and_conventions_to_follow():
    assert kn.replacements("We're moving from Create React App to Vite.") == [("Create React App", "Vite")]
    assert kn.replacements("We switched the CI from Travis to GitHub Actions.") == [("Travis", "GitHub Actions")]
    assert kn.is_convention("Commit messages follow Conventional Commits.")
    assert kn.is_convention("Please stop using any in TypeScript.")
    assert not kn.is_convention("Follow the steps in the README.")
    assert not kn.is_convention("I will follow up tomorrow.")


def test_an_import_sorter_beside_the_formatter_and_a_never_that_is_a_choice(tmp_path: Path):
    assert kn.replacements("pnpm please, never npm, for the frontend bits.") == [("npm", "pnpm")]
    assert kn.is_convention("Every public function needs a docstring.")
    history = [Session("s-f", [Turn("Format everything with black and sort imports with isort.")])]
    core = brief_of(distil_history(tmp_path / "memory", history))
    (stack,) = _lines(core, "· stack: ")
    assert "Black" in stack and "isort" in stack and "(was" not in stack, core


def test_an_error_fixed_outside_the_session_is_history_once_the_command_passes(tmp_path: Path):
    failing = Call(
        "bash", command="python manage.py migrate", output="OperationalError: (1045, 'Access denied')", exit_code=1
    )
    passing = Call("bash", command="python manage.py migrate", output="Applying auth.0001_initial... OK")
    turns = [Turn("migrate fails", [failing]), Turn("ok I fixed the password in .env, try again", [passing])]
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-m", turns)]))
    assert "──fails-with──►" not in core, core  # not a current fact any more
    (fixed,) = _lines(core, "· fixed ")
    assert "Access denied" in fixed and "(python manage.py migrate passes since)" in fixed, core


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "src/App.tsx(3,21): error TS2307: Cannot find module '@/lib/api'.",
            ["TS2307: Cannot find module '@/lib/api'"],
        ),
        ("./main.go:12:2: undefined: foo", ["undefined: foo"]),
        ("main.c:3:5: error: expected ';' before '}' token", ["expected ';' before '}' token"]),
        ("main.c:3:5: warning: unused variable 'x'", []),
        ("src/lib.rs:10:5: note: required by a bound", []),
    ],
)
def test_a_compilers_located_diagnostics_are_errors_its_warnings_not(line, expected):
    from opmem_tui.backend.distill.extract import patterns

    assert patterns.errors(line) == expected


def test_a_swap_a_layout_said_with_go_and_a_rule_said_with_only(tmp_path: Path):
    assert kn.replacements("swap Jest for Vitest") == [("Jest", "Vitest")]
    assert kn.dropped("We're going to swap axios for the native fetch API.") == ["axios"]
    assert kn.is_convention("Use named exports only.")
    assert kn.layout_facts("Components go in src/components, hooks in src/hooks.")[1] == [
        ("Components", "src/components"),
        ("hooks", "src/hooks"),
    ]
    said = "the build fails with: Cannot find module '@/lib/api' from the api client"
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-x", [Turn(said)])]))
    assert "endpoints" not in core, core  # an import alias path, not an endpoint


def test_go_module_paths_with_a_major_version_name_their_technology():
    assert vocabulary.lookup("github.com/go-chi/chi/v5").name == "chi"
    assert vocabulary.lookup("github.com/jackc/pgx/v5").name == "PostgreSQL"  # a driver
    assert vocabulary.lookup("github.com/gin-gonic/gin").name == "Gin"
    assert not vocabulary.lookup("github.com/spf13/viper").curated  # a library stays one
    assert vocabulary.lookup("github.com/spf13/cobra").category == "cli"  # a library the dictionary knows by role


def test_a_command_keeps_its_operands_and_progress_said_in_a_sentence(tmp_path: Path):
    turns = [
        Turn("run the tests", [Call("bash", command="go test ./...", output="ok  \tgithub.com/acme/svc\t0.012s")]),
        Turn("Done with the refactor of the handlers package; next up is the auth middleware."),
        Turn("We use table-driven tests everywhere."),
    ]
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-g", turns)]))
    assert "test: go test ./..." in core, core  # not merged into `go test` by the linker
    progress = [line for line in core.splitlines() if " · done: " in line or line.startswith("· done: ")]
    assert any("the refactor of the handlers package" in line for line in progress), core
    assert any("· pending: the auth middleware" in line for line in progress), core  # one line (checks lead it)
    assert any("table-driven tests everywhere" in line for line in _lines(core, "· conventions: ")), (
        core
    )  # this project's
    assert kn.progress_items("I'm done with this", from_user=True) == []


def test_a_part_of_the_project_named_by_its_technology_is_the_stack_even_in_a_question(tmp_path: Path):
    turns = [
        Turn("Why does the React component re-render on every keystroke?"),
        Turn("The Celery worker keeps dying with a MemoryError."),
        Turn("I need the Postgres connection pool to be configurable."),
        Turn("Fix the main app and the rich text editor."),  # no technology named: nothing
    ]
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-o", turns)]))
    (stack,) = _lines(core, "· stack: ")
    for name in ("React", "Celery", "PostgreSQL"):
        assert name in stack, core
    assert "Rich" not in stack, core
    assert any("keeps dying" in line for line in _lines(core, "· open problem: ")), core


def test_a_task_of_a_framework_names_the_framework(tmp_path: Path):
    turns = [
        Turn("start it", [Call("bash", command="mix phx.server", output="[info] Running SpotterWeb.Endpoint")]),
        Turn("migrate", [Call("bash", command="php artisan migrate", output="Migrated: 2024_01_01_create_users")]),
    ]
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-p", turns)]))
    (stack,) = _lines(core, "· stack: ")
    assert "Phoenix" in stack and "Laravel" in stack and "Elixir" in stack, core


def test_an_instruction_file_the_agent_read_or_wrote_is_the_users_word_but_not_opmems_own_block(tmp_path: Path):
    claude_md = (
        "# CLAUDE.md\n\n## Commands\n- Run the tests with `pytest -q`\n\n## Conventions\n- Never commit directly to main.\n"
        "- Prefer httpx over requests.\n\nThe API lives in services/api.\n\n"
        "<!-- opmem:core:begin (written by `opmem core --write`; edits inside are replaced) -->\n"
        "· stack: Flask, Celery  ↪ session:old\n<!-- opmem:core:end -->\n"
    )
    numbered = "\n".join(f"{i:>6}→{line}" for i, line in enumerate(claude_md.splitlines(), 1))  # as Read shows it
    agents_md = "# AGENTS.md\n\nWe use pnpm, never npm.\n"
    turns = [
        Turn("read the instructions", [Call("read", path="/work/demo/CLAUDE.md", content=numbered)]),
        Turn("write AGENTS.md", [Call("write", path="/work/demo/AGENTS.md", content=agents_md)]),
    ]
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-i", turns)]))
    assert "test: pytest -q" in core, core
    assert any("never commit directly to main" in line for line in _lines(core, "· conventions: ")), core
    (stack,) = _lines(core, "· stack: ")
    assert "httpx" in stack and "pnpm" in stack, core
    assert "Flask" not in core and "Celery" not in core, core  # opmem's own block is never read back


def test_a_port_that_moves_and_a_choice_taken_back_are_not_current_any_more(tmp_path: Path):
    from opmem_tui.backend.distill.extract import patterns

    assert patterns.listeners("change the worker's port to 9100") == [("worker", ":9100")]
    assert patterns.listeners("Set the port to 3000") == []  # no service named
    history = [
        Session("s-a", [Turn("The API listens on port 8000. We're using JWT for auth.")]),
        Session("s-b", [Turn("Move the API to port 9000, 8000 clashes with the docs server.")], day=1),
        Session("s-c", [Turn("Actually let's not use JWT, go with server-side sessions instead.")], day=2),
    ]
    core = brief_of(distil_history(tmp_path / "memory", history))
    assert "API ──listens-on──► :9000" in core and ":8000" not in core.replace("8000 clashes", ""), core
    (stack,) = _lines(core, "· stack: ") or ("",)
    assert "JWT" not in stack, core
    assert kn.dropped("we won't use Docker for this") == []  # one task's choice, not the project's


def test_compose_env_names_and_a_test_failure_fixed_in_a_later_session(tmp_path: Path):
    compose = "services:\n  api:\n    environment:\n      - DATABASE_URL=postgresql://app@db/app\n      SECRET_KEY: x\n"
    failing = Call(
        "bash",
        command="pytest -q",
        output="F.\nFAILED tests/test_users.py::test_create - IntegrityError: duplicate key\n1 failed, 1 passed in 0.5s",
        exit_code=1,
    )
    history = [
        Session("s-a", [Turn("compose", [Call("write", path="/work/demo/docker-compose.yml", content=compose)])]),
        Session("s-b", [Turn("tests", [failing])], day=1),
        Session("s-c", [Turn("again", [Call("bash", command="pytest -q", output="..\n2 passed in 0.4s")])], day=2),
    ]
    core = brief_of(distil_history(tmp_path / "memory", history))
    (env,) = [line for line in core.splitlines() if "env: " in line]
    assert "DATABASE_URL" in env and "SECRET_KEY" in env and "postgresql" not in env, core
    assert "fails-with" not in core, core  # the tests pass since: the failure is history


def test_a_framework_names_its_language_and_a_decision_planned_then_done_is_told_once(tmp_path: Path):
    turns = [
        Turn("this is a Flask app talking to Postgres via SQLAlchemy"),
        Turn("we're migrating from Flask to FastAPI over the next sprint"),
        Turn("ok the migration from Flask to FastAPI is done"),
        Turn("please keep line length at 100"),
    ]
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-l", turns)]))
    (stack,) = _lines(core, "· stack: ")
    assert stack.startswith("· stack: Python, FastAPI (was Flask)"), core
    assert len([line for line in _lines(core, "· decided ") if "FastAPI replaces Flask" in line]) == 1, core
    assert any("line length at 100" in line for line in _lines(core, "· conventions: ")), core
    assert kn.IMPLIED_LANGUAGE.get("Express") is None  # JavaScript or TypeScript: not said


def test_a_cargo_manifest_gives_the_rust_version():
    cargo = '[package]\nname = "svc"\nedition = "2021"\nrust-version = "1.78"\n\n[dependencies]\naxum = "0.7"\n'
    deps, versions = kn.manifest_facts("/w/Cargo.toml", cargo)
    assert ("Rust", "1.78") in versions and "axum" in deps


def test_a_common_word_used_as_code_is_no_choice(tmp_path: Path):
    # "use got := ..." is a Go variable in a test, not the got HTTP client; "use ky." is a choice
    history = [
        Session(
            "s-g",
            [
                Turn("some of the tests use got := the expression instead of got := the function it must test"),
                Turn("For the frontend calls, use ky."),
            ],
        )
    ]
    core = brief_of(distil_history(tmp_path / "memory", history))
    stack = " ".join(_lines(core, "· stack: "))
    assert "ky" in stack and "got" not in stack, core


def test_a_request_to_write_an_instruction_file_states_no_convention(tmp_path: Path):
    # an /init prompt (this one OpenCode's, read in the crush fixture) lists what the file should
    # cover; the conventions are what the agent then writes into it
    init = (
        "Please analyze this codebase and create a OpenCode.md file containing:\n"
        "1. Build/lint/test commands - especially for running a single test\n"
        "2. Code style guidelines including imports, formatting, types, naming conventions, error handling, etc.\n\n"
        "If there are Cursor rules (in .cursor/rules/ or .cursorrules) or Copilot rules (in "
        ".github/copilot-instructions.md), make sure to include them."
    )
    written = Call("write", path="OpenCode.md", content="# Style\n\n- Always wrap errors with fmt.Errorf and %w.\n")
    history = [Session("s-i", [Turn(init, [written]), Turn("Always run gofmt before committing.")])]
    core = brief_of(distil_history(tmp_path / "memory", history))
    conventions = _lines(core, "· conventions: ")
    assert any("fmt.Errorf" in line for line in conventions), core
    assert any("gofmt" in line for line in conventions), core
    assert not any("Cursor rules" in line or "Code style guidelines" in line for line in conventions), core


def test_a_replacement_of_a_part_made_with_one_technology(tmp_path: Path):
    # "Y instead of <their implementation> of X": X is replaced, as in "Y instead of X"
    assert kn.replacements("rig up the UI to use lmstudio instead of their initial implementation of ollama.") == [
        ("ollama", "lmstudio")
    ]
    assert kn.replacements("Use Vitest instead of the old setup with Jest.") == [("Jest", "Vitest")]
    assert kn.replacements("we call the API instead of the version of the app") == []
    history = [
        Session("s-o", [Turn("The chat backend runs on Ollama for now.")]),
        Session("s-l", [Turn("Make the chat use LM Studio instead of the current integration with Ollama.")]),
    ]
    core = brief_of(distil_history(tmp_path / "memory", history))
    stack = " ".join(_lines(core, "· stack: "))
    assert stack == "· stack: LM Studio  ↪ session:s-l", core
    assert "· decided 2026-05-28: LM Studio replaces Ollama" in core and "· dropped: Ollama" in core, core


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        # a word that qualifies the next is no name
        ("color the background of the user response with Hex E2F0FF", []),  # read in a Cursor chat
        ("apply the following Hex color 014073 to all app header pages", []),
        ("the Stack trace points at the worker", []),
        ("We publish with Hex and build with Mix.", ["Hex", "Mix"]),
        ("Go add a test for it", ["Go"]),
        # English words that are also names: a capital or a cue, and not a verb opening the sentence
        ("There are three icons on the top left of the screen.", []),  # read in a Cursor chat: not Three.js
        ("Make it about 20 lines long.", []),  # an /init prompt: not Make
        ("Go ahead and commit it.", []),
        ("Just run the tests again.", []),
        ("run it in the shell", []),
        ("Go is the language and Make builds it.", ["Go", "Make"]),
        ("The scene is drawn with Three.js.", ["Three.js"]),
    ],
)
def test_english_words_that_are_also_names(sentence, expected):
    assert [t.name for t in kn.mentioned_techs(sentence)] == expected


def test_a_pasted_trace_states_no_convention(tmp_path: Path):
    # read in a Cursor chat: an Angular console error pasted whole, its advice is the tool's
    pasted = (
        "NG0303: Can't bind to 'ngIf' since it isn't a known property of 'div'. Use Angular's built-in control "
        "flow @if or make sure that either the `NgIf` directive or the `CommonModule` is included.\n"
        "(anonymous) @ main.js:23\nloadIcon @ main.js:23\nwaitUntilVisible @ main.js:23\nconnectedCallback @ main.js:23"
    )
    history = [Session("s-p", [Turn(pasted), Turn("Always use standalone components.")])]
    core = brief_of(distil_history(tmp_path / "memory", history))
    conventions = _lines(core, "· conventions: ")
    assert any("standalone components" in line for line in conventions), core
    assert not any("NgIf" in line for line in conventions), core


def test_a_convention_in_markdown_is_kept_without_its_emphasis(tmp_path: Path):
    # read in the crush fixture: the OpenCode.md the agent wrote, "- **Error Handling**: Always check ..."
    guide = "# Guide\n\n- **Error Handling**: Always check for errors right after the call.\n- Keep `__init__.py` files empty.\n"
    history = [Session("s-m", [Turn("write the guide", [Call("write", path="OpenCode.md", content=guide)])])]
    core = brief_of(distil_history(tmp_path / "memory", history))
    conventions = _lines(core, "· conventions: ")
    assert any("always check for errors right after the call" in line for line in conventions), core
    assert not any("**" in line for line in conventions), core


@pytest.mark.parametrize(
    ("said", "stack"),
    [
        ("Use Loguru for logging.", "loguru"),  # a registry package the vocabulary has, written as a name
        ("Let's use `quokka` for parsing the config.", "quokka"),  # marked as a name
        ("use pydantic-settings for the config", "pydantic-settings"),  # a package's shape
        ("Use tabs for indentation.", ""),
        ("use this for the parser", ""),
        ("use cookies for the session and events for the bus", ""),  # registry packages, and English words
    ],
)
def test_a_library_the_user_picks_is_on_the_stack_line(tmp_path: Path, said: str, stack: str):
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-c", [Turn(said)])]))
    lines = _lines(core, "· stack: ")
    if stack:
        assert lines and stack in lines[0].lower(), core
    else:
        assert not lines, core


def test_a_dependency_a_manifest_lists_is_not_on_the_stack_line(tmp_path: Path):
    manifest = Call("write", path="requirements.txt", content="loguru==0.7.2\nrequests==2.32.0\n")
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-d", [Turn("add the deps", [manifest])])]))
    assert "loguru" not in " ".join(_lines(core, "· stack: ")), core


def test_a_problem_with_a_command_is_not_open_once_the_command_runs(tmp_path: Path):
    # the spotter fixtures: "mix phx.server doesnt seem to start" (its calls were rejected), and
    # a later session started the server
    started = Call("bash", command="mix phx.server", output="[info] Running SpotterWeb.Endpoint at 127.0.0.1:4000")
    reported = Session("s-1", [Turn("mix phx.server doesnt seem to start")])
    core = brief_of(distil_history(tmp_path / "one", [reported]))
    assert _lines(core, "· open problem: mix phx.server"), core
    core = brief_of(distil_history(tmp_path / "two", [reported, Session("s-2", [Turn("start the server", [started])])]))
    assert not _lines(core, "· open problem: "), core
    assert "run: mix phx.server" in core, core
