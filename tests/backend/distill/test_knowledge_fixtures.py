"""Project knowledge the rules find in the real transcripts: facts established by reading each file."""

from __future__ import annotations

from opmem_tui.backend.distill.model import Extraction
from opmem_tui.backend.home import Home

from .conftest import extract_all, fixture, import_into

SPOTTER = "transcripts/claude-code/spotter-tool_heavy.jsonl"
SPOTTER_SHORT = "transcripts/claude-code/spotter-short.jsonl"
CODEX = "transcripts/codex/acidicsoil-rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"
ACTIVITY_USES = {"tool", "model"}


def knowledge(extraction: Extraction) -> set[tuple[str, str, str]]:
    """(subject, relation, value) of the edges from the project, by name."""
    names = {e.id: e.name for e in extraction.entities}
    types = {e.id: e.type for e in extraction.entities}
    return {
        (names[e.from_id], e.relation, names[e.to_id])
        for e in extraction.edges
        if types.get(e.from_id) == "project"
        and types.get(e.to_id) not in ACTIVITY_USES | {"file", "folder", "commit"}
        and e.relation != "part-of"
    }


def test_spotter_is_an_elixir_project_run_with_mix(home: Home):
    # Read in spotter-tool_heavy.jsonl: the cwd is /home/marco/projects/spotter; line 5 runs
    # Bash `mix phx.server` (in background: it started, no error), line 37 reads
    # assets/js/app.js. Mix is Elixir's build tool; nothing was installed, no test was run.
    import_into(home, "claude", fixture(SPOTTER))
    [extraction] = extract_all(home).values()
    assert knowledge(extraction) == {
        ("spotter", "uses", "Elixir"),
        ("spotter", "uses", "Mix"),
        ("spotter", "uses", "Phoenix"),  # phx.server is Phoenix's task
        ("spotter", "run-command", "mix phx.server"),
        ("spotter", "uses", "JavaScript"),  # assets/js/app.js, read
    }


def test_spotter_short_records_the_problem_and_no_command_that_was_rejected(home: Home):
    # Read in spotter-short.jsonl: line 4, the user: "mix phx.server doesnt seem to start"; the
    # two tool calls (Bash `mix phx.server 2>&1 | head -80`, Glob mix.exs) were rejected by the
    # user (lines 11-12, is_error): no command ran, so none is recorded as the way to run it.
    import_into(home, "claude", fixture(SPOTTER_SHORT))
    [extraction] = extract_all(home).values()
    assert knowledge(extraction) == {("spotter", "has-problem", "mix phx.server doesnt seem to start")}
    # nor does the timeline say it ran or searched: the turn did nothing (the problem is its fact)
    assert [e.summary for e in extraction.events if e.kind == "work"] == []
    assert [f.commands for f in extraction.facts] == [()]


def test_chatbot_ui_stack_and_scripts_from_the_package_json_the_agent_read(home: Home):
    # Read in the codex rollout: line 206 runs `cat package.json` in chatbot-ui, line 207 is its
    # output: scripts test=jest, build=next build, dev=next dev, lint=next lint,
    # type-check=tsc --noEmit, format:write=prettier, db-migrate=supabase migration up;
    # dependencies next, react, zod, langchain, openai, @supabase/supabase-js, @radix-ui/*;
    # devDependencies typescript, tailwindcss, postcss, eslint, prettier, jest, @testing-library/react.
    # Line 269's apply_patch to components/chat/chat-helpers/index.ts reads
    # process.env.NEXT_PUBLIC_LMSTUDIO_URL (its name is kept, never a value). None of the scripts
    # was run in the session, so they are the way given (`*-script`), not a command that ran.
    import_into(home, "codex", fixture(CODEX))
    [extraction] = extract_all(home).values()
    facts = knowledge(extraction)
    stack = {value for _, relation, value in facts if relation == "uses"}
    assert {"Next.js", "React", "TypeScript", "Tailwind CSS", "PostCSS", "Zod", "LangChain", "OpenAI API", "Supabase",
            "Radix UI", "ESLint", "Prettier", "Jest", "Testing Library", "npm"} <= stack  # fmt: skip
    scripts = {(relation, value) for _, relation, value in facts if relation.endswith("-script")}
    assert scripts == {
        ("test-script", "npm test"),
        ("build-script", "npm run build"),
        ("run-script", "npm run dev"),
        ("lint-script", "npm run lint"),
        ("typecheck-script", "npm run type-check"),
        ("format-script", "npm run format:write"),
        ("migrate-script", "npm run db-migrate"),
    }
    assert not any(relation.endswith("-command") for _, relation, _ in facts)
    assert ("chatbot-ui", "env-var", "NEXT_PUBLIC_LMSTUDIO_URL") in facts
