"""Architecture and progress a session states: the layout of the project and what is done / to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmem_tui.backend.distill.extract.knowledge import layout_facts, progress_items
from opmem_tui.backend.home import Home
from opmem_tui.backend.memory.core import CORE_BUDGET

from .conftest import extract_all, fixture, import_into
from .history import Call, Session, Turn, brief_of, distil_history

COMPACT_SUMMARY = "transcripts/claude-code/spotter-subagents/agent-acompact-946d2b.jsonl"
LAYOUT = {"architecture", "component", "task-done", "task-pending"}


@pytest.mark.parametrize(
    "text, styles, parts",
    [
        ("The API is in services/api, the worker in services/worker.", [],
         [("API", "services/api"), ("worker", "services/worker")]),
        ("We use a hexagonal layout: the domain lives in src/domain and adapters are in src/adapters.",
         ["hexagonal layout"], [("domain", "src/domain"), ("adapters", "src/adapters")]),
        ("It's a monorepo; the web app lives under apps/web and the CLI is in `packages/cli`.", ["monorepo"],
         [("web app", "apps/web"), ("CLI", "packages/cli")]),
        ("Our payment worker sits in `workers/payments/`.", [], [("payment worker", "workers/payments/")]),
        ("This project follows clean architecture.", ["clean architecture"], []),
        ("We went with ports and adapters, the core lives in app/core.", ["ports and adapters"], [("core", "app/core")]),
        # not a statement of the layout: an error's place, a fix, a question, a negation, a wish
        ("The error is in `lib/web/controllers/helpers.ex` at line 3.", [], []),
        ("The fix is in src/api/handler.py.", [], []),
        ("Is the API in services/api?", [], []),
        ("We don't use microservices.", [], []),
        ("The API should be in services/api.", [], []),
        ("let's keep clean code and a monorepo mindset", [], []),
        ("The docs are at https://example.com/docs/guide.", [], []),
        ("```\nthe API is in services/api\n```", [], []),
    ],
)  # fmt: skip
def test_layout_facts(text, styles, parts):
    assert layout_facts(text) == (styles, parts)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Done: parser rewrite; tests for the lexer\nPending: docs · release notes\nTODO: wire up the CLI",
         [(True, "parser rewrite"), (True, "tests for the lexer"), (False, "docs"), (False, "release notes"),
          (False, "wire up the CLI")]),
        ("Summary:\n- [x] add the migration\n- [ ] backfill old rows\n- [X] update the **README**",
         [(True, "add the migration"), (False, "backfill old rows"), (True, "update the README")]),
        ("## Done\n- moved config to TOML\n- removed the old loader\n\n## Remaining\n1. benchmark the cache\n\nThanks!",
         [(True, "moved config to TOML"), (True, "removed the old loader"), (False, "benchmark the cache")]),
        ("3. Pending Tasks:\n   - fix __init__ exports\n   - tag v2\n4. Current Work:\n   - not a task",
         [(False, "fix __init__ exports"), (False, "tag v2")]),
        ("Next steps: profile the importer", [(False, "profile the importer")]),
        # no progress stated: a reply that says "Done.", a code comment, a code block, "none", a question
        ("Done. The fix was a missing lock around the write.", []),
        ("// TODO: separate contexts", []),
        ("```python\n# TODO: remove\nTODO: x = 1\n```\nAll good.", []),
        ("Pending: none", []),
        ("Done:\nThe tests pass.", []),
        ("What's left to do?", []),
    ],
)  # fmt: skip
def test_progress_items(text, expected):
    assert progress_items(text) == expected


def test_a_template_is_not_progress():
    template = "Your summary should include:\n7. Pending Tasks:\n   - [Task 1]\n   - [...]\n"
    assert progress_items(template) == []  # placeholders
    assert progress_items("TODO: ship it", from_user=True) == [(False, "ship it")]
    long = "Here is the plan I wrote last week.\n" + "Context line.\n" * 60 + "TODO: ship it\n"
    assert progress_items(long, from_user=True) == [] and progress_items(long) == [(False, "ship it")]


def test_a_long_task_is_cut_not_dropped():
    [(done, task)] = progress_items("TODO: " + "make the importer resumable after a crash " * 5)
    assert not done and len(task) == 120 and task.endswith("…")


def _history() -> list[Session]:
    return [
        Session(
            "s-arch",
            [
                Turn(
                    "We use a hexagonal layout. The API is in services/api, the worker in services/worker.",
                    [Call("bash", command="pytest -q", output="3 passed in 0.1s", exit_code=0)],
                    reply="Noted.\n\nTODO: add retries to the worker; document the API",
                ),
                Turn(
                    "add the queue",
                    [Call("write", path="services/worker/queue.py", content="import redis\n")],
                    reply="Progress:\n- [x] queue module\n- [ ] wire the queue into the API",
                ),
            ],
            day=1,
        ),
        Session(
            "s-later",
            [
                Turn(
                    "the worker now lives in apps/worker",
                    [Call("edit", path="apps/worker/main.py", content="retries = 3\n")],
                    reply="Done: add retries to the worker",
                ),
            ],
            day=3,
        ),
    ]


def test_the_brief_states_the_layout_and_what_is_left(tmp_path: Path):
    memory = distil_history(tmp_path / "memory", _history())
    core = brief_of(memory)
    assert len(core.encode("utf-8")) <= CORE_BUDGET
    lines = core.splitlines()
    layout = next(line for line in lines if line.startswith("· layout: "))
    assert "hexagonal layout" in layout and "API: services/api" in layout
    assert "worker: apps/worker" in layout and "services/worker" not in layout  # the newest place said
    assert layout.endswith("↪ session:s-later")
    progress = next(line for line in lines if "· done: " in line)  # one line: the checks, done, then pending
    assert progress.startswith("· state: tests passing (")
    done, pending = progress.split("  ↪")[0].split(" · done: ")[1].split(" · pending: ")
    assert "document the API" in pending and "wire the queue into the API" in pending
    assert "add retries" not in pending  # said done since
    assert "add retries to the worker" in done and "queue module" in done


def test_the_brief_without_such_statements_has_no_such_lines(tmp_path: Path):
    history = [Session("s-plain", [Turn("run the tests", [Call("bash", command="pytest -q", output="1 passed")])])]
    core = brief_of(distil_history(tmp_path / "memory", history))
    assert "· layout:" not in core and "· pending:" not in core and "· done:" not in core


def test_a_compaction_summary_gives_its_pending_tasks_and_no_layout(home: Home):
    # Read in agent-acompact-946d2b.jsonl, line 2: the assistant's compaction summary of a spotter
    # session. Its "7. Pending Tasks:" section lists four beads (spotter-4te.3 with a long note,
    # spotter-4te.4, .5 and .6); its "8. Current Work:" says "The error is in
    # `lib/spotter_web/controllers/otel_trace_helpers.ex`" (where an error is, not the layout).
    import_into(home, "claude", fixture(COMPACT_SUMMARY))
    [extraction] = extract_all(home).values()
    names = {e.id: e.name for e in extraction.entities}
    found = sorted((e.relation, names[e.to_id]) for e in extraction.edges if e.relation in LAYOUT)
    assert [relation for relation, _ in found] == ["task-pending"] * 4
    tasks = [name for _, name in found]
    assert [t.split(":")[0].split(" ")[0] for t in tasks] == [f"spotter-4te.{n}" for n in (3, 4, 5, 6)]
    assert any("Enable opentelemetry_ash and trace async enrichment boundaries" in t for t in tasks)
    assert all(len(t) <= 120 for t in tasks)


@pytest.mark.parametrize(
    "path, source",
    [
        ("transcripts/claude-code/spotter-tool_heavy.jsonl", "claude"),
        ("transcripts/claude-code/spotter-short.jsonl", "claude"),
        ("transcripts/codex/acidicsoil-rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl",
         "codex"),
    ],
)  # fmt: skip
def test_real_sessions_that_state_neither_give_neither(home: Home, path: str, source: str):
    # Read in each: no message states where a part of the project lives, its architecture, or a
    # done / pending list (the codex rollout's one TODO is a code comment in a file it printed,
    # line 54: `// TODO: Separate into multiple contexts`).
    import_into(home, source, fixture(path))
    [extraction] = extract_all(home).values()
    assert not [e for e in extraction.edges if e.relation in LAYOUT]


def test_an_answers_own_headings_over_what_was_done_and_what_is_next():
    text = (
        "All set.\n\n### 🎯 What Was Done\n\n- Added the /setprompt command\n- Polls work in groups\n\n"
        "### ⏭️ What's Next\n1. Phase 2: universal config\n\n## Notes\n- not a task\n"
    )
    assert progress_items(text) == [
        (True, "Added the /setprompt command"),
        (True, "Polls work in groups"),
        (False, "Phase 2: universal config"),
    ]


@pytest.mark.parametrize(
    "text, expected",
    [
        # a heading over what is left says it is left, whatever done count it quotes
        ("Status.\n## Remaining Phase 2 Tasks (4/6 done)", [(False, "Phase 2 Tasks 4/6")]),
        ("Status.\n## Poll System Implementation Complete!", [(True, "Poll System")]),
        # a heading over a list of what was fixed names no piece of work
        ("Done.\n## Major Issues Fixed", []),
        ("Done.\n## Clean Solution Implemented", []),
        ("Done.\n## Summary: Data Export Complete", []),
    ],
)  # fmt: skip
def test_a_finished_heading_names_the_work_or_nothing(text, expected):
    assert progress_items(text) == expected


def test_the_done_line_names_each_sessions_work_by_its_topic(tmp_path: Path):
    older = Session(
        "s-polls", [Turn("add polls", [Call("edit", path="bot/polls.py", content="x = 1\n")],
                         reply="## Poll System Implementation Complete!")], day=1,
    )  # fmt: skip
    checklist = "\n".join(f"- [x] Step {n}: wrote the part number {n} of the new settings module" for n in range(6))
    newer = Session(
        "s-config", [Turn("add settings", [Call("edit", path="bot/config.py", content="y = 2\n")],
                          reply="Summary:\n" + checklist)], day=3,
    )  # fmt: skip
    memory = distil_history(tmp_path / "memory", [older, newer])
    done = next(line for line in brief_of(memory).splitlines() if line.startswith("· done: "))
    assert "Poll System" in done  # the older session's work, not pushed out by the newer checklist
    assert "Step 5" in done and "wrote the part" not in done  # a summary bullet by its topic


def test_the_brief_offers_the_newest_few_tasks_when_the_whole_line_does_not_fit(tmp_path: Path):
    from opmem_tui.backend.memory.brief import project_brief

    reply = "Progress:\n- [x] queue module\n- [x] retry policy\n- [x] dead letter topic"
    memory = distil_history(tmp_path / "memory", [Session("s-q", [Turn("add the queue", reply=reply)])])
    done = [line.text for line in project_brief(memory, "demo") if line.text.startswith("· done: ")]
    assert sorted(len(line.split("; ")) for line in done) == [1, 2, 3], done


def test_done_and_pending_share_one_line_cut_after_an_item_for_a_full_block(tmp_path: Path):
    from opmem_tui.backend.memory.brief import project_brief

    reply = "## Done\n- queue module\n- retry policy\n\n## Next steps\n- dead letter topic\n- metrics"
    memory = distil_history(tmp_path / "memory", [Session("s-q", [Turn("add the queue", reply=reply)])])
    lines = [line for line in project_brief(memory, "demo") if line.part == "progress"]
    assert lines[0].text == "· done: retry policy; queue module · pending: metrics; dead letter topic"
    assert [line.text for line in lines[1:]] == [
        "· done: retry policy; queue module · pending: metrics",
        "· done: retry policy; queue module",
        "· done: retry policy",
    ]
    assert lines[0].importance > lines[1].importance


def test_passing_checks_lead_the_progress_line_failing_ones_stand_alone(tmp_path: Path):
    from opmem_tui.backend.memory.brief import project_brief

    def brief(output: str, code: int) -> list[str]:
        calls = [Call("bash", command="pytest -q", output=output, exit_code=code)]
        turns = [Turn("run the tests", calls, reply="## Done\n- the parser\n\n## Next steps\n- the docs")]
        memory = distil_history(tmp_path / f"m{code}", [Session("s-t", turns)])
        return [line.text for line in project_brief(memory, "demo") if line.part in ("state", "progress")]

    passing = brief("3 passed in 0.1s", 0)
    assert passing[0].startswith("· state: tests passing (") and passing[0].endswith(
        " · done: the parser · pending: the docs"
    ), passing
    assert passing[-1].startswith("· state: tests passing (") and "done:" not in passing[-1]  # the last cut
    failing = brief("1 failed, 2 passed in 0.1s", 1)
    assert any(t.startswith("· state: tests failing") and "done:" not in t for t in failing), failing
    assert any(t.startswith("· done: the parser") for t in failing), failing
