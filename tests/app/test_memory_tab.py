"""Memory tab: the graph explorer, the core.md preview and the timeline over a distilled sample
store, their jumps to session turns, live core.md, and the empty store."""

from __future__ import annotations

from textual.widgets import TabbedContent

from opmem_tui.backend.memory.core import core_path
from opmem_tui.tabs.memory import NO_MEMORY
from opmem_tui.widgets.core_view import CoreView
from opmem_tui.widgets.graph_explorer import GraphExplorer
from opmem_tui.widgets.replay_view import ReplayPane
from opmem_tui.widgets.timeline_view import TimelineView

from .conftest import make_app, press, settle, wait_until
from .memory_sample import MERGE_REASON, MERGED_NAME, NEW_PORT, OLD_PORT


def lines_text(view) -> str:
    return "\n".join(line.text for line in view.lines)


def detail(app) -> str:
    return str(app.screen.query_one("#graph-detail").render())


def header(app, selector: str) -> str:
    return str(app.screen.query_one(selector).render())


def tree_labels(graph: GraphExplorer) -> list[str]:
    """The rows shown, top to bottom, without their guides and icons."""
    return [graph.tree.label(item.index) for item in graph.tree.rows()]


async def open_memory(pilot, view: str = "g") -> None:
    await settle(pilot)
    await press(pilot, "3")
    await settle(pilot)
    await press(pilot, view)
    await settle(pilot)


async def find(pilot, graph: GraphExplorer, text: str, expect: str) -> None:
    graph.finder.focus()
    graph.finder.value = ""
    await pilot.press(*text)
    await wait_until(pilot, lambda: bool(graph._matches) and graph._matches[0].name == expect, f"{expect} found")
    await press(pilot, "enter")
    await settle(pilot)


async def test_empty_store_says_how_to_fill_the_memory(sample_home):
    app = make_app(sample_home)
    async with app.run_test(size=(140, 36)) as pilot:
        await open_memory(pilot)
        graph = app.screen.query_one(GraphExplorer)
        assert NO_MEMORY in str(app.screen.query_one("#graph-empty").render())
        assert not graph.tree.display
        await press(pilot, "c")
        core = app.screen.query_one(CoreView)
        assert "No core.md yet" in lines_text(core.lines) and "Distil now" in lines_text(core.lines)
        await press(pilot, "t")
        assert NO_MEMORY in lines_text(app.screen.query_one(TimelineView).lines)
    assert not sample_home.memory_dir.exists()  # looking created nothing


async def test_graph_opens_on_a_busy_entity_and_recentres(memory_home):
    app = make_app(memory_home)
    async with app.run_test(size=(140, 36)) as pilot:
        await open_memory(pilot)
        graph = app.screen.query_one(GraphExplorer)
        await wait_until(pilot, lambda: graph.center is not None, "an entity shown")
        await find(pilot, graph, "middlewar", "src/auth/middleware.py")
        labels = tree_labels(graph)
        assert labels[0].startswith("src/auth/middleware.py")
        assert any("──read──►" in label or "◄──read──" in label for label in labels[1:])
        # the centre's aliases and why each was merged
        text = detail(app)
        assert MERGED_NAME in text and MERGE_REASON in text and "0.97" in text
        # a neighbour row: relation, confidence, time; enter recentres on it, backspace goes back
        graph.tree.focus()
        await press(pilot, "down")
        edge_detail = detail(app)
        assert "confidence" in edge_detail and "from session fix-login" in edge_detail
        neighbour = graph.tree.cursor_item.entity
        await press(pilot, "enter")
        assert graph.center == neighbour
        await press(pilot, "backspace")
        assert tree_labels(graph)[0].startswith("src/auth/middleware.py")


async def find_the_merged_name(app, pilot) -> GraphExplorer:
    """Opens the Memory tab and types the merged alias into the entity finder."""
    await open_memory(pilot)
    graph = app.screen.query_one(GraphExplorer)
    graph.finder.focus()
    await pilot.press(*MERGED_NAME)
    return graph


async def test_a_merged_name_finds_its_entity(memory_home):
    app = make_app(memory_home)
    async with app.run_test(size=(140, 36)) as pilot:
        graph = await find_the_merged_name(app, pilot)
        await wait_until(pilot, lambda: graph.matches_query == MERGED_NAME, "matches for the whole name")
        assert graph._matches[0].name == "src/auth/middleware.py"
        assert graph._matches[0].matched == MERGED_NAME


