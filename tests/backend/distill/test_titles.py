"""LLM titles through the store's title hook, against a real HTTP server speaking the chat API."""

from __future__ import annotations

import threading

import pytest

from opmem_tui.backend.config import LlmSettings
from opmem_tui.backend.distill.titles import MARK, TitleMaker, clean_title, install_title_hook
from opmem_tui.backend.home import Home

from .llm_server import ChatServer, Reply


@pytest.fixture
def server():
    with ChatServer() as srv:
        yield srv


def settings(server: ChatServer) -> LlmSettings:
    return LlmSettings(base_url=server.base_url, model="m", max_retries=0, timeout_s=5.0)


def one_turn(home: Home, sid: str = "s1", prompt: str = "please fix the flaky lock test in the store") -> None:
    user = home.sessions.append_message(sid, "user", prompt, created_at=1_700_000_000.0)
    home.sessions.append_message(sid, "assistant", "Done: the lock is taken before the read.", parent_id=user.id)
    home.sessions.commit_turn(sid)


@pytest.mark.parametrize(
    "reply, title",
    [
        ('Title: "Fix Flaky Store Lock Test"', "Fix Flaky Store Lock Test"),
        ("**Title:** Fixing the lock test.\nMore text", "Fixing the lock test"),
        ("'Debugging Phoenix startup'", "Debugging Phoenix startup"),
        ("word " * 40, ("word " * 40)[:80].rsplit(" ", 1)[0]),
    ],
)
def test_clean_title(reply: str, title: str):
    assert clean_title(reply) == title
    assert len(clean_title(reply)) <= 80


def test_title_is_made_once_in_the_background(tmp_path, server: ChatServer):
    home = Home(tmp_path / "home")
    server.default = Reply('Title: "Fix flaky store lock test"')
    maker = install_title_hook(home.sessions, settings(server))
    assert maker is not None
    one_turn(home)
    maker.wait(10)
    meta = home.sessions.get_meta("s1")
    assert (meta.title, meta.title_source) == ("Fix flaky store lock test", "llm")
    assert meta.extra[MARK]["ok"] is True
    request = server.requests[0]
    assert request["temperature"] == 0.3 and request["max_tokens"] == 50
    assert "flaky lock test" in request["messages"][1]["content"]
    home.sessions.append_message("s1", "user", "and the second one", created_at=1_700_000_100.0)
    home.sessions.commit_turn("s1")
    maker.wait(10)
    assert len(server.requests) == 1  # marked: never asked again
    maker.close()


def test_failed_call_keeps_the_excerpt_and_is_not_retried(tmp_path, server: ChatServer):
    home = Home(tmp_path / "home")
    server.default = Reply(status=500, body="{}")
    maker = install_title_hook(home.sessions, settings(server))
    one_turn(home)
    maker.wait(10)
    meta = home.sessions.get_meta("s1")
    assert meta.title_source == "excerpt" and meta.title.startswith("please fix the flaky lock test")
    assert meta.extra[MARK]["ok"] is False
    home.sessions.append_message("s1", "user", "again", created_at=1_700_000_100.0)
    home.sessions.commit_turn("s1")
    maker.wait(10)
    assert len(server.requests) == 1
    maker.close()


def test_a_user_title_is_never_replaced(tmp_path, server: ChatServer):
    home = Home(tmp_path / "home")
    server.default = Reply("Some LLM title")
    maker = TitleMaker(home.sessions, settings(server))
    one_turn(home)  # no hook installed yet: nothing asked
    home.sessions.rename_session("s1", "My own name")
    assert maker.hook(home.sessions.get_meta("s1"), home.sessions.get_branch("s1")) is None
    maker.wait(10)
    assert not server.requests
    home.sessions.title_hook = maker.hook
    # renamed while the call is in flight: the answer is dropped
    gate = threading.Event()
    server.default = Reply("Some LLM title", gate=gate)
    server.arrived.clear()
    one_turn(home, "s2")  # the commit calls the hook
    assert server.arrived.wait(10)
    home.sessions.rename_session("s2", "Mine too")
    gate.set()
    maker.wait(10)
    meta = home.sessions.get_meta("s2")
    assert (meta.title, meta.title_source) == ("Mine too", "user")
    maker.close()


def test_no_llm_no_hook(tmp_path):
    home = Home(tmp_path / "home")
    assert install_title_hook(home.sessions, LlmSettings()) is None
    assert install_title_hook(home.sessions, LlmSettings(base_url="http://127.0.0.1:9/v1"), enabled=False) is None
    assert home.sessions.title_hook is None
