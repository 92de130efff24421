"""Facts read by evidence, as a teammate skims a session: fenced blocks with their labels, lists
under a heading, an answer's recommendation the user goes on with, the scope a rule's words give.
Synthetic sessions written for these tests, through the real stages (history.py)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from opmem_tui.backend.distill.extract.knowledge import evidence, normalize_command
from opmem_tui.backend.distill.extract.knowledge.commands import command_kind
from opmem_tui.backend.distill.extract.knowledge.conventions import clause, scope_of
from opmem_tui.backend.distill.extract.shell import split_commands
from opmem_tui.backend.memory.core import CORE_BUDGET, render_core

from .history import Call, Session, Turn, brief_of, distil_history


def _line(core: str, prefix: str) -> str:
    return next((line for line in core.splitlines() if line.startswith(prefix)), "")


def _commands(core: str) -> str:
    return " ".join(line for line in core.splitlines() if line.startswith("· ") and ": " in line and "↪" in line)


def test_the_markdown_reader_finds_blocks_with_their_labels_and_lists_under_their_headings():
    text = (
        "Use `tenacity` here: it retries.\n\n**Start the worker:**\n```bash\n$ mix phx.server\n```\n\n"
        "## Stack\n- **Phoenix** 1.7\n- `Oban` for jobs\n\nLibraries:\n1. Chart.js for graphs\n"
    )
    [block] = evidence.fenced(text)
    assert (block.lang, block.code, block.label) == ("bash", "$ mix phx.server\n", "Start the worker:")
    assert [(b.text, b.heading) for b in evidence.bullets(text)] == [
        ("**Phoenix** 1.7", "Stack"),
        ("`Oban` for jobs", "Stack"),
        ("Chart.js for graphs", "Libraries"),
    ]
    assert evidence.opening(text) == "Use `tenacity` here: it retries."


def test_commands_are_given_as_typed_without_their_plumbing():
    def normalized(command: str) -> list[str]:
        return [normalize_command(argv) for argv in split_commands(command)]

    assert normalized("mix test 2>&1 | tail -20") == ["mix test", "tail -20"]
    assert normalized("mix credo --strict 2>&1") == ["mix credo --strict"]
    assert normalized("pytest -q 2>/dev/null") == ["pytest -q"]
    assert normalized("npm test -- --watch=false > out.log") == ["npm test -- --watch=false"]
    assert command_kind("mix dialyzer", "run") == "typecheck"
    assert command_kind("eslint-plugin-jsdoc", "") == ""  # a package named like the tool is not the tool


def test_commands_in_fenced_blocks_under_a_label(tmp_path: Path):
    answer = (
        "Here is how to work on it.\n\n**Start the worker:**\n```bash\n$ mix phx.server\nServer running on :4000\n```\n\n"
        "Run the tests:\n```sh\nmix test 2>&1 | tail -20\n```\n\n**Lint:**\n```\nmix credo --strict\n```\n"
        "Not this one:\n```\nrm -rf _build\n```\n"
    )
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-f", [Turn("How do I run it?", reply=answer)])]))
    commands = _commands(core)
    assert "run: mix phx.server" in commands and "test: mix test" in commands, core
    assert "lint: mix credo --strict" in commands, core
    assert "2 >& 1" not in core and "tail" not in commands and "rm -rf" not in core, core


def test_environment_names_in_a_block_or_a_list_never_their_values(tmp_path: Path):
    answer = (
        "Add these to your `.env`:\n```env\nDATABASE_URL=postgres://app:hunter2@db/app\nSECRET_KEY_BASE=abc123\n```\n\n"
        "Environment variables:\n- `STRIPE_API_KEY`: the key from the dashboard\n"
    )
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-e", [Turn("What do I set?", reply=answer)])]))
    env = _line(core, "· env: ")
    for name in ("DATABASE_URL", "SECRET_KEY_BASE", "STRIPE_API_KEY"):
        assert name in env, core
    assert "hunter2" not in core and "abc123" not in core


def test_libraries_listed_under_a_heading_and_a_choice_stated_in_passing(tmp_path: Path):
    answer = (
        "I'm going with Chart.js for the graphs.\n\n## Libraries\n- `tenacity` for retries\n- **httpx** as the client\n"
        "- and a note that is no library\n"
    )
    history = [Session("s-l", [Turn("Set up the dashboard backend in Python.", reply=answer)])]
    core = brief_of(distil_history(tmp_path / "memory", history))
    stack = _line(core, "· stack: ")
    assert "Chart.js" in stack and "tenacity" in stack and "httpx" in stack, core


def test_a_recommendation_counts_when_the_user_goes_on_with_it(tmp_path: Path):
    taken = [
        Turn("The sync job keeps failing on timeouts.", reply="Use `backoff` here: it retries with jitter."),
        Turn("Good, wire it into the sync job.", reply="Done."),
    ]
    declined = [
        Turn("The sync job keeps failing on timeouts.", reply="Use `backoff` here: it retries with jitter."),
        Turn("No, write a small retry loop ourselves.", reply="Done."),
    ]
    core = brief_of(distil_history(tmp_path / "a", [Session("s-t", taken)]))
    assert "backoff" in _line(core, "· stack: "), core
    core = brief_of(distil_history(tmp_path / "b", [Session("s-d", declined)]))
    assert "backoff" not in _line(core, "· stack: "), core


def test_rules_are_short_clauses_and_their_words_give_their_scope():
    assert clause("Please always use f-strings (not format()), because they read better.") == (
        "always use f-strings (not format())"
    )
    assert clause("Don't leave debug prints in, thanks!") == "don't leave debug prints in"
    assert clause("Prefer `const` over `let` to encourage immutability.") == "prefer const over let"
    assert scope_of("In all my Python projects, use f-strings.") == (True, "Python")
    assert scope_of("Keep your answers short.") == (True, "")
    assert scope_of("In every project I want conventional commits.") == (True, "")
    assert scope_of("Always run the migrations before the tests.") == (False, "")
    assert scope_of("I always want type hints, in this project too.") == (False, "")


def test_preferences_for_every_project_go_to_the_global_block_as_clauses(tmp_path: Path):
    turns = [
        Turn("In all my Python projects, use f-strings, not format()."),
        Turn("Keep your answers short and skip the summaries."),
        Turn("Never leave debug prints in the handlers."),
    ]
    memory = distil_history(tmp_path / "memory", [Session("s-p", turns)])
    glob = render_core(memory, date(2026, 6, 1))
    prefs = _line(glob, "· preferences: ")
    assert "Python: use f-strings, not format()" in prefs and "keep your answers short" in prefs, glob
    core = brief_of(memory)
    assert "never leave debug prints in the handlers" in _line(core, "· conventions: "), core
    assert "never leave debug prints" not in prefs


def test_the_brief_states_facts_in_order_and_no_quoted_prompt(tmp_path: Path):
    turns = [
        Turn("We use Django with PostgreSQL. Always write docstrings for public functions."),
        Turn("Thanks, that looks right to me now."),  # nothing done: a prompt, not work
        Turn("Add the orders view.", [Call("edit", path="/work/demo/shop/views.py", content="def orders(): ...\n")]),
        Turn("Let's move the tests from nose to pytest.", reply="Run them with:\n```bash\npytest -q\n```\n"),
    ]
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-o", turns)]))
    assert len(core.encode("utf-8")) <= CORE_BUDGET
    lines = [line for line in core.splitlines() if line.startswith("· ")]

    def at(prefix: str) -> int:
        return next(i for i, line in enumerate(lines) if line.startswith(prefix))

    assert at("· stack: ") < at("· test: ") < at("· conventions: ") < at("· decided ") < at("· 2026-"), core
    assert core.count("pytest replaces nose") == 1, core  # the brief's decision is not told again
    assert "Discussed:" not in core and "Asked:" not in core and "Answered:" not in core, core


def test_an_edit_written_as_search_replace_in_an_answer_is_read_as_the_file(tmp_path: Path):
    answer = (
        "Here is the change:\n\nCONVENTIONS.md\n```markdown\n<<<<<<< SEARCH\n- Old rule\n=======\n"
        "When writing code in TypeScript, try to:\n- Prefer const over let.\n- Write a Vitest file for each module.\n"
        "- Avoid explicit `new Promise` creation.\n>>>>>>> REPLACE\n```\n"
    )
    history = [Session("s-a", [Turn("Improve my conventions file please.", reply=answer)])]
    core = brief_of(distil_history(tmp_path / "memory", history))
    conventions = " ".join(line for line in core.splitlines() if line.startswith("· conventions: "))
    for rule in ("prefer const over let", "write a Vitest file for each module", "avoid explicit new Promise creation"):
        assert rule in conventions, core
    assert "Vitest" in _line(core, "· tools: "), core


def test_a_preference_for_one_languages_projects_shows_in_that_languages_projects_only(tmp_path: Path):
    history = [
        Session("s-py", [Turn("In all my Python projects, use f-strings, not format().")], project="shop"),
        Session("s-go", [Turn("We write this service in Go.")], project="api", root="/work/api"),
        Session("s-py2", [Turn("We use Django for the shop.")], project="shop"),
    ]
    memory = distil_history(tmp_path / "memory", history)
    assert "Python: use f-strings" in brief_of(memory, "shop")
    assert "f-strings" not in brief_of(memory, "api")


def test_a_fix_that_names_a_package_to_install(tmp_path: Path):
    answer = "The upload fails because form parsing needs an extra package. The fix: `pip install python-multipart`."
    history = [Session("s-x", [Turn("Uploads return 500 in the FastAPI app.", reply=answer)])]
    core = brief_of(distil_history(tmp_path / "memory", history))
    assert "python-multipart" in _line(core, "· stack: "), core


def test_names_filling_a_labelled_role_or_joined_by_plus_signs(tmp_path: Path):
    answer = (
        "Here is the design.\n\n- **Network**: OkHttp + Retrofit\n- **Database**: Room + SQLite\n"
        "- **Note**: keep the public API small\n\nThe app is Kotlin + Coroutines + Room underneath."
    )
    history = [Session("s-k", [Turn("Design the download library.", reply=answer)])]
    core = brief_of(distil_history(tmp_path / "memory", history))
    stack = _line(core, "· stack: ")
    for name in ("OkHttp", "Retrofit", "Room", "SQLite", "Kotlin"):
        assert name in stack, core


def test_of_the_commands_given_the_program_given_most_often(tmp_path: Path):
    turns = [
        Turn("How do I start it?", reply="Start it:\n```bash\ndocker compose up -d --build\n```\n"),
        Turn("And after a change?", reply="Rebuild:\n```bash\ndocker compose up --build\n```\n"),
        Turn("Only the bot?", reply="Start the bot alone:\n```bash\ndocker-compose up bot\n```\n"),
    ]
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-r", turns)]))
    assert "run: docker compose up --build" in core, core
