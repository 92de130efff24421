"""LLM titles: after a session's first turn, a 3-7 word title made in the background.

The store calls `TitleMaker.hook` when it commits a turn of a session with no user or LLM
title (SessionStore.title_hook). The hook returns at once (the excerpt title stays), and a
worker thread asks the LLM (temperature 0.3, max_tokens 50), cleans the answer (quotes and a
"Title:" prefix stripped, cut to 80 characters) and writes it unless the user has set a title
meanwhile. The session is marked (`meta.json` key `llm_title`) before the call, so each session
is asked once, whether the call succeeds or fails; with no LLM configured nothing is asked.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from ..config import LlmSettings
from ..llm import ChatClient, LLMError, is_configured
from ..model import Node, OpmemError, SessionMeta
from ..privacy import redact_text
from ..store.sessions import SessionStore

MARK = "llm_title"
MAX_TITLE = 80
PROMPT = (
    "Write a title of 3 to 7 words for the conversation below: what it is about, as a user would "
    "name it. Answer with the title only, no quotes, no punctuation at the end."
)
_PREFIX = re.compile(r"^\s*(?:\*\*)?\s*(?:title|session title)\s*[:\-–]\s*", re.IGNORECASE)
_QUOTES = "\"'`“”‘’«»*_#"


def clean_title(text: str) -> str:
    """The first line of a reply, without quotes, markdown marks or a `Title:` prefix, cut to 80 chars."""
    line = next((ln for ln in text.strip().splitlines() if ln.strip()), "")
    line = _PREFIX.sub("", line).strip().strip(_QUOTES).strip()
    line = _PREFIX.sub("", line).strip().strip(_QUOTES).rstrip(".").strip()
    line = " ".join(line.split())
    if len(line) > MAX_TITLE:
        cut = line[:MAX_TITLE]
        line = cut.rsplit(" ", 1)[0] if " " in cut[MAX_TITLE // 2 :] else cut
    return line


def conversation_excerpt(branch: list[Node], limit: int = 1500) -> str:
    parts = []
    for node in branch:
        if node.role in ("user", "assistant") and not node.is_tool and node.content.strip():
            parts.append(f"{node.role}: {redact_text(node.content).strip()}")
        if sum(len(p) for p in parts) >= limit:
            break
    return "\n".join(parts)[:limit]


class TitleMaker:
    """The store's title hook; one worker thread; safe to call from any thread."""

    def __init__(
        self,
        store: SessionStore,
        settings: LlmSettings,
        *,
        client_factory: Callable[[LlmSettings], ChatClient] = ChatClient,
        excluded: Callable[[SessionMeta], str | None] | None = None,
    ) -> None:
        self.store = store
        # a private or excluded session's text never goes to an LLM (backend/privacy/exclusions.py)
        self.excluded = excluded
        self.settings = settings
        self._client_factory = client_factory
        self._asked: set[str] = set()
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="opmem-title")
        self.futures: list[Future[str | None]] = []

    def hook(self, meta: SessionMeta, branch: list[Node]) -> str | None:
        """Schedule a title for a session not yet asked; returns None so the excerpt stays for now."""
        if not is_configured(self.settings) or meta.extra.get(MARK) or meta.title_source in ("user", "llm"):
            return None
        if meta.extra.get("private") is True or (self.excluded is not None and self.excluded(meta)):
            return None
        text = conversation_excerpt(branch)
        if not any(n.role == "user" for n in branch) or not text:
            return None
        with self._lock:
            if meta.id in self._asked:
                return None
            self._asked.add(meta.id)
            self.futures.append(self._pool.submit(self._make, meta.id, text))
        return None

    def _make(self, session_id: str, text: str) -> str | None:
        try:
            self.store.update_session(session_id, **{MARK: {"at": time.time(), "ok": False}})
        except OpmemError:
            return None  # deleted meanwhile
        try:
            with self._client_factory(self.settings) as client:
                reply = client.chat(
                    [{"role": "system", "content": PROMPT}, {"role": "user", "content": text}],
                    temperature=0.3,
                    max_tokens=50,
                )
        except LLMError:
            return None
        title = clean_title(reply.text)
        if not title:
            return None
        try:
            if self.store.get_meta(session_id).title_source == "user":
                return None
            self.store.update_session(
                session_id, title=title, title_source="llm", **{MARK: {"at": time.time(), "ok": True}}
            )
        except OpmemError:
            return None
        return title

    def wait(self, timeout: float | None = None) -> None:
        """Block until the titles asked so far are done (tests, and a clean shutdown)."""
        for future in list(self.futures):
            future.result(timeout=timeout)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def install_title_hook(
    store: SessionStore,
    settings: LlmSettings,
    enabled: bool = True,
    excluded: Callable[[SessionMeta], str | None] | None = None,
) -> TitleMaker | None:
    """Hang a TitleMaker on the store when titles are on and an LLM is configured."""
    if not enabled or not is_configured(settings):
        return None
    maker = TitleMaker(store, settings, excluded=excluded)
    store.title_hook = maker.hook
    return maker