async def test_hops_superseded_edges_and_as_of(memory_home):
    app = make_app(memory_home)
    async with app.run_test(size=(140, 36)) as pilot:
        await open_memory(pilot)
        graph = app.screen.query_one(GraphExplorer)
        await find(pilot, graph, "webapp", "webapp")
        graph.tree.focus()
        one_hop = len(tree_labels(graph))
        assert f"──listens-on──► {NEW_PORT}" in "\n".join(tree_labels(graph))
        assert f"► {OLD_PORT} " not in "\n".join(tree_labels(graph))
        assert "1 superseded hidden" in header(app, "#graph-header")
        await press(pilot, "s")
        labels = "\n".join(tree_labels(graph))
        assert f"──listens-on──► {OLD_PORT}" in labels and "superseded 2025-12-30" in labels
        await press(pilot, "s", "plus")
        assert "within 2 hops" in header(app, "#graph-header")
        await press(pilot, "shift+space", "shift+space")  # collapse all below the root, expand all
        assert len(tree_labels(graph)) > one_hop
        await press(pilot, "minus")
        # as of a day when only the old port was known to be true
        await press(pilot, "a")
        await pilot.press(*"2025-12-29")
        await press(pilot, "enter")
        labels = "\n".join(tree_labels(graph))
        assert f"──listens-on──► {OLD_PORT}" in labels and f"► {NEW_PORT} " not in labels
        assert "as of 2025-12-29" in header(app, "#graph-header")
        await press(pilot, "a")
        await pilot.press(*"not a date")
        await press(pilot, "enter")
        assert any("cannot read 'not a date'" in note.message for note in app.notes)


async def test_an_edge_opens_the_turn_it_came_from(memory_home):
    app = make_app(memory_home)
    async with app.run_test(size=(140, 36)) as pilot:
        await open_memory(pilot)
        graph = app.screen.query_one(GraphExplorer)
        await find(pilot, graph, "webapp", "webapp")
        graph.tree.focus()
        row = next(item for item in graph.tree.rows() if NEW_PORT in graph.tree.label(item.index))
        graph.tree.move_to(row.index)
        await press(pilot, "o")
        await settle(pilot)
        assert app.screen.query_one("#tabs", TabbedContent).active == "sessions"
        replay = app.screen.query_one(ReplayPane)
        assert replay.session_id == "fix-login" and replay.turn.number == 2


async def test_core_preview_budget_lines_and_pointer(memory_home):
    app = make_app(memory_home)
    size = core_path(memory_home.memory_dir).stat().st_size
    webapp = next(p.id for p in memory_home.projects.list_projects() if p.name == "webapp")
    async with app.run_test(size=(140, 36)) as pilot:
        await open_memory(pilot, "c")
        core = app.screen.query_one(CoreView)
        # a first look opens on a project's brief, the global core.md two files back
        brief = core_path(memory_home.memory_dir, webapp).stat().st_size
        assert header(app, "#core-header").startswith(f"webapp · core.md · {brief:,} / 2,048 B")
        assert "[Project · webapp]" in lines_text(core.lines)
        await press(pilot, "left_square_bracket", "left_square_bracket")
        assert f"{size:,} / 2,048 B" in header(app, "#core-header")
        text = lines_text(core.lines)
        assert "[Timeline · recent]" in text and "↪ session:docs" in text
        assert "[bold red]pwned[/] title" in text  # untrusted text, as typed
        # enter on the webapp fact opens the turn its record came from
        core.lines.focus()
        items = [line for line in core.lines.lines if "listens-on" in line.text]
        core.lines.move_to(items[0].item)
        await press(pilot, "enter")
        await settle(pilot)
        replay = app.screen.query_one(ReplayPane)
        assert replay.session_id == "fix-login" and replay.turn.number == 2
        # the project files are one key away
        await press(pilot, "3", "c", "right_square_bracket")
        assert "compiler · core.md" in header(app, "#core-header")


async def test_core_pointer_by_a_short_id_opens_its_session_or_names_the_candidates(memory_home):
    # core.md names a session by a unique prefix of its id (backend/session_pointers)
    path = core_path(memory_home.memory_dir)
    path.write_text(path.read_text().replace("↪ session:fix-login", "↪ session:fix-lo"))
    app = make_app(memory_home)
    async with app.run_test(size=(140, 36)) as pilot:
        await open_memory(pilot, "c")
        await press(pilot, "left_square_bracket", "left_square_bracket")  # the global core.md
        core = app.screen.query_one(CoreView)
        assert "↪ session:fix-lo" in lines_text(core.lines)
        core.lines.focus()
        item = next(line for line in core.lines.lines if "listens-on" in line.text).item
        core.lines.move_to(item)
        await press(pilot, "enter")
        await settle(pilot)
        replay = app.screen.query_one(ReplayPane)
        assert replay.session_id == "fix-login" and replay.turn.number == 2
        # a later session shares the prefix: the jump names both instead of guessing
        memory_home.sessions.append_message("fix-logout", "user", "Log out", created_at=1.0e9, node_id="x1")
        memory_home.sessions.commit_turn("fix-logout")
        await press(pilot, "3", "c")
        core.lines.focus()
        core.lines.move_to(item)
        await press(pilot, "enter")
        await settle(pilot)
        await wait_until(pilot, lambda: any("fix-logout" in n.message for n in app.notes), "the candidates named")
        note = next(n for n in app.notes if "fix-logout" in n.message)
        assert "fix-login" in note.message and note.severity == "error"


