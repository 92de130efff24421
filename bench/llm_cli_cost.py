"""What the LLM extractor costs through an agent CLI: calls and tokens per session, measured from
the requests a stand-in CLI (tests/backend/llm_cli/stand_ins.py) records, on the fixtures' real
sessions. Each figure is printed beside its baseline from the same run: the session's own text
(its nodes' content and tool inputs, UTF-8 bytes / 3 as tokens), so the ratio says how many
tokens one distillation sends per token of session.

    python bench/llm_cli_cost.py [--quick]
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from opmem_tui.backend.distill.pipeline import RunOptions, run
from opmem_tui.backend.home import Home
from opmem_tui.backend.token_estimate import estimate_tokens
from tests.backend.llm_cli.stand_ins import StandIn
from tests.backend.resume.sessions import FIXTURES, import_into

SESSIONS = {
    "claude tool_heavy (2 turns)": ("claude", "claude-code/spotter-tool_heavy.jsonl"),
    "claude short": ("claude", "claude-code/spotter-short.jsonl"),
    "codex rollout (1 long turn)": (
        "codex",
        "codex/acidicsoil-rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl",
    ),
}


def session_tokens(home: Home, sid: str) -> int:
    text = []
    for node in home.sessions.get_nodes(sid):
        text.append(node.content or "")
        if node.input is not None:
            text.append(json.dumps(node.input, ensure_ascii=False))
    return estimate_tokens("\n".join(text))


def measure(work: Path, label: str, source: str, relative: str) -> None:
    path = FIXTURES / relative
    if not path.is_file():
        print(f"{label}: fixture absent, skipped")
        return
    folder = work / label.split()[0] / Path(relative).stem
    bin_dir = folder / "bin"
    cli = StandIn(bin_dir, "claude")
    home_path = folder / "home"
    home_path.mkdir(parents=True)
    (home_path / "config.toml").write_text('[distill]\nextractor = "llm"\n[llm]\nvia = "claude"\n')
    home = Home(home_path, durable=False)
    copy = folder / "in" / path.name
    copy.parent.mkdir(parents=True)
    shutil.copyfile(path, copy)
    sid = import_into(home, source, copy)
    old_path = os.environ.get("PATH", "")
    os.environ["PATH"] = f"{bin_dir}{os.pathsep}{old_path}"
    try:
        report = run(home, RunOptions())
    finally:
        os.environ["PATH"] = old_path
    calls = cli.calls
    sent = sum(estimate_tokens(c["prompt"]) for c in calls)
    base = session_tokens(home, sid)
    turns = len(home.sessions.get_turns(sid, home.sessions.head(sid)))
    print(
        f"{label}: {turns} turns, session {base:,} tokens (baseline); "
        f"{len(calls)} calls, {sent:,} prompt tokens sent ({sent / max(1, base):.2f}x the session), "
        f"budget charged {report.tokens:,} tokens incl. replies' caps"
    )


def main() -> None:
    quick = "--quick" in sys.argv
    with tempfile.TemporaryDirectory() as tmp:
        for n, (label, (source, relative)) in enumerate(SESSIONS.items()):
            if quick and n > 0:
                break
            measure(Path(tmp), label, source, relative)


if __name__ == "__main__":
    main()
