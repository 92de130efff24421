"""Secrets on screen: masked everywhere the TUI shows session text, revealed (`v`) for the message
under the cursor only, and masked again once the cursor moves on. The store (secret_store.py)
holds secrets in the title, user text, assistant text, thinking, tool input, tool output, a file
edit and a branch reply; every check reads the real screen (the exported SVG's text)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from opmem_tui.keymap import default_bindings
from opmem_tui.widgets.replay_view import ReplayPane
from opmem_tui.widgets.search_hits import SearchHitLines

from .conftest import make_app, notes, press, settle, wait_until
from .sample_store import fresh_home
from .secret_store import AWS, GIT_HASH, GITHUB, OPENAI, SECRETS, SID, UUID, build_secret_store

SIZE = (160, 48)  # wide: no secret is wrapped across lines (a revealed value reads whole)


def screen_text(app) -> str:
    """What the terminal shows, as text: the screen rendered as export_screenshot renders it
    (every screen of the stack, a dialog over the panes), recorded as text not SVG."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True, record=True)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text()


def shown(app) -> set[str]:
    text = screen_text(app)
    return {secret for secret in SECRETS if secret in text}


@pytest.fixture
def secret_home():
    path = Path.home() / "store"
    build_secret_store(path)
    return fresh_home(path)


def hit_texts(app) -> list[str]:
    views = app.screen.query(SearchHitLines)
    return [line.text for line in views.first().lines if line.style == "snippet"] if views else []


def pane(app) -> ReplayPane:
    return app.screen.query_one(ReplayPane)


async def open_turn_one(pilot) -> None:
    """The session opens on its last turn: go to turn 1, focus the replay (cursor: the user message)."""
    await settle(pilot)
    await press(pilot, "left", "enter")
    assert pane(pilot.app).turn.number == 1
    assert pane(pilot.app).selected_node.role == "user"


async def test_the_replay_masks_every_secret_and_keeps_ordinary_ids(secret_home):
    app = make_app(secret_home)
    async with app.run_test(size=SIZE) as pilot:
        await open_turn_one(pilot)
        text = screen_text(app)
        assert shown(app) == set()
        assert "Push with [secret:github-token#" in text  # the title in the list and the header
        assert "my token [secret:github-token#" in text
        assert "AWS_ACCESS_KEY_ID=[secret:aws-access-key#" in text
        assert "Bearer [secret:openai-key#" in text  # a tool call's one-line arguments
        assert GIT_HASH in text and UUID in text  # ids are not secrets
        # Opened, the tool call shows its arguments and output; thinking too: all masked.
        await press(pilot, "j", "t", "j", "enter", "j", "enter")
        text = screen_text(app)
        assert shown(app) == set()
        assert "export GITHUB_TOKEN=[secret:" in text
        assert "The access key [secret:aws-access-key#" in text
        assert "+GITHUB_TOKEN=[secret:github-token#" in text  # the file edit's diff
        assert f"request id {UUID}" in text
        await press(pilot, "J")  # the edit's arguments as JSON
        assert shown(app) == set()
        assert '"new": "GITHUB_TOKEN=[secret:github-token#' in screen_text(app)


async def test_v_reveals_the_message_under_the_cursor_until_it_moves(secret_home):
    app = make_app(secret_home)
    async with app.run_test(size=SIZE) as pilot:
        await open_turn_one(pilot)
        replay = pane(app)
        await press(pilot, "y")  # copies what is shown
        assert GITHUB not in app.clipboard and "[secret:github-token#" in app.clipboard
        assert notes(app)[-1].endswith("secrets masked: v reveals them)")
        await press(pilot, "v")
        assert shown(app) == {GITHUB}  # the user message's token, nothing of the others
        await press(pilot, "y")
        assert GITHUB in app.clipboard
        assert replay.revealed == replay.selected_node.id
        assert any("Secrets shown for this user message" in n for n in notes(app))
        assert GIT_HASH in screen_text(app)

        await press(pilot, "j")  # the assistant's reply: the user message is masked again
        assert replay.revealed is None
        assert shown(app) == set()
        await press(pilot, "t", "v")  # its thinking and text are one message
        assert shown(app) == {AWS}
        text = screen_text(app)
        assert f"AWS_ACCESS_KEY_ID={AWS}" in text and f"The access key {AWS}" in text

        await press(pilot, "j", "enter")  # the bash call, opened: masked until revealed
        assert shown(app) == set()
        await press(pilot, "v")
        assert shown(app) == {OPENAI, GITHUB}  # its arguments and its output
        await press(pilot, "k")  # back up: moving either way masks it
        assert shown(app) == set()

        await press(pilot, "j", "v", "v")  # v again masks it at once
        assert shown(app) == set()
        assert notes(app)[-1] == "Secrets masked again."


