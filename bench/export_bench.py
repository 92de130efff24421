"""Exports and blame, each beside a baseline measured in the same run.

  python bench/export_bench.py [--quick]

- HTML export of a session whose one turn holds 200 tool calls and 5 MB of output (raw: the
  export's own work), beside `json.dumps` of the same nodes (what any export must at least do);
  then redacted, beside raw (the cost of the privacy gate on 5 MB).
- With chromium on the PATH: that page loaded in headless Chromium to its first drawn turn, and
  a step (←) onto that turn, beside the same for a two-turn session of one-line messages.
- `opmem blame` of a 2,000-line file written by 20 agent turns and 20 user commits, beside
  `git blame --porcelain -M -C` of it alone.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/browser.py
from harness import best_of, parser, report

from opmem_tui.backend.export import export_session, select, write_export
from opmem_tui.backend.export.html import render_html
from opmem_tui.backend.home import Home
from opmem_tui.backend.projects.blame import Blamer
from tests.browser import chromium, chromium_path

T0 = 1_767_225_600.0


def big_session(home: Home, tools: int, total: int) -> str:
    store = home.sessions
    store.append_message("big", "user", "run everything and show me the logs", created_at=T0)
    reply = store.append_message("big", "assistant", "Running.", created_at=T0 + 1)
    line = "2026-01-01 12:00:00 INFO worker processed an item with a fairly long line of log\n"
    each = max(1, total // tools // len(line))
    for i in range(tools):
        store.append_message(
            "big",
            "tool",
            line * each,
            called_by=reply.id,
            name="Bash",
            input={"command": f"job {i}"},
            created_at=T0 + 2 + i,
        )
    store.append_message("big", "user", "thanks", created_at=T0 + 900)
    store.append_message("big", "assistant", "You're welcome.", created_at=T0 + 901)
    store.commit_turn("big")
    for i in range(2):
        store.append_message("small", "user", f"hi {i}", created_at=T0 + 10 * i)
        store.append_message("small", "assistant", "hello", created_at=T0 + 10 * i + 1)
    store.commit_turn("small")
    return "big"


def bench_export(home: Home, quick: bool) -> Path:
    repeat = 2 if quick else 3
    session = select(home.sessions, "big", raw=True)
    nodes = [n.to_json() for n in session.nodes]
    ours = best_of(lambda: render_html(select(home.sessions, "big", raw=True)), repeat)
    base = best_of(lambda: json.dumps(nodes, ensure_ascii=False), repeat)
    report("HTML export of a 5 MB turn (raw)", ours, base, "json.dumps of its nodes", "< 20x", ours < 20 * base)
    redacted = best_of(lambda: export_session(home.sessions, "big", "html"), 1)
    report("HTML export, redacted", redacted, ours, "the same export raw", "informational", True)
    out = home.path / "big.html"
    write_export(render_html(session), out)
    print(
        f"HTML file: {out.stat().st_size / 1e6:.1f} MB for {sum(len(n.content) for n in session.nodes) / 1e6:.1f} MB of text"
    )
    return out


def bench_browser(home: Home, big: Path, quick: bool) -> None:
    if chromium_path() is None:
        print("browser: skipped (no chromium on PATH)")
        return
    small = home.path / "small.html"
    write_export(export_session(home.sessions, "small", "html"), small)
    runs = 2 if quick else 4
    with chromium() as browser:

        def load(path: Path) -> float:
            start = time.perf_counter()
            page = browser.open(path.as_uri())
            page.evaluate("document.getElementById('counter').textContent")
            took = time.perf_counter() - start
            page.send("Page.close")
            return took

        def step(path: Path) -> float:  # from turn 2 back to turn 1 (the big page's 200 tool calls)
            page = browser.open(path.as_uri() + "#turn-2")
            start = time.perf_counter()
            page.press("ArrowLeft")
            page.evaluate("document.getElementById('counter').textContent")
            took = time.perf_counter() - start
            page.send("Page.close")
            return took

        load(small)  # warm the browser
        big_load = min(load(big) for _ in range(runs))
        small_load = min(load(small) for _ in range(runs))
        report(
            "browser: 5 MB-turn page loaded to its first turn",
            big_load,
            small_load,
            "a two-turn page of one-line messages",
            "< 2 s over it",
            big_load - small_load < 2.0,
        )
        big_step = min(step(big) for _ in range(runs))
        small_step = min(step(small) for _ in range(runs))
        report(
            "browser: ← onto the 200-tool-call turn, drawn",
            big_step,
            small_step,
            "← onto a one-message turn",
            "< 250 ms",
            big_step < 0.25,
        )


def bench_blame(root: Path, quick: bool) -> None:
    repo = root / "proj"
    repo.mkdir()
    env = {"GIT_AUTHOR_NAME": "U", "GIT_AUTHOR_EMAIL": "u@x", "GIT_COMMITTER_NAME": "U", "GIT_COMMITTER_EMAIL": "u@x"}

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env={**os.environ, **env})

    git("init", "-q", "-b", "main")
    lines = [f"line {i:05d} of the file, with enough text to be a real line of code = {i}\n" for i in range(2000)]
    (repo / "big.py").write_text("".join(lines))
    git("add", "-A")
    git("commit", "-q", "-m", "initial")
    home = Home(root / "home", durable=False)
    project = home.projects.resolve_project(repo)
    rounds = 10 if quick else 20
    for r in range(rounds):
        # an agent turn rewrites 50 lines (auto-committed), then the user changes 25 more
        watch = home.projects.begin_turn(project.id)
        old = "".join(lines[r * 90 : r * 90 + 50])
        new = "".join(f"agent {r} rewrote {line}" for line in lines[r * 90 : r * 90 + 50])
        text = (repo / "big.py").read_text().replace(old, new, 1)
        (repo / "big.py").write_text(text)
        store = home.sessions
        store.append_message("agent", "user", f"rewrite block {r}", created_at=T0 + r * 100)
        reply = store.append_message("agent", "assistant", "done", name="bench-model", created_at=T0 + r * 100 + 1)
        store.append_message(
            "agent", "tool", "ok", called_by=reply.id, name="Edit",
            input={"file_path": str(repo / "big.py"), "old_string": old, "new_string": new}, created_at=T0 + r * 100 + 2,
        )  # fmt: skip
        store.commit_turn("agent")
        result = home.projects.commit_agent_turn(watch, store.get_turns("agent")[-1], session_id="agent")
        assert result.commit, result
        text = (repo / "big.py").read_text().replace(lines[r * 90 + 60], f"user {r} {lines[r * 90 + 60]}", 1)
        (repo / "big.py").write_text(text)
        git("commit", "-q", "-am", f"user {r}")
    repeat = 2 if quick else 3
    ours = best_of(lambda: Blamer(home.projects, home.sessions, project.id).blame("big.py"), repeat)
    base = best_of(
        lambda: subprocess.run(
            ["git", "-C", str(repo), "blame", "--porcelain", "-M", "-C", "--", "big.py"],
            check=True,
            capture_output=True,
        ),
        repeat,
    )
    report(
        f"opmem blame of 2,000 lines, {rounds} agent turns",
        ours,
        base,
        "git blame --porcelain -M -C",
        "< 2x",
        ours < 2 * base,
    )


def main() -> None:
    args = parser(__doc__.splitlines()[0]).parse_args()
    root = Path(tempfile.mkdtemp(prefix="opmem-export-bench-"))
    try:
        home = Home(root / "store", durable=False)
        big_session(home, 200, 1_000_000 if args.quick else 5_000_000)
        big = bench_export(home, args.quick)
        bench_browser(home, big, args.quick)
        bench_blame(root, args.quick)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
