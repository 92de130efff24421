"""Rules added for issue 37's second pass: commands of no known kind, progress beyond the newest
few, technologies named in log output. Synthetic sessions written for these tests, through the
real stages (history.py)."""

from __future__ import annotations

from pathlib import Path

from opmem_tui.backend.distill.extract import extract_rules
from opmem_tui.backend.distill.extract.knowledge.commands import project_command
from opmem_tui.backend.distill.extract.knowledge.progress import progress_items
from opmem_tui.backend.memory import relations
from opmem_tui.backend.memory.core import CORE_BUDGET

from .history import T0, Call, Session, Turn, batch_of, brief_of, distil_history


def _line(core: str, prefix: str) -> str:
    return next((line for line in core.splitlines() if line.startswith(prefix)), "")


def test_a_project_command_is_a_tools_subcommand_or_a_script_not_a_utility_or_a_question():
    assert project_command("docker compose logs bot")
    assert project_command("npx task-master list --tag=dev")
    assert project_command("python build_index.py")
    assert project_command("./scripts/seed.sh")
    assert not project_command("mkdir -p out")  # a shell utility
    assert not project_command("pip show requests")  # a question to a tool about its packages
    assert not project_command("docker ps")
    assert not project_command("node -e 'console.log(1)'")
    assert not project_command("npx prettier")  # a call with nothing after the program


def test_commands_of_no_known_kind_that_ran_and_one_only_talked_about(tmp_path: Path):
    turns = [
        Turn("list the tasks", calls=[Call("bash", command="npx task-master list --tag=dev", output="3 tasks")]),
        Turn("again", calls=[Call("bash", command="npx task-master list --tag=dev", output="3 tasks")]),
        Turn("failed?", calls=[Call("bash", command="docker compose logs -f", output="boom", exit_code=255)]),
        Turn("why", reply="The exit code from `docker compose restart worker` says it died."),
        Turn("what now", reply="Watch `docker compose logs bot` for a while."),
        Turn("and", calls=[Call("bash", command="mkdir -p build/out", output="")]),
    ]
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-o", turns)]))
    other = _line(core, "· other: ")
    assert "npx task-master list --tag=dev" in other, core
    assert "docker compose logs bot" in other, core  # given with a verb that says to type it
    assert "logs -f" not in other and "restart" not in core and "mkdir" not in other, core


def test_a_technology_named_in_several_turns_is_on_the_stack_one_named_once_is_not(tmp_path: Path):
    turns = [
        Turn("the search is slow", reply="The Qdrant collection has no payload index; I'll add one."),
        Turn("and now?", reply="Faster: Qdrant answers in 40 ms. Cassandra could also work, but stay put."),
        Turn("the page?", reply="The Streamlit page now reads from Qdrant directly."),
        Turn(
            "thanks", reply='Done. The sample customer is "Jenkins & Co", Jenkins again, and "Jenkins & Co" once more.'
        ),
        Turn("ok", reply='Jenkins & Co is shown as "Jenkins & Co".'),
        Turn("next", reply="Next, Flow of data. Make sure the Flow is right."),
        Turn("go on", reply="Next: Flow again."),
    ]
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-n", turns)]))
    stack = _line(core, "· stack: ") + _line(core, "· tools: ")
    assert "Qdrant" in stack, core  # named in three turns
    assert "Cassandra" not in stack and "Streamlit" not in stack, core  # named once
    assert "Next.js" not in stack and "Flow" not in stack, core  # an English word opening a sentence
    assert "Jenkins" not in stack, core  # a name inside quotes or data


def test_a_package_a_log_line_names_is_on_the_stack(tmp_path: Path):
    output = (
        "tests/test_e2e.py::test_query PASSED\n"
        "WARNING  langchain_core.callbacks.manager:manager.py:306 Error in callback\n"
    )
    turns = [Turn("run the e2e tests", calls=[Call("bash", command="pytest tests/test_e2e.py", output=output)])]
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-l", turns)]))
    assert "LangChain" in _line(core, "· stack: "), core


def test_the_knowledge_rules_switched_off_leave_the_activity_only():
    turns = [
        Turn("run the tests", calls=[Call("bash", command="pytest -q", output="3 passed")]),
        Turn("Always write docstrings.", reply="Noted."),
    ]
    on = extract_rules(batch_of(Session("s-k", turns)), ingestion_time=T0)
    off = extract_rules(batch_of(Session("s-k", turns)), ingestion_time=T0, knowledge=False)
    relations_on = {e.relation for e in on.edges}
    relations_off = {e.relation for e in off.edges}
    assert {"test-command", "convention", "uses"} <= relations_on
    # (`uses` is the activity rules' too: a program a session ran)
    assert not relations_off & (relations.BRIEF_RELATIONS - {"uses"}), relations_off
    assert len(off.events) == len(on.events) > 0  # what the session did is still told


