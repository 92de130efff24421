"""Regenerate the SVG screenshots of every pane shown in the README.

  python screenshots/make_screenshots.py [--out DIR]

Builds the deterministic sample store the tests use (tests/app/sample_store.py) in a temporary
folder, with $HOME and the time zone pinned, drives the app with App.run_test and saves one SVG
per pane. Nothing outside the temporary folder and the output folder is touched.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SIZE = (130, 36)

# (file name, theme, keys pressed before the picture)
SHOTS: list[tuple[str, str, tuple[str, ...]]] = [
    ("sessions.svg", "opmem-dark", ()),
    ("sessions-light.svg", "opmem-light", ()),
    ("filter.svg", "opmem-dark", ("slash", *"login")),
    ("replay.svg", "opmem-dark", ("down", "down", "down", "right", "enter", "j", "j", "j", "enter")),
    ("replay-light.svg", "opmem-light", ("down", "down", "down", "right", "enter", "j", "j", "j", "enter")),
    ("replay-thinking.svg", "opmem-dark", ("down", "down", "down", "enter", "t")),
    ("branch-picker.svg", "opmem-dark", ("down", "down", "down", "G", "b")),
    ("history.svg", "opmem-dark", ("down", "down", "down", "G", "H")),
    ("projects.svg", "opmem-dark", ("2", "tab", "down")),
    ("projects-light.svg", "opmem-light", ("2", "tab", "down")),
    ("palette.svg", "opmem-dark", ("ctrl+p",)),
    ("keys.svg", "opmem-dark", ("question_mark",)),
    ("hostile-content.svg", "opmem-dark", ("down", "down", "enter", "e")),
]


async def settle(pilot, rounds: int = 3) -> None:
    for _ in range(rounds):
        await pilot.pause(0.05)
        await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def shoot(home_path: Path, out: Path, name: str, theme: str, keys: tuple[str, ...]) -> Path:
    from opmem_tui.app import OpmemApp
    from tests.app.sample_store import NOW, fresh_home

    app = OpmemApp(fresh_home(home_path), now=lambda: NOW, poll_interval=0)
    app.theme = theme
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot, 2)
        focused = app.focused
        if hasattr(focused, "cursor_blink"):
            focused.cursor_blink = False
        app.clear_notifications()
        await settle(pilot, 1)
        return Path(app.save_screenshot(filename=name, path=str(out)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="opmem-shots-") as tmp:
        fake_home = Path(tmp) / "home"
        fake_home.mkdir()
        os.environ.update(HOME=str(fake_home), OPMEM_HOME=str(Path(tmp) / "opmem"), TZ="UTC")
        time.tzset()
        from tests.app.sample_store import build_sample_store

        store = Path(tmp) / "opmem"
        build_sample_store(store, projects_root=fake_home)
        for name, theme, keys in SHOTS:
            path = asyncio.run(shoot(store, args.out, name, theme, keys))
            print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


if __name__ == "__main__":
    main()

