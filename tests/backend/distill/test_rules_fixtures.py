"""The rules extractor on the real fixtures: what we established by reading the files, line by line."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from opmem_tui.backend.home import Home

from .conftest import extract_all, fixture, import_into, locomo_to_jsonl

SPOTTER = "transcripts/claude-code/spotter-tool_heavy.jsonl"
CODEX = "transcripts/codex/acidicsoil-rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"


def test_spotter_tool_heavy(home: Home):
    # Established by reading spotter-tool_heavy.jsonl: two prompts (lines 4 and 26) and six
    # tool_use blocks (lines 5, 13, 29, 30, 34, 37): Bash `mix phx.server` (in background),
    # Bash `tail -5 /tmp/.../bae407b.output`, WebSearch, Glob `assets/js/**/*.js`, Read of
    # /home/marco/projects/spotter/assets/js/app.js (the cwd is /home/marco/projects/spotter) and
    # WebFetch of github.com/xtermjs/xterm.js/issues/1343. No Edit, Write or MultiEdit call: no
    # file was edited. `/mcp` is a local command, not a tool call.
    import_into(home, "claude", fixture(SPOTTER))
    [extraction] = extract_all(home).values()
    facts = {f.turn: f for f in extraction.facts}
    assert set(facts) == {1, 2}
    assert {p for f in facts.values() for p in f.edited} == set()
    assert {c for f in facts.values() for c in f.commands} == {
        "mix phx.server",
        "tail -5 /tmp/claude-1000/-home-marco-projects-spotter/tasks/bae407b.output",
    }
    assert facts[1].read == ("/tmp/claude-1000/-home-marco-projects-spotter/tasks/bae407b.output",)
    assert facts[2].read == ("assets/js/app.js",)
    assert facts[2].urls == ("https://github.com/xtermjs/xterm.js/issues/1343",)
    work = {e.provenance.turn: e.summary for e in extraction.events if e.kind == "work"}
    assert work == {
        1: "Ran mix phx.server and read bae407b.output",
        2: 'Read assets/js/app.js, searched for "assets/js/**/*.js", searched the web for '
        '"xterm.js scroll not working embedded page captures scroll events" and fetched '
        "github.com/xtermjs/xterm.js/issues/1343",
    }
    names = {(e.type, e.name) for e in extraction.entities}
    assert {("command", "mix phx.server"), ("file", "assets/js/app.js"), ("model", "claude-opus-4-6")} <= names
    assert ("project", "spotter") in names


# Established by listing the file's 39 `function_call` payloads (python: json.loads each line,
# keep payload.type == "function_call", print payload.arguments) and reading each: 37 `shell`
# calls in workdir /home/user/projects/temp/chatbot-ui and 2 `update_plan` calls. The two
# apply_patch calls (heredocs) both update components/chat/chat-helpers/index.ts and share the
# command line `apply_patch <<'PATCH'`; so 36 distinct command lines.
CODEX_COMMANDS = {
    "ls",
    "cat 'LM Studio configuration.md'",
    'rg -n "ollama" -n',
    "sed -n '1,220p' components/chat/chat-helpers/index.ts",
    "sed -n '220,640p' components/chat/chat-helpers/index.ts",
    'rg -n "LMSTUDIO" -n',
    "sed -n '1,220p' components/utility/global-state.tsx",
    "sed -n '1,200p' lib/models/fetch-models.ts",
    'rg -n "lmstudio" -n',
    "sed -n '1,420p' components/chat/chat-hooks/use-chat-handler.tsx",
    "sed -n '1,200p' lib/consume-stream.ts",
    "sed -n '150,320p' README.md",
    "rg -n \"LMSTUDIO\" -n '.env.local.example'",
    "sed -n '1,200p' types/models.ts",
    "sed -n '1,200p' types/index.ts",
    "sed -n '1,200p' types/llms.ts",
    "sed -n '1,220p' types/chat.ts",
    'rg -n "local" app/api -g"*.ts"',
    "sed -n '1,200p' lib/generate-local-embedding.ts",
    "ls lib",
    "ls lib/ai",
    "ls app/api",
    "ls app/api/chat",
    "sed -n '1,220p' app/api/chat/custom/route.ts",
    "sed -n '1,320p' lib/build-prompt.ts",
    'rg -n "eventsource" -n',
    'rg -n "eventsource-parser" -n src -g"*.ts"',
    'rg -n "eventsource-parser" -n',
    "cat package.json",
    "sed -n '1,200p' lib/models/llm/llm-list.ts",
    'rg -n "availableLocalModels" -n',
    "rg -n 'provider === \"lmstudio\"' -n",
    'rg -n "OLLAMA" -n',
    'rg -n "modelData" components/chat/chat-hooks/use-chat-handler.tsx',
    "sed -n '200,240p' components/chat/chat-hooks/use-chat-handler.tsx",
    "apply_patch <<'PATCH'",
}
# The files the cat/sed calls print, relative to the workdir (rg calls search, ls calls list).
CODEX_READ = {
    "LM Studio configuration.md",
    "components/chat/chat-helpers/index.ts",
    "components/utility/global-state.tsx",
    "lib/models/fetch-models.ts",
    "components/chat/chat-hooks/use-chat-handler.tsx",
    "lib/consume-stream.ts",
    "README.md",
    "types/models.ts",
    "types/index.ts",
    "types/llms.ts",
    "types/chat.ts",
    "lib/generate-local-embedding.ts",
    "app/api/chat/custom/route.ts",
    "lib/build-prompt.ts",
    "package.json",
    "lib/models/llm/llm-list.ts",
}


def test_codex_rollout(home: Home):
    import_into(home, "codex", fixture(CODEX))
    [extraction] = extract_all(home).values()
    [facts] = extraction.facts  # one user prompt: one turn
    assert facts.turn == 1
    assert set(facts.edited) == {"components/chat/chat-helpers/index.ts"}
    assert set(facts.commands) == CODEX_COMMANDS
    assert set(facts.read) == CODEX_READ
    assert facts.searches[:3] == ("ollama", "LMSTUDIO", "lmstudio")
    [work] = [e for e in extraction.events if e.kind == "work"]
    assert work.summary == (
        'Edited components/chat/chat-helpers/index.ts, read 15 files and searched for "ollama", "LMSTUDIO", '
        '"lmstudio" and 7 more'
    )
    assert work.key.startswith("work:codex-019a93b9-f380-7600-98ff-940e6b99603c:")
    # `cat package.json` printed the manifest: the project depends on its packages
    depends = {e.to_id for e in extraction.edges if e.relation == "depends-on"}
    packages = {e.id: e.name for e in extraction.entities if e.type == "package"}
    assert {"next", "react", "@supabase/supabase-js"} <= {packages[d] for d in depends}
    [edited] = [e for e in extraction.edges if e.relation == "edited"]  # said once a batch, not per patch
    first_patch = next(f for f in extraction.facts)  # the first apply_patch call is its provenance
    assert edited.provenance.turn == first_patch.turn == 1


# LoCoMo conv-26: session dates read from session_N_date_time (weekdays by calendar):
# s1 Mon 8 May 2023, s2 Thu 25 May, s4 Tue 27 June, s5 Mon 3 July, s7 Wed 12 July,
# s8 Sat 15 July, s10 Thu 20 July, s11 Mon 14 Aug, s13 Wed 23 Aug, s18 Fri 20 Oct 2023.
# Each expected day worked out by hand from the turn's own words and its session's date.
LOCOMO_DATES = {
    "D1:3": ("yesterday", "7 May 2023", dt.date(2023, 5, 7)),  # Mon 8 May - 1
    "D2:1": ("last Saturday", "20 May 2023", dt.date(2023, 5, 20)),  # the Saturday before Thu 25 May
    "D2:7": ("next month", "June 2023", dt.date(2023, 6, 1)),
    "D4:5": ("ten years ago", "2013", dt.date(2013, 1, 1)),
    "D4:13": ("Last Friday", "23 June 2023", dt.date(2023, 6, 23)),  # Tue 27 June -> Fri 23
    "D5:4": ("yesterday", "2 July 2023", dt.date(2023, 7, 2)),
    "D7:1": ("two days ago", "10 July 2023", dt.date(2023, 7, 10)),  # Wed 12 July - 2
    "D8:2": ("Last Fri", "14 July 2023", dt.date(2023, 7, 14)),  # Sat 15 July -> Fri 14
    "D10:3": ("last Tues.", "18 July 2023", dt.date(2023, 7, 18)),  # Thu 20 July -> Tue 18
    "D10:7": ("Last weekend", "weekend of 15 July 2023", dt.date(2023, 7, 15)),  # Sat 15-Sun 16
    "D11:4": ("last Friday", "11 August 2023", dt.date(2023, 8, 11)),  # Mon 14 Aug -> Fri 11
    "D13:11": ("last week", "week of 14 August 2023", dt.date(2023, 8, 14)),  # the week before Wed 23 Aug
    "D18:1": ("this past weekend", "weekend of 14 October 2023", dt.date(2023, 10, 14)),  # Fri 20 Oct
}


def test_locomo_relative_dates(home: Home, tmp_path: Path):
    source = locomo_to_jsonl(fixture("locomo/conv-26.json"), tmp_path / "conv-26.jsonl")
    import_into(home, "jsonl", source)
    events = {}
    for extraction in extract_all(home).values():
        for event in extraction.events:
            if event.kind == "event":
                events[event.provenance.node_ids[0]] = event
    for dia_id, (phrase, label, day) in LOCOMO_DATES.items():
        event = events[dia_id]
        assert f"{phrase} [{label}]" in event.summary, (dia_id, event.summary)
        when = dt.datetime.fromtimestamp(event.event_time, tz=dt.UTC).date()
        assert when == day, (dia_id, when)
    # who did what: the speaker's name replaces "I"
    assert "Caroline went to a LGBTQ support group yesterday [7 May 2023]" in events["D1:3"].summary
    # an answer carries the question it answers (the other speaker's previous message)
    assert events["D1:3"].summary.startswith("Melanie asked: What's up with Caroline? — ")
    # no weekday read out of "We" and no month out of the verb "may"
    for event in events.values():
        assert "We [" not in event.summary and "may [" not in event.summary
