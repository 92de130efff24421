"""Headless Chromium driven over the Chrome DevTools Protocol, for the HTML export's tests.

The protocol runs over a pipe (`--remote-debugging-pipe`: the browser reads commands from fd 3
and writes replies and events to fd 4, one JSON message per NUL), so no port is opened and no
client library is needed. `Browser.open(url)` gives a `Page` that records every network request
and every JavaScript dialog from the start.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "chrome")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--disable-extensions",
    "--disable-default-apps",
    "--mute-audio",
    "--remote-debugging-pipe",
    "--window-size=1280,860",
)
TIMEOUT = 60.0  # seconds for one protocol reply (a loaded CI machine is slow, never this slow)


def chromium_path() -> str | None:
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


class BrowserError(RuntimeError):
    pass


class Browser:
    def __init__(self, proc: subprocess.Popen[bytes], to_browser: int, from_browser: int) -> None:
        self.proc = proc
        self._out = to_browser
        self._in = from_browser
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    # -- the wire -------------------------------------------------------------------------
    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("no reply from the browser in time")
            ready, _, _ = select.select([self._in], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._in, 1 << 20)
            if not chunk:
                raise BrowserError(f"the browser closed the pipe (exit {self.proc.poll()})")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        self._next_id += 1
        wanted = self._next_id
        message: dict[str, Any] = {"id": wanted, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self._out, data) :]
        deadline = time.monotonic() + TIMEOUT
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == wanted:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def wait_event(self, method: str, session: str | None = None, since: int = 0) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT
        while True:
            for event in self.events[since:]:
                if event.get("method") == method and (session is None or event.get("sessionId") == session):
                    return event
            since = len(self.events)
            message = self._read_message(deadline)
            if "method" in message:
                self.events.append(message)

    def open(self, url: str) -> Page:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        for domain in ("Page", "Network", "Runtime"):
            self.send(f"{domain}.enable", session=session)
        # The network is off for the page: a request that slipped out would fail, and be recorded.
        self.send(
            "Network.emulateNetworkConditions",
            {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
            session=session,
        )
        self.send("Page.setLifecycleEventsEnabled", {"enabled": True}, session=session)
        mark = len(self.events)
        self.send("Page.navigate", {"url": url}, session=session)
        self.wait_event("Page.loadEventFired", session, since=mark)
        return page


class Page:
    def __init__(self, browser: Browser, session: str) -> None:
        self.browser = browser
        self.session = session

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.browser.send(method, params, self.session)

    def _mine(self, method: str) -> list[dict[str, Any]]:
        return [
            e["params"] for e in self.browser.events if e.get("method") == method and e.get("sessionId") == self.session
        ]

    @property
    def requests(self) -> list[str]:
        """Every URL the page asked for, the document itself included."""
        self.evaluate("1")  # drain the events sent so far
        return [p["request"]["url"] for p in self._mine("Network.requestWillBeSent")]

    @property
    def dialogs(self) -> list[str]:
        self.evaluate("1")
        return [p.get("message", "") for p in self._mine("Page.javascriptDialogOpening")]

    @property
    def console_errors(self) -> list[str]:
        self.evaluate("1")
        out = [str(p.get("exceptionDetails", {}).get("text", "")) for p in self._mine("Runtime.exceptionThrown")]
        for entry in self._mine("Runtime.consoleAPICalled"):
            if entry.get("type") == "error":
                out.append(" ".join(str(a.get("value", a.get("description", ""))) for a in entry.get("args", [])))
        return out

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def press(self, key: str) -> None:
        """A key as a person presses it: keydown (with its text for a printable key), keyup."""
        codes = {"ArrowRight": 39, "ArrowLeft": 37, "Home": 36, "End": 35}
        if key in codes:
            down = {"type": "rawKeyDown", "key": key, "code": key, "windowsVirtualKeyCode": codes[key]}
        else:
            down = {
                "type": "keyDown",
                "key": key,
                "text": key,
                "code": f"Key{key.upper()}",
                "windowsVirtualKeyCode": ord(key.upper()),
            }
        self.send("Input.dispatchKeyEvent", down)
        self.send("Input.dispatchKeyEvent", {**down, "type": "keyUp", "text": ""})

    def screenshot(self, path: Path, full_page: bool = False) -> Path:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
        data = self.send("Page.captureScreenshot", params)["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path


@contextmanager
def chromium() -> Iterator[Browser]:
    """A headless Chromium for the duration of the block (skip the test when there is none)."""
    exe = chromium_path()
    if exe is None:
        raise BrowserError("no chromium on PATH")
    profile = tempfile.mkdtemp(prefix="opmem-chromium-")
    to_browser_r, to_browser_w = os.pipe()
    from_browser_r, from_browser_w = os.pipe()

    def wire() -> None:  # in the child: the protocol's fds are 3 (commands) and 4 (replies)
        high_r, high_w = os.dup(to_browser_r), os.dup(from_browser_w)  # out of the way of 3 and 4
        os.dup2(high_r, 3)  # dup2 makes them inheritable; every other fd is closed at exec
        os.dup2(high_w, 4)

    proc = subprocess.Popen(
        [exe, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=wire,  # the test process starts it from one thread
        close_fds=False,  # Python's own fds are not inheritable (PEP 446): only 3 and 4 go through
    )
    os.close(to_browser_r)
    os.close(from_browser_w)
    browser = Browser(proc, to_browser_w, from_browser_r)
    try:
        yield browser
    finally:
        try:
            browser.send("Browser.close")
        except (BrowserError, OSError):
            pass
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        os.close(to_browser_w)
        os.close(from_browser_r)
        shutil.rmtree(profile, ignore_errors=True)
