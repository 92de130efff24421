"""Conventions read as a teammate would: short clauses that keep what they contrast, lists under a
rules heading, cues in the other languages users write in, hedges and questions left out, a rule
reworded later shown once. Synthetic sessions written for these tests, through the real stages."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path
from types import MappingProxyType

from opmem_tui.backend.distill.extract.knowledge.conventions import clause, is_convention, scope_of
from opmem_tui.backend.distill.extract.knowledge.evidence import sentences
from opmem_tui.backend.distill.extract.knowledge.instructed import WRITE_INSTRUCTIONS
from opmem_tui.backend.distill.model import SessionBatch
from opmem_tui.backend.memory.core import render_core

from . import history
from .history import Call, Session, Turn, brief_of, distil_history


def _conventions(core: str) -> str:
    return " ".join(line for line in core.splitlines() if line.startswith("· conventions: "))


def test_a_long_rule_keeps_what_it_contrasts_and_folds_its_enumerations():
    assert clause(
        "Prefer `async/await` and promise-returning helpers over explicit `new Promise` creation everywhere."
    ) == ("prefer async/await over explicit new Promise creation everywhere")
    assert clause(
        "Declare magic numbers, strings, regexes, and similar literal values as `const` variables at the top."
    ) == ("declare magic numbers etc. as const variables at the top")
    assert clause("Provide explicit parameter and return types for all functions, methods, and class accessors.") == (
        "provide explicit parameter and return types for all functions etc."
    )
    # one comma in the middle is no enumeration: cut at the limit as before
    assert "etc." not in clause(
        "Avoid reassigning variables, modifying objects or arrays in place, and prefer functions returning copies."
    )


def test_a_list_marker_in_backticks_does_not_end_the_sentence():
    text = "For numbered lists, pad the `1.` marker so it is 4 characters long. Then run it."
    assert sentences(text)[0] == "For numbered lists, pad the `1.` marker so it is 4 characters long."


def test_a_cue_inside_an_identifier_and_a_request_to_add_to_the_file_state_no_rule():
    assert not is_convention("This is enforced by the unicorn/prefer-optional-catch-binding lint rule.")
    assert is_convention("Prefer named exports.")
    assert WRITE_INSTRUCTIONS.found("add markdown file conventions to CONVENTIONS.md")


def test_hedged_proposals_and_questions_without_a_mark_are_no_rules():
    assert not is_convention("I think maybe we should have a landing table for all the data.")
    assert not is_convention("Is there any need for the helper now that we create records, it should be gone")
    assert is_convention("Tables should always have a primary key.")


def test_cues_in_other_languages_and_a_chinese_rule_as_its_clause():
    assert is_convention("Sempre use aspas duplas nas strings.")
    assert is_convention("Никогда не используй print для логов.")
    assert is_convention("Zawsze pisz testy do nowych funkcji.")
    assert is_convention("代码里不要使用全局变量。")
    assert not is_convention("Eu não sei por quê, sempre falha.")
    assert clause("我想做一个下载库，所有接口必须使用统一的回调风格，自动管理任务队列，断点续传。") == (
        "所有接口必须使用统一的回调风格"
    )
    assert sentences("不要提交日志文件。所有提交都要先跑测试") == ["不要提交日志文件。", "所有提交都要先跑测试"]


def test_a_list_under_a_rules_heading_is_read_as_rules(tmp_path: Path):
    prompt = (
        "Some notes for this repo.\n\n## Code style\n- 4-space indent in every module\n- snake_case file names only\n"
    )
    core = brief_of(distil_history(tmp_path / "m", [Session("s-r", [Turn(prompt)])]))
    conventions = _conventions(core)
    assert "4-space indent in every module" in conventions and "snake_case file names only" in conventions, core
    other = "Status of the work.\n\n## Stack\n- Django with PostgreSQL here\n"
    core = brief_of(distil_history(tmp_path / "o", [Session("s-o", [Turn(other)])]))
    assert "Django with PostgreSQL" not in _conventions(core), core


def test_a_rule_reworded_later_is_shown_once_in_its_newest_words(tmp_path: Path):
    history = [
        Session("s-1", [Turn("Always write docstrings for public functions.")], day=0),
        Session("s-2", [Turn("Always write docstrings for public functions and classes.")], day=1),
    ]
    conventions = _conventions(brief_of(distil_history(tmp_path / "m", history)))
    assert "always write docstrings for public functions and classes" in conventions, conventions
    assert conventions.count("docstrings") == 1, conventions


def _preferences(memory) -> str:
    glob = render_core(memory, date(2026, 6, 1))
    return " ".join(line for line in glob.splitlines() if line.startswith("· preferences: "))


def test_an_instruction_file_in_the_users_home_gives_rules_for_every_project(tmp_path: Path):
    home_file = "- Never add emojis to commit messages.\n- Prefer small pure functions.\n"
    project_file = "# Rules\n- Always run the linter before a commit.\n"
    turns = [
        Turn(
            "Look around first.",
            [
                Call("read", path="/home/me/.claude/CLAUDE.md", content=home_file),
                Call("read", path="/work/demo/CLAUDE.md", content=project_file),
            ],
        )
    ]
    memory = distil_history(tmp_path / "m", [Session("s-h", turns)])
    prefs = _preferences(memory)
    assert "never add emojis to commit messages" in prefs and "prefer small pure functions" in prefs, prefs
    assert "linter" not in prefs, prefs
    assert "always run the linter before a commit" in _conventions(brief_of(memory))


def test_the_instruction_files_an_agent_puts_in_its_context_are_read_with_their_scope(tmp_path: Path, monkeypatch):
    context = (
        "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n# claudeMd\n\n"
        "Contents of /Users/me/.claude/CLAUDE.md (user's private global instructions for all projects):\n\n"
        "- Always answer in plain sentences without headings.\n\n"
        "Contents of /work/demo/AGENTS.md (project instructions, checked into the codebase):\n\n"
        "- Never commit generated files.\n\n"
        "      IMPORTANT: this context may or may not be relevant to your tasks.\n</system-reminder>\n"
    )
    real_batch_of = history.batch_of

    def marked(session: Session) -> SessionBatch:  # as collect hands it on: injected text as a system node
        batch = real_batch_of(session)
        turns = tuple(
            replace(
                turn,
                nodes=tuple(
                    replace(n, role="system", metadata=MappingProxyType({"injected": "tag block"}))
                    if n.content.startswith("<system-reminder>")
                    else n
                    for n in turn.nodes
                ),
            )
            for turn in batch.turns
        )
        return replace(batch, turns=turns)

    monkeypatch.setattr(history, "batch_of", marked)
    memory = distil_history(tmp_path / "m", [Session("s-c", [Turn(context), Turn("Add the orders view.")])])
    prefs = _preferences(memory)
    assert "always answer in plain sentences without headings" in prefs, prefs
    assert "never commit generated files" in _conventions(brief_of(memory)), brief_of(memory)
    assert "generated" not in prefs


def test_rules_for_every_project_and_for_the_language_of_answers_in_several_languages():
    for sentence, rule in (
        ("Please reply in English.", "reply in English"),
        ("Responda sempre em português.", "responda sempre em português"),
        ("Отвечай на русском языке.", "отвечай на русском языке"),
        ("请用中文回答。", "请用中文回答"),
        ("Sempre use tipagem em todos os meus projetos.", "sempre use tipagem"),
        ("Во всех проектах всегда используй type hints.", "всегда используй type hints"),
        ("My preference is small commits with clear messages.", "small commits with clear messages"),
    ):
        assert is_convention(sentence) and scope_of(sentence)[0], sentence
        assert clause(sentence) == rule
    assert not is_convention("The answer in Python is 42.")
    assert not is_convention("Sempre que eu rodo os testes, falha.")  # "whenever": no rule


def test_what_holds_for_now_or_refers_to_the_work_just_done_is_no_rule():
    assert not is_convention("Right now we will just look at demo data, but it should be configurable.")
    assert not is_convention("Great, same logic should be applied to the vendor mapping.")
    assert not is_convention("The number should be easy to get, you already read the entry type.")
    assert not is_convention("It works now, but I want some improvements to the layout.")
    assert is_convention("Mappings should always be created in one place.")
    assert not is_convention('"description": "Whether the default sending should always be used"')
    assert not is_convention("Make this as a rule.")  # the rule is what came before it
    assert not is_convention("Yes add a settings page, and suppliers that should be created as vendors.")
    assert not is_convention("It should use the existing integration log.")
    assert is_convention("It should always use the existing integration log.")


def test_an_instruction_files_prose_and_labelled_items_state_rules(tmp_path: Path):
    claude_md = (
        "# Project notes\n\nUse 4 spaces for indentation. Run `make test` before pushing.\n\nUse these commands:\n\n"
        "## Notes\n- **Formatting**: Use black with its defaults\n- The API lives in src/api\n"
    )
    turns = [Turn("Look around first.", [Call("read", path="/work/demo/CLAUDE.md", content=claude_md)])]
    conventions = _conventions(brief_of(distil_history(tmp_path / "m", [Session("s-f", turns)]))).lower()
    assert "use 4 spaces for indentation" in conventions and "use black with its defaults" in conventions, conventions
    assert "src/api" not in conventions, conventions
    assert "run make test before pushing" in conventions, conventions  # a step before another: a rule of the process
    assert "these commands" not in conventions, conventions


def test_a_requirement_stressed_in_capitals_is_a_rule():
    assert is_convention("Every claim about the data flow or the behaviour MUST cite a concrete source.")
    assert not is_convention("Every claim about the data flow or the behaviour must cite a concrete source.")
    assert clause(
        "Every claim about code structure, data flow, or behavior MUST cite a concrete source, with a line."
    ) == ("every claim about code structure, data flow, or behavior MUST cite a…")


def test_instructions_by_the_role_of_the_sentence_whatever_their_verb():
    # a negated imperative opening the sentence; the reason joined on with a comma is left off
    assert is_convention("Do not reinit the tracker, we don't want to lose the history of tasks.")
    assert (
        clause("Do not reinit the tracker, we don't want to lose the history of tasks.") == "do not reinit the tracker"
    )
    assert not is_convention("Don't do that.") and not is_convention("Don't worry about the tests.")
    assert is_convention("Не запускай миграции без бэкапа.") and not is_convention("Не были ли тесты зелёные.")
    # a correction of what the agent did, in the user's words
    assert clause("I only want 1 log table for this.") == "I only want 1 log table for this"
    assert is_convention("I dont want to have a second settings page.")
    assert not is_convention("I don't want it to be used anymore.")  # a drop: the decisions' part
    # process: keep a document current, follow named practices (a link by what it names)
    assert clause("Keep this spec updated as decisions are made.") == "keep this spec updated as decisions are made"
    assert clause(
        "When writing Go code, follow best practices from https://github.com/acme/styleguide/tree/main/docs/go-style."
    ) == ("Go code: follow best practices from acme/styleguide/go-style")
    assert clause("In terms of todo, I remind you the main directive that we rely on the tracker.") == (
        "todo: we rely on the tracker"
    )


def test_a_constraint_to_keep_in_mind_is_what_is_to_be_kept_in_mind():
    sentence = "Fetch the docs for the API, we're using the free tier, keep that in mind."
    assert is_convention(sentence) and clause(sentence) == "we're using the free tier"
    assert clause("Keep in mind that the API allows ten calls a minute.") == "the API allows ten calls a minute"
    assert not is_convention("I will keep it in mind.")


def test_the_spec_of_one_thing_is_no_rule_a_generic_plural_is():
    assert not is_convention("The extension should use the API from the vendor to fetch data.")
    assert not is_convention("voucherNumber should be easy to get from the entry.")
    assert not is_convention("After that I will download symbols which you should use as well.")
    assert is_convention("Tests should use the shared fixtures.")
    assert is_convention("The handlers should always return typed errors.")


def test_a_chinese_rule_keeps_its_parts_with_cues_that_fit():
    sentence = "我想做一个库，必须满足商店应用使用，要求api简洁，自动管理任务队列。"
    assert is_convention(sentence) and clause(sentence) == "必须满足商店应用使用，要求api简洁"
    assert clause("For numbered lists, pad the `1.` marker so it is 4 characters long.") == (
        "numbered lists: pad the 1. marker so it is 4 characters long"
    )


def test_an_environment_named_is_a_rule_and_a_request_to_the_agent_is_no_habit_of_the_user():
    sentence = "We will connect to the sandbox environment which is named Sandbox0410."
    assert is_convention(sentence) and "named Sandbox0410" in clause(sentence)
    assert not is_convention("My cat is called Tom2.")
    assert not is_convention("VoucherNumber should be easy to get from the entry.")
    assert is_convention("The readme should be updated throughout the project.")
    request = "I want you to update the readme.md and keep it updated as we progress."
    assert is_convention(request) and scope_of(request) == (False, "")  # this project's, not every project's


def test_two_corrections_that_open_alike_are_two_rules_in_the_brief(tmp_path: Path):
    turns = [Turn("I only want 1 log table for this."), Turn("I only want 1 vendor name field.")]
    conventions = _conventions(brief_of(distil_history(tmp_path / "m", [Session("s-w", turns)])))
    assert "1 log table" in conventions and "1 vendor name field" in conventions, conventions


def test_process_steps_places_tools_and_formatting_ruled_out_are_rules():
    for sentence, rule in (
        ("Run `make lint` before pushing.", "run make lint before pushing"),
        ("Update the changelog after each release.", "update the changelog after each release"),
        ("Save the reports in reports/ as markdown.", "save the reports in reports/ as markdown"),
        ("Use the context7 MCP for library docs.", "use the context7 MCP for library docs"),
        ("No asterisks in the bot's messages.", "no asterisks in the bot's messages"),
    ):
        assert is_convention(sentence) and clause(sentence) == rule, sentence
    for sentence in ("Run the tests.", "I ran the tests before lunch.", "No errors now.", "No, that is wrong."):
        assert not is_convention(sentence), sentence


def test_what_was_never_so_is_no_order():
    assert not is_convention("Never seen this error before.") and not is_convention("I have never used it.")
    assert is_convention("Never embed secrets in code.") and is_convention("Never squash merges.")
