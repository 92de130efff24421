"""The newcomer's path in a real terminal: `opmem demo` in a tmux pane of a fixed size, keys
sent as a person types them, the screen read back (capture-pane). The app opens on a project's
brief; `t`, `g`, `c` switch views; `/` types a name, `enter` gives the keys back, so `+` is
More hops and not a `+` typed into the box. Skipped, saying why, where tmux is not installed
(.ci/run installs Debian's)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from opmem_tui.backend.demo import build_demo

TMUX = shutil.which("tmux")
OPMEM = Path(sys.executable).parent / "opmem"
WAIT = 60.0  # seconds: a bound for a broken app, not a timing; each check polls the screen

pytestmark = [
    pytest.mark.skipif(TMUX is None, reason="tmux is not installed (apt-get install tmux)"),
    pytest.mark.skipif(not OPMEM.exists(), reason=f"no opmem script beside {sys.executable}"),
]


class Pane:
    def __init__(self, socket: Path) -> None:
        self.socket = socket

    def tmux(self, *args: str) -> str:
        done = subprocess.run([TMUX, "-S", str(self.socket), *args], capture_output=True, text=True, check=False)
        return done.stdout

    def screen(self, styled: bool = False) -> str:
        return self.tmux("capture-pane", "-p", *(["-e"] if styled else []), "-t", "newcomer")

    def keys(self, *keys: str) -> None:
        for key in keys:  # one by one, as a person types them
            self.tmux("send-keys", "-t", "newcomer", key)

    def wait_for(self, what: str, test: Callable[[str], bool], *, styled: bool = False) -> str:
        deadline = time.monotonic() + WAIT
        while True:
            screen = self.screen(styled)
            if test(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"never on screen: {what}\n{screen}")
            time.sleep(0.1)


@pytest.fixture
def pane(tmp_path: Path):
    folder = tmp_path / "demo"
    build_demo(folder)  # `opmem demo DIR` reopens a demo folder as it is
    user = tmp_path / "user"
    user.mkdir()
    socket = tmp_path / "tmux.sock"
    env = {**os.environ, "HOME": str(user), "TERM": "xterm-256color"}
    env.pop("OPMEM_HOME", None)
    env.pop("TMUX", None)
    subprocess.run(
        [
            TMUX,
            "-S",
            str(socket),
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "newcomer",
            "-x",
            "120",
            "-y",
            "36",
            "-e",
            f"HOME={user}",
            f"{OPMEM} demo {folder}",
        ],
        check=True,
        env=env,
    )
    try:
        yield Pane(socket)
    finally:
        subprocess.run([TMUX, "-S", str(socket), "kill-server"], capture_output=True, check=False)


def finder_has_cursor(styled: str) -> bool:
    """The entity finder's row drawn with the cursor (a cell in reverse colours) on its placeholder."""
    row = styled.splitlines()[4]
    return "ind an entity" in row and "48;" in row[: row.index("ind an entity")]


def test_the_demo_opens_on_a_brief_and_keys_do_what_the_footer_says(pane: Pane) -> None:
    screen = pane.wait_for("a project's brief", lambda s: "[Project · " in s and "stack:" in s)
    assert "core.md" in screen and "No memory yet" not in screen
    pane.keys("t")
    pane.wait_for("the timeline", lambda s: "enter opens the turn" in s)
    pane.keys("g")
    pane.wait_for("the graph, its keys in the footer", lambda s: "More hops" in s)
    pane.keys("/")
    pane.wait_for("the finder's cursor", finder_has_cursor, styled=True)
    pane.keys(*"pytest")  # `t` and `s` are keys of the graph: here they are text
    pane.wait_for("the name typed into the finder", lambda s: "pytest" in s.splitlines()[4][:38])
    pane.keys("Enter")  # picks the first match and gives the keys back
    pane.wait_for("the graph around pytest", lambda s: "▕ pytest · " in s.splitlines()[4])
    pane.keys("+")
    screen = pane.wait_for("two hops", lambda s: "within 2 hops" in s)
    assert "pytest+" not in screen
    pane.keys("c")
    pane.wait_for("the brief again", lambda s: "[Project · " in s)
    pane.keys("q")
    pane.wait_for("the app gone", lambda s: "[Project · " not in s or not pane.tmux("list-sessions"))
