"""Live refresh from another writer; keymap overrides and the theme from config.toml."""

from __future__ import annotations

from opmem_tui.widgets.replay_view import ReplayPane
from opmem_tui.widgets.session_list import SessionList

from .conftest import NOW, make_app, notes, press, settle, wait_until
from .sample_store import fresh_home


async def test_list_and_open_replay_follow_another_writer(sample_path):
    app = make_app(fresh_home(sample_path), watch=True, poll_interval=0)  # file-change notifications only
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "down", "down", "down")  # fix-login, on its last turn (3)
        table = app.screen.query_one(SessionList).table
        replay = app.screen.query_one(ReplayPane)
        assert table.current.id == "fix-login"
        await press(pilot, "G")  # on the last turn: the view follows new turns

        other = fresh_home(sample_path).sessions  # another process's view of the store
        other.append_message(
            "brand-new",
            "user",
            "A session written elsewhere",
            created_at=NOW - 10,
            session_meta={"source": "codex", "created_at": NOW - 10},
        )
        other.commit_turn("brand-new")
        await wait_until(pilot, lambda: any(m.id == "brand-new" for m in table.rows), "the new session listed")
        assert table.current.id == "fix-login"  # the cursor stayed on its session
        assert table.rows[0].id == "brand-new"

        other.append_message("fix-login", "user", "One more thing: update the changelog.", created_at=NOW - 5)
        other.append_message("fix-login", "assistant", "Changelog updated.", created_at=NOW - 4)
        other.commit_turn("fix-login")
        await wait_until(pilot, lambda: len(replay.turns) == 4, "the new turn shown")
        assert replay.index == 3
        assert "Changelog updated." in "\n".join(line.text for line in replay.view.lines)
        assert table.current.id == "fix-login"


async def test_deleted_open_session_empties_the_replay(sample_path):
    app = make_app(fresh_home(sample_path), watch=True, poll_interval=0)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        replay = app.screen.query_one(ReplayPane)
        assert replay.session_id == "docs"
        fresh_home(sample_path).sessions.delete_session("docs")
        await wait_until(pilot, lambda: replay.session_id != "docs", "the deleted session closed")
        assert replay.session_id in (None, "many-tools")


async def test_without_change_notifications_the_list_is_polled(sample_path, monkeypatch):
    import opmem_tui.tabs.sessions

    def no_notifications(*paths, **options):
        raise OSError("OS file watch limit reached")

    monkeypatch.setattr(opmem_tui.tabs.sessions, "awatch", no_notifications)
    app = make_app(fresh_home(sample_path), watch=True, poll_interval=0.1)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(SessionList).table
        other = fresh_home(sample_path).sessions
        other.append_message("polled", "user", "Seen by the poll", created_at=NOW - 10)
        other.commit_turn("polled")
        await wait_until(pilot, lambda: any(m.id == "polled" for m in table.rows), "the new session listed")


async def test_keymap_override_from_config(sample_path):
    home = fresh_home(sample_path)
    home.config.set("keys", {"replay.next_turn": "n", "no.such.binding": "x", "replay.prev_turn": 5})
    home.config.save()
    app = make_app(fresh_home(sample_path))
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        await settle(pilot)
        await press(pilot, "down", "down", "down", "g")
        replay = app.screen.query_one(ReplayPane)
        await press(pilot, "right")  # no longer bound
        assert replay.index == 0
        await press(pilot, "n")
        assert replay.index == 1
        await press(pilot, "left")  # the bad override was refused, the default stays
        assert replay.index == 0
        problems = notes(app)
        assert any("'no.such.binding'" in m for m in problems)
        assert any("'replay.prev_turn'" in m for m in problems)
        await press(pilot, "question_mark")
        keys = {info.id: info.keys for info in app.screen.keys}
        assert keys["replay.next_turn"] == "n"


async def test_theme_from_config_and_unknown_theme(sample_path):
    home = fresh_home(sample_path)
    home.config.set("ui.theme", "opmem-light")
    home.config.save()
    app = make_app(fresh_home(sample_path))
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        assert app.theme == "opmem-light"
    home.config.set("ui.theme", "no-such-theme")
    home.config.save()
    app = make_app(fresh_home(sample_path))
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        await settle(pilot)
        assert app.theme == "opmem-dark"
        assert any("no-such-theme" in n.message for n in app.notes)


async def test_r_rescans_meta_edited_outside_opmem(sample_path):
    import os

    home = fresh_home(sample_path)
    app = make_app(home)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(SessionList).table
        before = len(table.rows)
        meta = home.sessions_dir / "docs" / "meta.json"
        st = meta.stat()
        meta.write_text("{ not json")
        os.utime(meta, ns=(st.st_atime_ns, st.st_mtime_ns))  # no timestamp tells the cache
        await press(pilot, "r")
        await wait_until(pilot, lambda: len(table.rows) == before - 1, "the broken session dropped")
        assert all(row.id != "docs" for row in table.rows)
