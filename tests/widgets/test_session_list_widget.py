"""The session list widget alone, fed hand-built SessionMeta records."""

from __future__ import annotations

from textual.app import App, ComposeResult

from opmem_tui.backend.model import SessionListing, SessionMeta
from opmem_tui.widgets.messages import SessionHighlighted
from opmem_tui.widgets.session_list import SessionList
from opmem_tui.widgets.session_order import fuzzy_filter
from opmem_tui.widgets.session_table import age_label

NOW = 1_767_225_600.0


def metas(count: int) -> tuple[SessionMeta, ...]:
    return tuple(
        SessionMeta(
            id=f"s{i:05d}",
            title=f"session {i} about {('parser', 'auth', 'tui')[i % 3]}",
            source="codex",
            created_at=NOW - i * 60,
            updated_at=NOW - i * 60,
            turn_count=i % 7,
        )
        for i in range(count)
    )


class ListApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str | None] = []

    def compose(self) -> ComposeResult:
        yield SessionList(now=lambda: NOW)

    def on_session_highlighted(self, message: SessionHighlighted) -> None:
        self.seen.append(message.session_id)


def test_age_labels():
    assert [age_label(NOW - s, NOW) for s in (5, 120, 7200, 3 * 86400, 15 * 86400, 60 * 86400, 800 * 86400)] == [
        "now",
        "2m",
        "2h",
        "3d",
        "2w",
        "2mo",
        "2y",
    ]
    assert age_label(0, NOW) == "?"


def test_fuzzy_filter_every_word_must_match():
    hay = ["fix login bug claude", "refactor parser gemini", "login page styles codex"]
    assert fuzzy_filter("login", hay) == [0, 2] or fuzzy_filter("login", hay) == [2, 0]
    assert fuzzy_filter("login codex", hay) == [2]
    assert fuzzy_filter("prser", hay) == [1]  # a typo still matches
    assert fuzzy_filter("zz", hay) == []
    assert fuzzy_filter("  ", hay) == [0, 1, 2]


async def test_ten_thousand_rows_draw_only_visible_rows():
    # How long it takes is measured in bench/tui_first_paint.py, not asserted here.
    app = ListApp()
    async with app.run_test(size=(100, 30)) as pilot:
        widget = app.query_one(SessionList)
        widget.set_listing(SessionListing(sessions=metas(10_000), skipped=2))
        await pilot.pause()
        table = widget.table
        assert len(table.rows) == 10_000 and table.virtual_size.height == 10_000
        assert len(table._cache) <= table.size.height + 2  # strips exist only for drawn rows
        assert "10000 sessions, 2 skipped" in str(widget.query_one("#session-status").render())
        table.focus()
        await pilot.press("end")
        assert table.current.id == "s09999" and app.seen[-1] == "s09999"
        assert table.scroll_y == table.max_scroll_y


async def test_refresh_keeps_cursor_on_the_same_session():
    app = ListApp()
    async with app.run_test(size=(100, 30)) as pilot:
        widget = app.query_one(SessionList)
        widget.set_listing(SessionListing(sessions=metas(50)))
        widget.table.focus()
        await pilot.press("down", "down", "down")
        assert widget.current.id == "s00003"
        newer = SessionMeta(id="zz-new", title="brand new", created_at=NOW, updated_at=NOW + 10)
        widget.set_listing(SessionListing(sessions=(newer, *metas(50))))
        await pilot.pause()
        assert widget.current.id == "s00003" and widget.table.cursor == 4


def test_fuzzy_filter_short_words_match_as_typed():
    hay = ["make my zsh prompt show the branch", "cart totals shop-api codex", "explain walrus operator"]
    assert fuzzy_filter("shop", hay) == [1]  # not "show", not "s op(erator)"
    assert fuzzy_filter("opertor", hay) == [2]  # one typo in a longer word is fine
    assert fuzzy_filter("codex", ["fix claude-code", "cart codex"]) == [1]


def test_columns_keep_the_project_and_drop_the_source_first():
    from opmem_tui.widgets.session_table import SessionTable

    table = SessionTable()
    table.set_column_widths(11, 11)
    names = lambda width: [c.name for c in table.columns(width)]  # noqa: E731
    assert names(51) == ["title", "source", "project", "age", "turns"]
    assert names(50) == names(39) == ["title", "project", "age", "turns"]
    assert names(38) == ["title", "age", "turns"]
    wide = table.columns(70)
    assert sum(c.width + 1 for c in wide) + 1 == 70  # the row fills the width exactly
    table.set_column_widths(11, 0)  # nothing bound: no project column at all
    assert names(70) == ["title", "source", "age", "turns"]


async def test_project_column_shows_names_given_with_the_listing():
    app = ListApp()
    async with app.run_test(size=(100, 30)) as pilot:
        widget = app.query_one(SessionList)
        rows = (
            SessionMeta(id="a", title="bound", source="codex", project_id="p-1a2b", updated_at=NOW),
            SessionMeta(id="b", title="unknown project", source="codex", project_id="gone-id", updated_at=NOW - 1),
        )
        widget.set_listing(SessionListing(sessions=rows), {"p-1a2b": "webapp"})
        await pilot.pause()
        assert "codex  webapp" in widget.table.render_line(0).text
        assert "gone-id" in widget.table.render_line(1).text  # an id the registry lacks shows as is
