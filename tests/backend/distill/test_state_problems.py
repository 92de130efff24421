"""Open problems as users report them: unexpected behaviour in their words (any language, in a
question too), never an instruction file's sentence or a compiler's pasted line; in the brief,
the quoted error messages first, each problem once."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmem_tui.backend.distill.extract.knowledge.state import one_problem, said_problem, unexpected_name

from .history import Call, Session, Turn, brief_of, distil_history


@pytest.mark.parametrize(
    "sentence, question, expected",
    [
        ("Check the logs - still 0 ms.", False, "Check the logs - still 0 ms"),
        ("It inserts the same text every time", False, "It inserts the same text every time"),
        ("I don't think it is getting processed, please review the code and implement fixes.", False,
         "I don't think it is getting processed"),
        ("Almost everything is ready, but for some reason the hotkey pastes the same text, "
         "I do not understand why, maybe a bug somewhere?", True, "but for some reason the hotkey pastes the same text"),
        ("Там почти все готово, но почему-то текст подставляется один и тот же, не понимаю почему, может где баг?",
         True, "но почему-то текст подставляется один и тот же"),
        ("O login não funciona depois do deploy.", False, "O login não funciona depois do deploy"),
        ("the list is still empty after saving", False, "the list is still empty after saving"),
        # said of something else, or how it should be: no problem
        ("We use it every time the same way.", False, ""),
        ("It still works after the upgrade.", False, ""),
        ("Should the cache return the same value every time?", True, "Should the cache return the same value every time"),
        ("Does the app crash on startup?", True, ""),  # a question, no unexpected behaviour said
        # a compiler's line pasted in: its words, not the user's
        ("src/App.al(40,42): error AL0856: Statements cannot start with a parenthesis in runtime version '11.0'.",
         False, ""),
    ],
)  # fmt: skip
def test_the_problem_a_sentence_reports(sentence, question, expected):
    assert said_problem(sentence, question=question) == expected


def test_a_long_sentence_is_named_by_the_clause_with_the_cue():
    said = "I merged the branch and rebuilt the image twice, and for some reason the worker never picks the job, odd"
    assert unexpected_name(said) == "and for some reason the worker never picks the job"


def test_one_message_says_one_problem():
    assert one_problem(["still 0 ms", "", "I don't think it is getting processed"]) == (
        "still 0 ms; I don't think it is getting processed"
    )
    assert one_problem(["a" * 100, "b" * 40]) == "a" * 100
    assert one_problem(["", ""]) == ""


def _problems(core: str) -> list[str]:
    return [line for line in core.splitlines() if line.startswith("· open problem: ")]


def test_a_problem_said_in_two_sessions_is_stated_once(tmp_path: Path):
    said = "The upload works, but for some reason the preview shows the same image every time."
    sessions = [Session(f"s-{n}", [Turn(said)], day=n) for n in (1, 2)]
    problems = _problems(brief_of(distil_history(tmp_path / "memory", sessions)))
    assert len(problems) == 1 and "the same image every time" in problems[0], problems


def test_quoted_errors_come_before_problems_said_in_a_sentence(tmp_path: Path):
    turns = [
        Turn('Getting this error: "The requested operation cannot be performed in this context" on sync'),
        Turn("Also the export button keeps crashing when the list is long."),
        Turn("And for some reason the dashboard shows the same totals every time."),
        Turn("Now the importer doesn't start at all after the update."),
    ]
    problems = _problems(brief_of(distil_history(tmp_path / "memory", [Session("s-p", turns)])))
    assert len(problems) == 1, problems  # one line, the problems joined
    said = problems[0]
    assert said.index("cannot be performed") < said.index("importer doesn't start"), said
    assert "keeps crashing" not in said  # three at most: the oldest said in a sentence is left to the graph


def test_an_instruction_file_states_no_problem(tmp_path: Path):
    rules = "# Rules\nUse the get_thread tool (NOT get_thread_posts, it hangs).\nThe build doesn't work offline.\n"
    calls = [Call("write", path="CLAUDE.md", content=rules)]
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-i", [Turn("write the rules", calls=calls)])]))
    assert not _problems(core), core


def test_a_fix_names_its_files_by_their_names():
    from opmem_tui.backend.memory.brief_history import file_name as _file_name

    assert _file_name("/Users/me/dev/app/.taskmaster/state.json") == "state.json"
    assert _file_name("C:\\Users\\me\\app\\src\\Sync.al") == "Sync.al"
    assert _file_name("src/app.py") == "src/app.py"  # the project's own path, as said
    assert _file_name("pytest -q") == "pytest -q"
