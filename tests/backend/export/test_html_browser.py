"""The HTML export in a real browser: headless Chromium (Debian's package) loads the file with
the network off, and a script drives the page as a person would.

Skipped, saying why, where no chromium is installed (`.ci/run` installs it).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from opmem_tui.backend.export import export_session, write_export
from opmem_tui.backend.home import Home
from opmem_tui.backend.store.sessions import SessionStore
from tests.browser import Browser, Page, chromium, chromium_path

from .sample import HOSTILE, SECRET, T0, hostile_session

pytestmark = pytest.mark.skipif(
    chromium_path() is None,
    reason="no chromium on PATH: the HTML export's browser tests need it (apt-get install chromium)",
)


@pytest.fixture(scope="module")
def browser() -> Browser:
    with chromium() as running:
        yield running


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return Home(tmp_path / "home", durable=False).sessions


def _open(browser: Browser, store: SessionStore, sid: str, path: Path, **options) -> Page:
    write_export(export_session(store, sid, "html", **options), path)
    return browser.open(path.as_uri())


def counter(page: Page) -> str:
    return page.evaluate("document.getElementById('counter').textContent")


def test_no_request_but_the_document_and_keys_step_the_turns(browser: Browser, store: SessionStore, tmp_path: Path):
    sid = hostile_session(store)
    path = tmp_path / "replay.html"
    page = _open(browser, store, sid, path)
    assert counter(page) == "turn 1 / 3"
    for key, shown in (
        ("ArrowRight", "turn 2 / 3"),
        ("ArrowRight", "turn 3 / 3"),
        ("ArrowRight", "turn 3 / 3"),  # the last turn stays the last
        ("k", "turn 2 / 3"),
        ("ArrowLeft", "turn 1 / 3"),
        ("ArrowLeft", "turn 1 / 3"),
        ("j", "turn 2 / 3"),
    ):
        page.press(key)
        assert counter(page) == shown, key
    # turn 2 says another branch forks in it, and the sidebar lists both branches
    assert page.evaluate("document.querySelector('.forks').textContent").startswith("other branches fork")
    assert page.evaluate("[...document.querySelectorAll('#branch-list .bname')].map(e => e.textContent)") == [
        b.name for b in store.branches(sid)
    ]
    page.press("ArrowRight")
    page.evaluate("document.querySelectorAll('details.tool').forEach(d => d.open = true)")
    assert page.requests == [path.as_uri()]  # the document itself, nothing else, ever
    assert page.console_errors == [] and page.dialogs == []


def _drawn(page: Page, expression: str, tries: int = 200) -> list:
    """What `expression` lists once the page has drawn it: an opened tool call draws its diff in
    a later frame (the toggle event), which a loaded machine may not have run yet."""
    for _ in range(tries):
        found = page.evaluate(expression)
        if found:
            return found
        time.sleep(0.05)
    return page.evaluate(expression)


def test_session_markup_is_shown_as_text(browser: Browser, store: SessionStore, tmp_path: Path):
    sid = hostile_session(store)
    page = _open(browser, store, sid, tmp_path / "hostile.html")
    page.press("o")  # open every tool call, which draws their arguments and output
    page.press("t")  # and the thinking
    text = page.evaluate("document.getElementById('turn').textContent")
    for hostile in HOSTILE[:4]:
        assert hostile in text, hostile
    assert SECRET not in text and "[secret:github-token#" in text
    # none of it became an element: no img, no script beyond ours, no textarea, no b
    assert page.evaluate("document.images.length") == 0
    assert page.evaluate("document.scripts.length") == 2
    assert page.evaluate("document.querySelectorAll('textarea, b, img, iframe').length") == 0
    assert page.evaluate("document.querySelectorAll('details.tool[open]').length") == 2
    assert page.evaluate("getComputedStyle(document.querySelector('details.thinking')).display") == "block"
    diff = _drawn(page, "[...document.querySelectorAll('.dl')].map(e => e.className + ' ' + e.textContent)")
    assert "dl del - x = 1" in diff and "dl add + x = 2" in diff
    assert page.dialogs == [] and page.console_errors == []
    assert page.evaluate("window.__pwned === undefined")
    screenshot = page.screenshot(tmp_path / "hostile.png")
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_5_mb_turn_draws_only_what_is_shown(browser: Browser, store: SessionStore, tmp_path: Path):
    """A turn with a 5 MB tool output: the page draws its summary; unfolded, the first lines;
    "show more" a step; "show all" all of it."""
    store.append_message("big", "user", "dump the log", created_at=T0)
    reply = store.append_message("big", "assistant", "Here it is.", created_at=T0 + 1)
    line = "2026-01-01 12:00:00 INFO worker processed item with a fairly long line of log text\n"
    output = line * (5_000_000 // len(line))
    store.append_message(
        "big", "tool", output, called_by=reply.id, name="Bash", input={"command": "cat log"}, created_at=T0 + 2
    )
    store.append_message("big", "assistant", "x" * 1_000_000, created_at=T0 + 3)  # a 1 MB reply, folded too
    store.commit_turn("big")
    # raw: this test is about drawing (the secret detector's time on 5 MB is bench/export_html.py's)
    page = _open(browser, store, "big", tmp_path / "big.html", raw=True)
    shown = "document.getElementById('turn').textContent.length"
    assert page.evaluate(shown) < 10_000  # the tool call folded, the reply cut to its first lines
    page.evaluate("document.querySelector('details.tool').open = true")
    assert 3_000 < page.evaluate(shown) < 20_000
    assert page.evaluate("document.querySelector('pre.output').textContent.length") <= 3_000
    page.evaluate("document.querySelector('details.tool .more').click()")  # show more
    step = page.evaluate("document.querySelector('pre.output').textContent.length")
    assert 3_000 < step <= 43_000
    page.evaluate("document.querySelectorAll('details.tool .more')[1].click()")  # show all
    assert page.evaluate("document.querySelector('pre.output').textContent") == output
    assert page.evaluate("document.querySelectorAll('details.tool .fold-bar').length") == 0
    assert page.requests == [(tmp_path / "big.html").as_uri()] and page.console_errors == []


def test_a_deep_link_opens_its_turn_and_raw_keeps_secrets(browser: Browser, store: SessionStore, tmp_path: Path):
    sid = hostile_session(store)
    path = tmp_path / "raw.html"
    write_export(export_session(store, sid, "html", raw=True, turns="2..3"), path)
    page = browser.open(path.as_uri() + "#turn-3")
    assert counter(page) == "turn 3 / 3"
    page.press("Home")
    assert counter(page) == "turn 2 / 3"  # the export starts at turn 2
    assert page.evaluate("document.querySelectorAll('#turn-list li').length") == 2
    raw = _open(browser, store, sid, tmp_path / "raw1.html", raw=True)
    raw.press("o")
    assert SECRET in raw.evaluate("document.getElementById('turn').textContent")