def test_many_rules_share_few_lines_and_more_than_twelve_fit(tmp_path: Path):
    # one pointer per line: the rules of one file go on long lines, not one line per 180 characters
    verbs = ("Prefer", "Avoid", "Use", "Keep", "Write", "Declare", "Always use", "Never use")
    things = ("tabs", "semicolons", "enums", "classes", "getters", "mixins", "barrels", "singletons", "globals")
    rules = [
        f"- {verb} {thing} in module {i}." for i, (verb, thing) in enumerate(zip(verbs * 3, things * 3, strict=False))
    ]
    calls = [Call("write", path="CONVENTIONS.md", content="# Conventions\n" + "\n".join(rules[:20]) + "\n")]
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-c", [Turn("write the conventions", calls=calls)])]))
    lines = [line for line in core.splitlines() if line.startswith("· conventions: ")]
    clauses = sum(line.split("  ↪")[0].count(";") + 1 for line in lines)
    assert clauses > 12 and len(lines) <= 2, core
    assert len(core.encode("utf-8")) <= CORE_BUDGET


def test_a_heading_that_announces_work_finished_names_it_done():
    answer = (
        "All tests pass.\n\n## ✅ Poll System Implementation Complete!\n\n### Core Features Implemented:\n"
        "- create a poll\n\n## Phase 2: Fact Quality Management - Complete!\n\n```bash\n# 2. Initialize git if not "
        "already done\n```\n\n## ✅ Implementation Complete!\n\n**Refactoring done**\n"
    )
    done = [item for is_done, item in progress_items(answer) if is_done]
    assert "Poll System" in done and "Phase 2: Fact Quality Management" in done, done
    assert not any(item.lower() in ("core features", "implementation", "refactoring") for item in done), done
    assert not any("git" in item for item in done), done  # a step of a recipe in a code block


def test_a_setting_the_user_moved_to_a_new_version_is_a_decision(tmp_path: Path):
    said = [
        Turn("The build fails: the compiler wants a newer target."),
        Turn("I have updated the target framework to version 8. Carry on with this version."),
        Turn("I changed it to 9 for now. We set the request timeout to 30 seconds."),  # no setting; no version
    ]
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-v", said)]))
    decided = [line for line in core.splitlines() if line.startswith("· decided ")]
    assert len(decided) == 1 and "update target framework to version 8" in decided[0], core


def test_an_error_the_user_quotes_is_open_until_a_summary_says_it_fixed(tmp_path: Path):
    turns = [
        Turn("Getting this error : \"The record in table Sync Log already exists. Key: Entry No.='16'\" again"),
        Turn('"Tokens of type Object are not supported here" is the message i receive when I sync.'),
        Turn("ok", reply='Done:\n- Collection parsing: fixed the "Tokens of type Object are not supported here" error'),
    ]
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-e", turns)]))
    problems = [line for line in core.splitlines() if line.startswith("· open problem: ")]
    assert len(problems) == 1 and "Sync Log already exists" in problems[0], core  # the other said fixed since


def test_a_task_put_on_the_tracker_is_pending_unless_the_command_failed(tmp_path: Path):
    calls = [
        Call("bash", command='npx task-master add-task --prompt="Write the PRD: describe the export feature in full"',
             output="Task 12 added"),
        Call("bash", command='gh issue create --title "Flaky login test" --body "seen twice"', output="Error: no auth",
             exit_code=1),
    ]  # fmt: skip
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-t", [Turn("put these on the list", calls)])]))
    pending = _line(core, "· pending: ")
    assert "Write the PRD" in pending and "describe the export" not in pending, core
    assert "Flaky login test" not in core


def test_a_long_problem_is_named_by_the_clause_that_says_it():
    from opmem_tui.backend.distill.extract.knowledge.state import problem_name

    said = "#lastCommand there were warnings from the cache layer and from others again — the upload hangs, " + (
        "the file is 40 MB and it worked last week with the same settings."
    )
    assert problem_name(said).startswith("the upload hangs")
    assert problem_name("The upload hangs.") == "The upload hangs."


def test_a_file_taken_out_of_git_is_a_decision(tmp_path: Path):
    calls = [Call("bash", command="git rm --cached .env", output="rm '.env'")]
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-g", [Turn("keep the secrets out of git", calls)])]))
    assert "· decided 2026-" in core and "stop tracking .env in git (git rm --cached .env)" in core, core
