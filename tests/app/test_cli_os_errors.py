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


def test_a_reader_that_stops_early_is_not_an_error(tmp_path) -> None:
    """`opmem sessions list | head -1`: the reader closes the pipe and the next write fails with
    EPIPE. That is not a problem with any file: before, "opmem: Broken pipe" on stderr and exit 1
    (or Python's "Exception ignored ... BrokenPipeError" at exit). Now quiet, exit 1, as rich does."""
    home = tmp_path / "home"
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"session": "s", "id": "m", "role": "user", "content": "hi"}) + "\n")
    env = {**os.environ, "OPMEM_HOME": str(home), "COLUMNS": "100"}
    command = [sys.executable, "-c", "from opmem_tui.cli import main; main()"]
    subprocess.run([*command, "import", "jsonl", str(transcript)], capture_output=True, env=env, check=True)
    for args in (["sessions", "list"], ["timeline"], ["sessions", "list", "--json"]):
        read_end, write_end = os.pipe()
        os.close(read_end)  # the reader is gone before the first line is written
        try:
            done = subprocess.run([*command, *args], stdout=write_end, stderr=subprocess.PIPE, text=True, env=env)
        finally:
            os.close(write_end)
        assert "Broken pipe" not in done.stderr and "Traceback" not in done.stderr, (args, done.stderr)
        assert "BrokenPipeError" not in done.stderr, (args, done.stderr)
        assert done.returncode == 1, (args, done.returncode)  # the same for click.echo and rich output
