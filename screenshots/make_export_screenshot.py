"""Regenerate screenshots/export-html.png: the HTML export of the demo's bug-fix session, in
headless Chromium, with its first turn's edit unfolded.

  python screenshots/make_export_screenshot.py [--out DIR]

Builds the demo store (sessions dated against a fixed clock) in a temporary folder that also
serves as $HOME, exports the session with `opmem export`'s own code and drives the page over the
DevTools protocol (tests/browser.py). Needs chromium on the PATH.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from opmem_tui.backend.demo import build_demo  # noqa: E402
from opmem_tui.backend.export import export_session, write_export  # noqa: E402
from tests.browser import chromium, chromium_path  # noqa: E402

NOW = 1_767_225_600.0  # 2026-01-01 00:00 UTC, as make_screenshots.py
SESSION = "cc-fix-forecast-parse"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots")
    args = parser.parse_args()
    if chromium_path() is None:
        print("no chromium on PATH (apt-get install chromium)", file=sys.stderr)
        return 1
    folder = Path(tempfile.mkdtemp(prefix="opmem-export-shot-"))
    os.environ["HOME"] = str(folder)
    try:
        home = build_demo(folder / "demo", now=NOW)
        page_path = write_export(export_session(home.sessions, SESSION, "html"), folder / "replay.html")
        with chromium() as browser:
            page = browser.open(page_path.as_uri())
            page.evaluate("document.querySelectorAll('details.tool.edit')[0].open = true")
            page.press("t")  # the thinking, shown
            out = page.screenshot(args.out / "export-html.png")
            assert page.requests == [page_path.as_uri()], page.requests
        print(out)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