async def test_core_preview_follows_the_file(memory_home):
    app = make_app(memory_home, watch=True)
    path = core_path(memory_home.memory_dir)
    async with app.run_test(size=(140, 36)) as pilot:
        await open_memory(pilot, "c")
        await press(pilot, "left_square_bracket", "left_square_bracket")  # the global core.md
        core = app.screen.query_one(CoreView)
        await wait_until(pilot, lambda: "↪ session:docs" in lines_text(core.lines), "core.md shown")
        text = path.read_text().replace("Write the README install section.", "Wrote the install docs")
        path.write_text(text)
        await wait_until(pilot, lambda: "Wrote the install docs" in lines_text(core.lines), "the new core.md")
        assert "updated" in header(app, "#core-header")


async def test_the_tab_follows_a_distillation_by_another_process(memory_home):
    """`opmem distill`, `opmem watch` or an agent's hook distils in another process: it appends
    to the memory's logs (core.md may stay as it was). The timeline and the graph's list of
    entities show the new records without a key pressed."""
    from opmem_tui.backend.distill.pipeline import RunOptions, run

    from .sample_store import fresh_home

    app = make_app(memory_home, watch=True)
    async with app.run_test(size=(140, 36)) as pilot:
        await open_memory(pilot, "t")
        timeline = app.screen.query_one(TimelineView)
        graph = app.screen.query_one(GraphExplorer)
        await wait_until(pilot, lambda: bool(timeline.events), "the timeline shown")
        assert not any("Zorro" in e.summary for e in timeline.events)
        other = fresh_home(memory_home.path)  # another process's view of the same store
        other.sessions.append_message("pets", "user", "We adopted a dog named Zorro last week.")
        other.sessions.append_message("pets", "assistant", "Congratulations!")
        run(other, RunOptions(sessions=("pets",), project=False))
        await wait_until(pilot, lambda: any("Zorro" in e.summary for e in timeline.events), "the new event")
        await wait_until(pilot, lambda: "Zorro" in [m.name for m in graph._matches], "the new entity among the recent")


async def test_lines_the_memory_could_not_read_are_named_once(memory_home):
    """A bad line in a memory log (a write cut short, a hand edit) is skipped by the reader, and
    the app says so: which file, which line, what is wrong; once, however often the memory is
    re-read. The file stays as it was."""
    from .conftest import notes
    from .sample_store import fresh_home

    edges = memory_home.memory_dir / "graph" / "edges.jsonl"
    with edges.open("a") as handle:
        handle.write('{"id": "broken", "from": \n')
    before = edges.read_bytes()
    bad_line = before.count(b"\n")
    app = make_app(fresh_home(memory_home.path))  # the app opens the store as it now is
    async with app.run_test(size=(140, 36)) as pilot:
        await open_memory(pilot)
        graph = app.screen.query_one(GraphExplorer)
        await wait_until(pilot, lambda: graph.center is not None, "the graph shown all the same")
        await wait_until(pilot, lambda: any("edges.jsonl" in n for n in notes(app)), "the bad line named")
        told = [note for note in app.notes if "edges.jsonl" in note.message]
        assert len(told) == 1 and told[0].severity == "warning"
        assert f"memory/graph/edges.jsonl:{bad_line}: invalid JSON" in told[0].message
        assert str(memory_home.path) not in told[0].message  # the store's own relative path
        app.screen.query_one("MemoryTab").memory_changed()  # as after a distillation
        await settle(pilot)
        assert len([note for note in app.notes if "edges.jsonl" in note.message]) == 1
    assert edges.read_bytes() == before


