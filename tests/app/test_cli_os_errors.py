"""An OSError in any command (a full disk, a read-only or misplaced home) is one line naming the
file, exit 1, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def test_an_os_error_is_a_message_not_a_traceback(tmp_path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"session": "s", "id": "m", "role": "user", "content": "hi"}) + "\n")
    home = tmp_path / "home"
    home.mkdir()
    not_a_file = home / "import-state.json"
    (not_a_file / "x").mkdir(parents=True)  # where the import saves its state at the end
    done = subprocess.run(
        [sys.executable, "-c", "from opmem_tui.cli import main; main()", "import", "jsonl", str(transcript)],
        capture_output=True,
        text=True,
        env={**os.environ, "OPMEM_HOME": str(home)},
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "import-state.json" in done.stderr.replace("\n", "")
