"""Standing instructions a session shows besides a rule's words: the instruction files the project
keeps, the MCP tools the user names and the agent then calls, the Markdown file the user has the
plan written into. Synthetic sessions written for these tests, through the real stages."""

from __future__ import annotations

from pathlib import Path

from opmem_tui.backend.distill.extract.knowledge.instructed import (
    doc_file_rule,
    follow_rule,
    mcp_servers,
    named_instruction_files,
    named_mcp,
)

from .history import Call, Session, Turn, brief_of, distil_history


def _conventions(core: str) -> str:
    return " ".join(line for line in core.splitlines() if line.startswith("· conventions: "))


def test_the_instruction_files_a_project_keeps_are_a_rule_and_the_users_own_are_not():
    assert named_instruction_files("then add notes about it in `AGENTS.md` and `.github/copilot_instructions.md`") == [
        "instructions: AGENTS.md",
        "instructions: copilot_instructions.md",
    ]
    assert named_instruction_files("see ~/.claude/CLAUDE.md and notes/CLAUDE.md.bak") == []
    assert follow_rule("/home/me/.codex/AGENTS.md") == ""
    assert follow_rule("/work/app/.github/copilot-instructions.md") == "instructions: copilot-instructions.md"


def test_an_mcp_server_is_known_by_the_words_its_tools_name_begins_with():
    servers = mcp_servers(["mcp_Sequential_Thinking_sequentialthinking", "mcp__brightdata__search_engine", "Read"])
    assert servers == ["sequentialthinkingsequentialthinking", "brightdatasearchengine"]
    said = "Use sequential thinking to plan, and bright data to search the web when needed."
    assert [words for words, _ in named_mcp(said, servers)] == ["sequential thinking", "bright data"]
    assert named_mcp("Did you use sequential thinking?", servers) == []  # asked, not told
    assert named_mcp("Use the search to find it.", servers) == []  # a word a tool's name holds later on


def test_the_markdown_file_the_user_has_the_plan_written_into():
    assert doc_file_rule("First, write the whole plan into an `.md` file.") == "docs: plans and specs in an .md file"
    assert doc_file_rule("写到 dev.md 文档中") == "docs: dev.md"
    assert doc_file_rule("Depois atualize @plano-fase-2.md com os pontos pendentes") == "docs: plano-fase-2.md"
    assert doc_file_rule("Update CLAUDE.md with the new command") == ""  # an instruction file: read as one
    assert doc_file_rule("What does notes.md say?") == ""
    assert doc_file_rule("The notes.md file is long") == ""  # named, nothing written into it


def test_a_session_gives_the_instruction_files_and_the_mcp_tools_it_is_told_to_use_as_rules(tmp_path: Path):
    turns = [
        Turn("Read the project notes first.", [Call("read", path="/work/demo/AGENTS.md", content="# Notes\n")]),
        Turn(
            "Use context7 for the library docs, then fix the parser.",
            [Call("mcp__context7__get_library_docs", command="parser"), Call("mcp__github__create_issue")],
        ),
        Turn("Check my global notes.", [Call("read", path="/home/me/.claude/CLAUDE.md", content="- Be brief.\n")]),
    ]
    conventions = _conventions(brief_of(distil_history(tmp_path / "m", [Session("s-i", turns)])))
    assert "instructions: AGENTS.md" in conventions and "CLAUDE.md" not in conventions, conventions
    assert "MCP: context7" in conventions, conventions
    assert "github" not in conventions.lower(), conventions  # called, never named by the user


def test_rules_under_one_label_are_one_clause_in_the_brief(tmp_path: Path):
    turns = [
        Turn("Read the notes.", [Call("read", path="/work/demo/AGENTS.md", content="# Notes\n")]),
        Turn("And the other notes.", [Call("read", path="/work/demo/.github/copilot-instructions.md", content="x\n")]),
    ]
    conventions = _conventions(brief_of(distil_history(tmp_path / "m", [Session("s-l", turns)])))
    assert conventions.count("instructions:") == 1, conventions
    assert "AGENTS.md" in conventions and "copilot-instructions.md" in conventions, conventions


def test_a_document_named_by_its_words_while_the_agent_writes_it_and_a_reports_folder():
    from opmem_tui.backend.distill.extract.knowledge.instructed import doc_named_by_words

    said = "Yes please, add the future development document with all we discussed."
    assert doc_named_by_words(said, ["/work/demo/future_development.md"]) == "docs: future_development.md"
    assert doc_named_by_words(said, ["/work/demo/README.md"]) == ""
    assert doc_named_by_words("Which development document is it?", ["/work/demo/future_development.md"]) == ""
    report = "Write full findings to ./.claude/agent-reports/analyzer-<short-id>.md (a short random id)."
    assert doc_file_rule(report) == "docs: agent-reports/analyzer-<short-id>.md"
    assert named_instruction_files("Do not waste tokens reading the root CLAUDE.md unless asked.") == []


def test_each_line_of_rules_is_offered_cut_for_a_block_with_room_for_part_of_one(tmp_path: Path):
    from opmem_tui.backend.memory.brief import project_brief

    rules = [f"Never call the {name} service from a request handler directly." for name in
             ("billing", "search", "mailer", "geocoder", "invoice", "storage", "payments", "ledger")]  # fmt: skip
    memory = distil_history(tmp_path / "m", [Session("s-c", [Turn(rule) for rule in rules])])
    lines = [line for line in project_brief(memory, "demo") if line.part == "convention"]
    whole = [line.text for line in lines if line.importance > 0.5]
    cut = [line.text for line in lines if line.importance <= 0.5]
    assert len(whole) >= 2, whole  # more rules than one line holds
    assert cut and all(any(w.startswith(c + "; ") for w in whole) for c in cut), (whole, cut)
    assert sum(1 for c in cut if c.count("; ") == 0) == len(whole)  # every line down to its first rule


def test_an_agents_edit_format_prompt_written_into_an_instruction_file_gives_no_rule(tmp_path: Path):
    text = (
        "# Conventions\n- Prefer named exports over default exports.\n\n# *SEARCH/REPLACE block* Rules:\n\n"
        "Every *SEARCH/REPLACE block* must use this format:\n"
        "1. The *FULL* file path alone on a line, verbatim. No bold asterisks, no quotes around it.\n"
    )
    turns = [Turn("Tidy the conventions.", [Call("write", path="/work/demo/CONVENTIONS.md", content=text)])]
    conventions = _conventions(brief_of(distil_history(tmp_path / "m", [Session("s-a", turns)])))
    assert "prefer named exports over default exports" in conventions, conventions
    assert "SEARCH/REPLACE" not in conventions and "asterisks" not in conventions, conventions