async def test_the_entity_list_follows_a_theme_switch(memory_home):
    """The entity list colours parts of its rows from the theme (the name an entity was found by,
    "aka ..."); a theme picked from the palette recolours them at once, as the tree, the
    timeline and the other tabs do."""
    from opmem_tui.widgets.styling import theme_style

    app = make_app(memory_home)
    async with app.run_test(size=(140, 36)) as pilot:
        graph = await find_the_merged_name(app, pilot)
        await wait_until(pilot, lambda: graph.matches_query == MERGED_NAME, "matches for the merged name")

        def aka_style():
            prompt = graph.matches.get_option_at_index(0).prompt
            return next(span.style for span in prompt.spans if prompt.plain[span.start :].startswith("  aka"))

        dark = theme_style(graph, "secondary")
        assert aka_style() == dark
        app.theme = "opmem-light"
        await settle(pilot)
        light = theme_style(graph, "secondary")
        assert light != dark
        assert aka_style() == light


async def test_escape_leaves_the_entity_finder_for_the_graph(memory_home):
    """In the finder every letter is text; escape goes back to the tree, where g/c/t, +, s act."""
    app = make_app(memory_home)
    async with app.run_test(size=(140, 36)) as pilot:
        await open_memory(pilot)
        graph = app.screen.query_one(GraphExplorer)
        await wait_until(pilot, lambda: graph.center is not None, "the graph shown")
        await press(pilot, "slash")
        assert app.focused is graph.finder
        await press(pilot, "escape")
        assert app.focused is graph.tree
        await press(pilot, "c")
        assert app.screen.query_one("#memory-views", TabbedContent).active == "memory-core"


async def test_timeline_by_month_filters_and_jump(memory_home):
    app = make_app(memory_home)
    async with app.run_test(size=(140, 36)) as pilot:
        await open_memory(pilot, "t")
        timeline = app.screen.query_one(TimelineView)
        text = lines_text(timeline.lines)
        assert "December 2025 · " in text and "Discussed: Refactor the tokenizer" in text
        total = len(timeline.events)
        # entity filter: only the events that mention it
        await press(pilot, "f")
        await pilot.press(*"printf")
        await press(pilot, "enter")
        assert 0 < len(timeline.events) < total
        assert all("printf" in e.summary for e in timeline.events)
        # an unknown entity says so, with close names
        await press(pilot, "f", "ctrl+a")  # select all, then type over it
        timeline.query_one("#timeline-entity").value = ""
        await pilot.press(*"middlewere.py")
        await press(pilot, "enter")
        assert "no entity 'middlewere.py'" in lines_text(timeline.lines)
        # clear the filter, then enter on the newest event opens its turn
        timeline.query_one("#timeline-entity").value = ""
        await press(pilot, "f", "enter")
        timeline.lines.focus()
        event = timeline.events[0]
        await press(pilot, "enter")
        await settle(pilot)
        replay = app.screen.query_one(ReplayPane)
        assert replay.session_id == event.provenance.session_id
        assert replay.turn.number == event.provenance.turn


async def test_timeline_kind_filter(memory_home):
    app = make_app(memory_home)
    async with app.run_test(size=(140, 36)) as pilot:
        await open_memory(pilot, "t")
        timeline = app.screen.query_one(TimelineView)
        from textual.widgets import Select

        select = timeline.query_one("#timeline-kind", Select)
        select.value = "decision"
        await settle(pilot)
        assert timeline.kinds == ("decision",)
        assert all(e.kind == "decision" for e in timeline.events)
        if not timeline.events:
            assert "No events for decision." in lines_text(timeline.lines)


async def test_a_project_known_only_from_sessions_is_named_in_the_core_view(sample_home):
    from opmem_tui.backend.distill.pipeline import RunOptions, run

    meta = {"cwd": "/nowhere-on-this-machine/garden"}
    user = sample_home.sessions.append_message("away", "user", "The planner is in Rust.", session_meta=meta)
    reply = sample_home.sessions.append_message("away", "assistant", "", parent_id=user.id)
    sample_home.sessions.append_message(
        "away", "tool", "ok", parent_id=reply.id, called_by=reply.id, name="Bash", input={"command": "cargo build"}
    )
    sample_home.sessions.commit_turn("away")
    run(sample_home, RunOptions())
    app = make_app(sample_home)
    async with app.run_test(size=(140, 36)) as pilot:
        await open_memory(pilot, "c")
        core = app.screen.query_one(CoreView)
        labels = [core._label(f) for f in core.files]
        assert "garden (not on this machine) · core.md" in labels
        for _ in labels:
            if "garden" in header(app, "#core-header"):
                break
            await press(pilot, "right_square_bracket")
        assert "garden (not on this machine) · core.md" in header(app, "#core-header")
        assert "Rust" in lines_text(core.lines)
