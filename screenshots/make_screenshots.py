"""Regenerate the screenshots of every pane shown in the README, from the `opmem demo` store.

  python screenshots/make_screenshots.py [--out DIR] [--no-png] [--only NAME ...]

Builds the demo store (backend/demo.build_demo, sessions dated against a fixed clock) in
$TMPDIR/opmem-screenshots, which also serves as $HOME (project folders show as ~/projects/...)
and is removed afterwards; pins the time zone, drives the app with App.run_test and saves one SVG per picture. When
`rsvg-convert` is on the PATH, each SVG also gets a PNG beside it. The agent commits in the
demo's projects carry the wall-clock time they were made, so those dates differ between runs.
Nothing outside that folder and the output folder is touched.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from opmem_tui.backend.demo import DEMO_MARKER, build_demo  # noqa: E402

SIZE = (140, 40)
NOW = 1_767_225_600.0  # 2026-01-01 00:00 UTC: the demo's sessions fall in the week before
PNG_WIDTH = 1400

# Rows of the demo's session list (newest first): 0 the Claude Code bug fix with a retried
# turn, 2 the Codex discounts session, 3 the Codex run with many tool calls, 6 markup in text.
FIX = ("g",)  # a session opens on its latest turn; g goes to its first
CART = ("down", "down", "down", "g")
MARKUP = ("down",) * 6

# (file name without extension, theme, keys pressed before the picture,
#  home: "demo" | "empty" | "memory" (the demo store distilled by the rules extractor))
SHOTS: list[tuple[str, str, tuple[str, ...], str]] = [
    ("sessions", "opmem-dark", (), "demo"),
    ("sessions-light", "opmem-light", (), "demo"),
    ("filter", "opmem-dark", ("slash", *"codex"), "demo"),
    ("replay", "opmem-dark", (*FIX, "enter", "t", "j", "j", "enter"), "demo"),
    ("replay-light", "opmem-light", (*FIX, "enter", "t", "j", "j", "enter"), "demo"),
    ("replay-long-output", "opmem-dark", (*CART, "enter", "j", "j", "enter"), "demo"),
    ("branch-picker", "opmem-dark", (*FIX, "right", "b"), "demo"),
    ("history", "opmem-dark", (*FIX, "G", "H"), "demo"),
    ("projects", "opmem-dark", ("2", "down", "enter"), "demo"),
    ("projects-light", "opmem-light", ("2", "down", "enter"), "demo"),
    ("palette", "opmem-dark", ("ctrl+p",), "demo"),
    ("keys", "opmem-dark", ("question_mark",), "demo"),
    ("hostile-content", "opmem-dark", (*MARKUP, "enter"), "demo"),
    ("empty", "opmem-dark", (), "empty"),
    ("memory-graph", "opmem-dark", ("3",), "memory"),
    ("memory-core", "opmem-dark", ("3", "c", *("right_square_bracket",) * 3), "memory"),
    ("memory-timeline", "opmem-dark", ("3", "t"), "memory"),
    ("memory-graph-light", "opmem-light", ("3",), "memory"),
    ("search", "opmem-dark", ("ctrl+f", *"forecast"), "memory"),
    ("activity", "opmem-dark", ("4",), "memory"),
    ("activity-cost", "opmem-dark", ("4", "m", "m"), "memory"),  # cost per day, by project, agent and model
    ("replay-edit", "opmem-dark", (*FIX, "enter", *(("j",) * 5), "enter", "j"), "memory"),
    # A session holding secrets (tests/app/secret_store.py): turn 1's bash call opened, masked.
    ("replay-secrets", "opmem-dark", ("left", "enter", "j", "j", "enter"), "secrets"),
]
CONSOLIDATED = "2026-01-01"  # the day core.md is written for: the same pictures on every run


def distil_demo(home_path: Path) -> Path:
    """Distil the demo store (rules, no LLM) and write its core.md files for CONSOLIDATED."""
    from datetime import date

    from opmem_tui.backend.distill.pipeline import RunOptions, run
    from opmem_tui.backend.home import Home
    from opmem_tui.backend.memory.core import write_cores

    home = Home(home_path, durable=False)
    run(home, RunOptions(project=False))
    names = {p.id: p.name for p in home.projects.list_projects()}
    write_cores(home.memory, date.fromisoformat(CONSOLIDATED), names)
    return home_path


async def settle(pilot, rounds: int = 3) -> None:
    for _ in range(rounds):
        await pilot.pause(0.05)
        await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def shoot(home_path: Path, out: Path, name: str, theme: str, keys: tuple[str, ...]) -> Path:
    from opmem_tui.app import OpmemApp
    from opmem_tui.backend.home import Home

    app = OpmemApp(Home(home_path, durable=False), now=lambda: NOW, watch=False, poll_interval=0, idle_distil=0)
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
        return Path(app.save_screenshot(filename=f"{name}.svg", path=str(out)))


def to_png(svg: Path, converter: str) -> Path:
    """PNG through rsvg-convert. Rich's SVG asks for Fira Code (a web font rsvg cannot load) and
    pads with no-break spaces, which rsvg drops at the start of a text run unless told to keep
    white space: render a copy with a local monospace font and xml:space="preserve"."""
    text = svg.read_text()
    text = re.sub(r'font-family: "?Fira Code"?', 'font-family: "DejaVu Sans Mono"', text)
    text = text.replace("<svg ", '<svg xml:space="preserve" ', 1)
    png = svg.with_suffix(".png")
    with tempfile.NamedTemporaryFile("w", suffix=".svg", delete=False) as tmp:
        tmp.write(text)
    try:
        subprocess.run([converter, "-w", str(PNG_WIDTH), tmp.name, "-o", str(png)], check=True)
    finally:
        os.unlink(tmp.name)
    return png


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    parser.add_argument("--no-png", action="store_true", help="SVG only, even when rsvg-convert is there")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="just these pictures (e.g. replay-secrets)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    converter = None if args.no_png else shutil.which("rsvg-convert")
    # A fixed folder (not a random one): the tool arguments recorded in the demo hold its path.
    fake_home = Path(tempfile.gettempdir()) / "opmem-screenshots"
    if fake_home.exists():
        if not (fake_home / DEMO_MARKER).exists():
            sys.exit(f"{fake_home} exists and is not a demo store built by this script; remove it first")
        shutil.rmtree(fake_home)
    try:
        os.environ.update(HOME=str(fake_home), OPMEM_HOME=str(fake_home / "unused"), TZ="UTC")
        time.tzset()
        homes = {"demo": build_demo(fake_home, now=NOW).path, "empty": fake_home / "empty-home"}
        for name, theme, keys, which in SHOTS:
            if args.only and name not in args.only:
                continue
            if which == "secrets" and which not in homes:
                from tests.app.secret_store import build_secret_store

                homes["secrets"] = build_secret_store(fake_home / "secrets").path
            if which == "memory" and which not in homes:  # after the others: they show no memory
                homes["memory"] = distil_demo(homes["demo"])
            svg = asyncio.run(shoot(homes[which], args.out, name, theme, keys))
            made = [svg] + ([to_png(svg, converter)] if converter else [])
            for path in made:
                print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    finally:
        gc.collect()  # a collected session store flushes (and re-creates its lock folder) first
        shutil.rmtree(fake_home, ignore_errors=True)
    if converter is None and not args.no_png:
        print("rsvg-convert not found: SVG only", file=sys.stderr)


if __name__ == "__main__":
    main()
