"""Long CLI commands stop cleanly on SIGTERM, even started with SIGINT ignored (a background job)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

CLI = "from opmem_tui.cli import main; main()"


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_watch_started_with_sigint_ignored_stops_on_sigterm(tmp_path: Path) -> None:
    source = tmp_path / "live.jsonl"
    source.write_text(json.dumps({"session": "live", "id": "u0", "role": "user", "content": "hello"}) + "\n")
    env = {**os.environ, "OPMEM_HOME": str(tmp_path / "home"), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", CLI, "watch", "jsonl", "--path", str(source), "--no-bind", "--idle", "0.1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=_ignore_sigint,
    )
    try:
        for line in proc.stdout:  # the handler is in place before the first batch is reported
            if re.search(r"\+[1-9][0-9]* nodes", line):
                break
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "Traceback" not in err, err
    assert proc.returncode is not None and proc.returncode >= 0  # it exited; SIGTERM's default would say -15
    nodes = list((tmp_path / "home" / "sessions" / "jsonl-live" / "history").iterdir())
    assert len(nodes) == 1
    status = subprocess.run(
        ["git", "-C", str(tmp_path / "home" / "sessions" / "jsonl-live"), "status", "--porcelain"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert status.stdout == ""
