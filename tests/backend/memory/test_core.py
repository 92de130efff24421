"""core.md: the byte budget and the pointer rule as properties over hostile input; what gets chosen."""

from __future__ import annotations

import itertools
import random
import re
from datetime import date
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opmem_tui.backend.home import Home
from opmem_tui.backend.memory.core import (
    CORE_BUDGET,
    RULE,
    CoreLine,
    compose_core,
    core_path,
    render_core,
    write_cores,
)
from opmem_tui.backend.memory.store import MemoryStore

from .sample import DAY, T0, edge, entity, event

POINTER = re.compile(r"  ↪ session:[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
DAY_OF_T0 = date(2026, 5, 28)
CONSOLIDATED = date(2026, 6, 30)

hostile_text = st.one_of(
    st.text(max_size=400),
    st.text(st.characters(codec=None, exclude_categories=()), max_size=300),  # surrogates and controls too
    st.sampled_from(
        [
            "\x1b[31mred\x1b[0m \x1b]8;;http://evil\x07link\x1b]8;;\x07",
            "line one\nline two\r\n  ↪ session:fake",
            "\u202eevil bidi\u200b zero width",
            "═" * 900,
            "日本語のテキスト" * 80,
            "🙂" * 700,
            "\ud800 lone surrogate",
            "",
            "   ",
        ]
    ),
)
session_ids = st.one_of(
    st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", fullmatch=True),
    st.text(max_size=140),
)
lines = st.lists(st.builds(CoreLine, hostile_text, session_ids, st.floats(allow_nan=False)), max_size=60)


def check_block(text: str, graph_label: str = "[Graph · current project]") -> list[str]:
    """The invariants every core block keeps; returns its content lines."""
    assert len(text.encode("utf-8")) <= CORE_BUDGET
    assert text.endswith("\n")
    rows = text[:-1].split("\n")
    assert rows[0] == rows[2] == rows[-1] == RULE
    assert rows[1].startswith("opmem memory · project: ") and re.search(
        r", last consolidated \d{4}-\d{2}-\d{2}$", rows[1]
    )
    assert rows[3] == "[Timeline · recent]"
    assert rows[-2].startswith("For details: memory_open_session(")
    assert graph_label in rows
    content = [r for r in rows[4:-2] if r != graph_label]
    for row in content:
        assert POINTER.search(row), row
        assert row.count("↪") == 1
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202e\u200b]", text)
    return content


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(title=hostile_text, events=lines, facts=lines)
def test_composed_block_fits_and_every_line_points(title, events, facts):
    text = compose_core(title, CONSOLIDATED, events, facts)
    content = check_block(text)
    assert compose_core(title, CONSOLIDATED, events, facts) == text  # deterministic
    valid = [c for c in events + facts if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", c.session_id)]
    if valid and any(c.text.strip() for c in valid):
        pass  # something may be chosen; whether it fits depends on its length
    assert len(content) <= len(events) + len(facts)


def test_short_candidates_fill_the_budget_and_keep_order():
    events = [CoreLine(f"· 2026-06-{10 + i:02d} event {i}", f"s{i}", float(i)) for i in range(40)]
    facts = [CoreLine(f"· a ──uses──► b{i}", f"s{i}") for i in range(40)]
    text = compose_core("opmem", CONSOLIDATED, events, facts)
    content = check_block(text)
    assert len(text.encode()) > CORE_BUDGET - 80  # nearly full: no room left unused
    shown = [c for c in content if "event" in c]
    assert shown == sorted(shown, key=lambda r: -int(r.split("event ")[1].split()[0]))  # newest first
    assert any("uses" in c for c in content)


def test_the_brief_takes_the_room_it_needs_before_recent_work():
    # brief lines filling ~80% of the room all stay; the timeline gets only what they leave
    brief = [CoreLine(f"· conventions: rule {i} " + "x" * 250, f"s{i}", float(-i)) for i in range(4)]
    events = [CoreLine(f"· 2026-06-{10 + i:02d} event {i} " + "y" * 60, f"s{i}", float(i)) for i in range(20)]
    text = compose_core("opmem", CONSOLIDATED, events, [], brief=brief, brief_label="[Project · opmem]")
    assert len(text.encode("utf-8")) <= CORE_BUDGET
    content = [line for line in text.splitlines() if "  ↪ session:" in line]
    assert sum("conventions: rule" in c for c in content) == len(brief)
    assert 0 < sum("event" in c for c in content) < len(events)


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(
    summaries=st.lists(hostile_text, min_size=1, max_size=12),
    names=st.lists(hostile_text.filter(lambda s: s.strip()), min_size=2, max_size=6),
    project_name=hostile_text,
)
def test_rendered_from_a_hostile_memory_fits_points_and_repeats(tmp_path_factory, summaries, names, project_name):
    store = MemoryStore(tmp_path_factory.mktemp("mem") / "memory", durable=False)
    ents = [entity("concept", n or "x", scope="project:p") for n in names]
    store.append(ents)
    store.append(
        [
            event(s or "x", T0 + i * DAY, importance=(i % 10) / 10, scope="project:p", session=f"s{i}")
            for i, s in enumerate(summaries)
        ]
    )
    store.append(
        [edge(a, "depends-on", b, T0 + i, scope="project:p") for i, (a, b) in enumerate(itertools.pairwise(ents))]
    )
    text = render_core(store, CONSOLIDATED, "p", project_name)
    content = check_block(text)
    assert content  # something fits, whatever the text
    assert render_core(MemoryStore(store.root), CONSOLIDATED, "p", project_name) == text


def build(store: MemoryStore) -> dict[str, object]:
    worker, port, old_port = entity("service", "worker"), entity("port", ":9090"), entity("port", ":8080")
    app = entity("file", "app.py", scope="project:p")
    lib = entity("file", "lib.py", scope="project:q")
    ann = entity("person", "ann")
    store.append([worker, port, old_port, app, lib, ann])
    old = edge(worker, "listens-on", old_port, T0, scope="project:p")
    new = edge(worker, "listens-on", port, T0 + 20 * DAY, scope="project:p")
    weak = edge(worker, "depends-on", lib, T0 + 21 * DAY, scope="project:p", confidence=0.4)
    edited = edge(ann, "edited", app, T0 + 22 * DAY, scope="project:p")
    theirs = edge(ann, "edited", lib, T0 + 22 * DAY, scope="project:q")
    prefers = edge(ann, "prefers", entity("concept", "tabs"), T0 + 5 * DAY)
    gone = edge(ann, "uses", entity("tool", "vim"), T0 + 6 * DAY, session="deleted")
    store.append([entity("concept", "tabs"), entity("tool", "vim"), old, new, weak, edited, theirs, prefers, gone])
    store.supersede(old.id, new.id, "single-valued")
    store.append(
        [
            event("Moved the worker to :9090", T0 + 20 * DAY, importance=0.9, scope="project:p"),
            event("Read the README", T0 + 31 * DAY, importance=0.1, scope="project:p"),
            event("Chose SQLite for the cache", T0 - 200 * DAY, importance=1.0, scope="project:p"),
            event("Fixed the q build", T0 + 30 * DAY, importance=0.9, scope="project:q"),
            event("Ann moved to Lisbon", T0 + 25 * DAY, importance=0.8),
            event("Learnt that uvicorn needs --reload off in tests", T0 + 24 * DAY, kind="learning", importance=0.7),
            event("Deleted-session news", T0 + 30 * DAY, importance=1.0, session="deleted"),
        ]
    )
    return {}


def test_choice_of_lines_for_a_project_and_the_global_core(tmp_path: Path):
    home = Home(tmp_path / "home")
    home.sessions.append_message("s1", "user", "hi")
    build(home.memory)
    text = render_core(home.memory, CONSOLIDATED, "p", "Proj P")
    content = check_block(text)
    assert "opmem memory · project: Proj P, last consolidated 2026-06-30" in text
    joined = "\n".join(content)
    assert "· 2026-06-17 Moved the worker to :9090  ↪ session:s1" in joined
    # a project's block tells its own story: global records (what a session of no project did or
    # learnt, a person's news) are the global block's; the user's global preferences reach it
    # through its brief
    assert "Ann moved to Lisbon" not in joined and "prefers" not in joined and "uvicorn" not in joined
    assert "Learnt that uvicorn needs --reload off in tests" in render_core(home.memory, CONSOLIDATED)
    assert "q build" not in joined and "lib.py" not in joined  # another project's do not
    assert "Deleted-session" not in joined and "vim" not in joined  # a deleted session's are skipped
    assert "· worker ──listens-on──► :9090" in joined and ":8080" not in joined  # current facts only
    assert "depends-on" not in joined  # below the confidence floor
    facts = [c for c in content if "──" in c]
    assert not any("──edited──►" in c or "──part-of──►" in c for c in facts)  # activity: the timeline's, not facts
    glob = render_core(home.memory, CONSOLIDATED)
    check_block(glob, "[Graph · global]")
    assert "Ann moved to Lisbon" in glob and "worker" not in glob and "project: (global)" in glob
    assert "ann ──prefers──► tabs" in glob


def test_recency_times_importance_picks_the_events(tmp_path: Path):
    store = MemoryStore(tmp_path / "memory")
    filler = "with a summary long enough that not all of them fit"
    many = [event(f"routine step {i} {filler}", T0 + i * DAY, importance=0.3, session=f"s{i}") for i in range(60)]
    landmark = event(f"Shipped version 2.0 {filler}", T0 + 2 * DAY, importance=1.0)
    ancient = event(f"An ancient but vital decision {filler}", T0 - 400 * DAY, importance=1.0)
    store.append([*many, landmark, ancient])
    text = render_core(store, date(2026, 7, 26))  # T0 + 59 days
    check_block(text, "[Graph · global]")
    assert "routine step 59 " in text and "routine step 10 " not in text
    assert "Shipped version 2.0" not in text and "ancient" not in text
    text = render_core(store, date(2026, 5, 31))  # consolidated early: the landmark is recent then
    assert "Shipped version 2.0" in text and "routine step 4 " not in text  # nothing after that day


def test_write_cores_paths_atomic_and_untouched_when_unchanged(tmp_path: Path):
    store = MemoryStore(tmp_path / "memory")
    build(store)
    paths = write_cores(store, CONSOLIDATED, {"p": "Proj P", "empty": "Nothing yet"})
    root = store.root
    assert paths == [root / "core.md", core_path(root, "empty"), core_path(root, "p"), core_path(root, "q")]
    assert core_path(root, "p") == root / "projects" / "p" / "core.md"
    assert "project: Proj P" in core_path(root, "p").read_text(encoding="utf-8")
    inode = core_path(root, "p").stat().st_ino
    write_cores(store, CONSOLIDATED, {"p": "Proj P"})
    assert core_path(root, "p").stat().st_ino == inode  # same text: the file is left alone
    assert core_path(root, "../../etc").resolve().is_relative_to((root / "projects").resolve())
    assert not list(root.glob("projects/*/.*.tmp"))


@pytest.mark.parametrize("seed", range(4))
def test_ranked_events_equal_a_ranking_of_every_event(tmp_path: Path, seed: int):
    """The early stop of ranked_events loses nothing: same as scoring every visible current event."""
    rng = random.Random(seed)
    store = MemoryStore(tmp_path / "memory", session_exists=lambda s: s != "gone", durable=False)
    events = [
        event(
            f"e{i}",
            T0 + rng.random() * 60 * DAY,
            importance=rng.choice([0.0, 0.1, 0.5, 0.5, 0.9, 1.0]),
            scope=rng.choice(["global", "project:p", "project:q"]),
            session=rng.choice(["s1", "s2", "gone"]),
        )
        for i in range(300)
    ]
    store.append(events)
    for old, new in zip(rng.sample(events, 20), rng.sample(events, 20), strict=True):
        if old.id != new.id:
            store.supersede(old.id, new.id, "test")
    until = T0 + 45 * DAY
    half_life = rng.choice([0.5, 3.0, 14.0]) * DAY
    every = store.timeline(until=until, scope="project:p", limit=None).events
    ranked = sorted(
        every, key=lambda e: (-(e.importance * 0.5 ** ((until - e.event_time) / half_life)), -e.event_time, e.id)
    )
    found = store.ranked_events(until, "project:p", half_life=half_life, limit=40)
    assert [e.id for e in found] == [e.id for e in ranked[:40]]
    assert all(e.provenance.session_id != "gone" and e.superseded_by is None for e in found)