async def test_a_revealed_message_is_masked_on_another_turn_or_session_change(secret_home):
    app = make_app(secret_home)
    async with app.run_test(size=SIZE) as pilot:
        await open_turn_one(pilot)
        await press(pilot, "v")
        assert shown(app) == {GITHUB}
        await press(pilot, "right")  # turn 2
        assert shown(app) == set()
        await press(pilot, "v")  # turn 2 has no secret: said so
        assert notes(app)[-1] == "No secret in this message: nothing is masked."
        await press(pilot, "left")  # back on turn 1: masked, the cursor on its first message
        assert pane(app).revealed is None
        assert shown(app) == set()

        await press(pilot, "v")
        assert shown(app) == {GITHUB}
        replay = pane(app)
        replay.show_empty("gone")  # what the tab does when the session is deleted
        await settle(pilot)
        assert replay.revealed is None and not replay.originals


async def test_a_reload_of_the_open_session_keeps_the_reveal_and_masks_new_messages(secret_home):
    """The session grows while a message is revealed (an agent still writing): the reveal stays
    on that message, the new message comes masked, and the old ones are not detected again."""
    app = make_app(secret_home, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await open_turn_one(pilot)
        await press(pilot, "v")
        masks = app.data.masks
        before = masks.detections
        writer = fresh_home(secret_home.path).sessions
        head = writer.get_meta(SID).head_id
        writer.append_message(SID, "user", f"One more: {OPENAI}", parent_id=head, node_id="leaky-9001")
        writer.commit_turn(SID)
        await wait_until(pilot, lambda: pane(app).total == 3, "the new turn arrives")
        await settle(pilot)
        replay = pane(app)
        assert replay.turn.number == 1 and replay.revealed == replay.selected_node.id
        assert shown(app) == {GITHUB}
        assert masks.detections - before <= 2  # the new node (and the changed head's), not the session
        await press(pilot, "G")
        assert shown(app) == set()
        assert "One more: [secret:openai-key#" in screen_text(app)


async def test_history_branch_picker_and_search_show_no_value(secret_home):
    app = make_app(secret_home)
    async with app.run_test(size=SIZE) as pilot:
        await open_turn_one(pilot)
        await press(pilot, "H")  # the history: commit summaries are the user message's first 60 chars
        text = screen_text(app)
        assert "History of “Push with [secret:github-token#" in text
        assert "Push the release with my token [secret:github-token#" in text
        assert not any(fragment in text for fragment in (GITHUB[:12], AWS[:8]))  # not even cut ones
        await press(pilot, "escape", "b")  # turn 1's branches: the retry's reply holds a key
        text = screen_text(app)
        assert "exported the key [secret:aws-access-key#" in text
        assert AWS not in text and shown(app) == set()
        await press(pilot, "escape", "ctrl+f")
        await pilot.press(*"release token")
        await wait_until(pilot, lambda: len(hit_texts(app)) >= 2, "the search hits")
        assert any("my token [secret:github-token#" in line for line in hit_texts(app))
        text = screen_text(app)
        assert "my token [secret:github-token#" in text
        assert shown(app) == set()


async def test_the_reveal_key_is_listed_and_remappable(secret_home):
    assert default_bindings()["replay.reveal"].default == "v"
    secret_home.config.set("keys", {"replay.reveal": "ctrl+r"})
    secret_home.config.save()
    app = make_app(fresh_home(secret_home.path))
    async with app.run_test(size=SIZE) as pilot:
        await open_turn_one(pilot)
        await press(pilot, "v")
        assert shown(app) == set()  # v is no longer the key
        await press(pilot, "ctrl+r")
        assert shown(app) == {GITHUB}
        await press(pilot, "question_mark")
        keys = {info.id: info.keys for info in app.screen.keys}
        assert keys["replay.reveal"] == "ctrl+r"
