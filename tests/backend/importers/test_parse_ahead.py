"""A backlog import's files parsed ahead in a worker process (parse_ahead.py): the same sessions
as a parse here, the parse's warnings carried over, the stat taken before the worker read the
file, and a worker that dies leaves the rest of the import to this process."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import get_importer, parse_ahead, run_import
from opmem_tui.backend.importers.base import ImportReport
from opmem_tui.backend.importers.claude_code import ClaudeImporter
from opmem_tui.backend.importers.parse_ahead import ParseAhead, Parsed, ParseFailed, ParserBug, parse_in_worker

from .conftest import Transcript, text

START = 60.0  # seconds a spawned worker may take to start on a loaded machine


def _transcripts(root: Path, count: int, turns: int = 4) -> list[Path]:
    paths = []
    for i in range(count):
        t = Transcript(session=f"00000000-0000-4000-8000-0000000001{i:02d}", cwd=f"/tmp/p{i}")
        for k in range(turns):
            t.prompt(f"question {i}.{k} with a token sk-ant-api03-{'x' * 20}{i}{k}")
            t.assistant(f"msg_{i}_{k}", text(f"answer {i}.{k}"))
        paths.append(t.write(root / "projects" / "-tmp-p" / f"{t.session}.jsonl"))
    return paths


@pytest.fixture
def ahead():
    worker = ParseAhead(get_importer("claude"))
    if not worker.start() or not worker.started(START):
        worker.close()
        pytest.skip(f"no worker process here: {worker.broken or 'did not start'}")
    yield worker
    worker.close()


def test_the_worker_parses_what_a_parse_here_gives(ahead: ParseAhead, tmp_path: Path) -> None:
    importer = get_importer("claude")
    for path in _transcripts(tmp_path, 2):
        ahead.send(path, os.stat(path), True)
        report = ImportReport()
        parsed = ahead.take(path)
        assert parsed is not None and parsed.final is True
        assert parsed.stat.st_size == path.stat().st_size
        sessions = parsed.into(report)
        here = importer.parse_file(path, ImportReport(), final=True)
        assert sessions == here and report.warnings == []
        assert [dict(n.metadata) for s in sessions for n in s.nodes] == [
            dict(n.metadata) for s in here for n in s.nodes
        ]
    assert ahead.taken == 2


def test_what_the_parse_says_comes_back_as_the_files_warnings(ahead: ParseAhead, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"type": "user", "message": \n{not json}\n')
    ahead.send(path, os.stat(path), True)
    report = ImportReport()
    parsed = ahead.take(path)
    assert parsed is not None
    parsed.into(report)
    here = ImportReport()
    get_importer("claude").parse_file(path, here, final=True)
    assert report.warnings == here.warnings and here.warnings


def test_a_parse_that_fails_or_breaks_raises_here_as_a_parse_here_would(tmp_path: Path, monkeypatch) -> None:
    """What the worker sends back for a failed parse (parse_in_worker, run in this process with a
    parser made to fail) raises as the parse would have here, after what it said."""

    def fails(self, path, report, *, final=None):
        report.warn(path, None, "said before failing")
        raise OSError(5, "Input/output error", str(path))

    monkeypatch.setattr(ClaudeImporter, "parse_file", fails)
    parsed = Parsed.unpack(None, True, parse_in_worker(ClaudeImporter, str(tmp_path / "a.jsonl"), True))
    report = ImportReport()
    with pytest.raises(ParseFailed, match="Input/output error"):
        parsed.into(report)
    assert report.warnings == [f"{tmp_path / 'a.jsonl'}: said before failing"]

    def breaks(self, path, report, *, final=None):
        raise KeyError("uuid")

    monkeypatch.setattr(ClaudeImporter, "parse_file", breaks)
    parsed = Parsed.unpack(None, True, parse_in_worker(ClaudeImporter, str(tmp_path / "a.jsonl"), True))
    with pytest.raises(ParserBug, match=r"^KeyError: 'uuid'$"):
        parsed.into(ImportReport())


def test_a_worker_killed_midway_leaves_the_files_to_this_process(ahead: ParseAhead, tmp_path: Path) -> None:
    first, second = _transcripts(tmp_path, 2)
    for pid in list(ahead._executor._processes):  # the one worker
        os.kill(pid, signal.SIGKILL)
    ahead.send(first, os.stat(first), True)
    assert ahead.take(first) is None  # parse it here
    assert ahead.broken
    ahead.send(second, os.stat(second), True)  # not sent any more
    assert not ahead.sent(second) and ahead.take(second) is None


def test_a_backlog_import_with_the_worker_stores_what_one_without_it_stores(tmp_path: Path, monkeypatch) -> None:
    paths = _transcripts(tmp_path, 5)
    projects = tmp_path / "projects"
    made: list[ParseAhead] = []
    real = ParseAhead

    class Waiting(real):  # waits for the worker, so that every file is its parse
        def __init__(self, importer) -> None:
            super().__init__(importer)
            made.append(self)
            self.start()
            self.started(START)

    monkeypatch.setattr("opmem_tui.backend.importers.ParseAhead", Waiting)
    monkeypatch.setattr(parse_ahead.os, "cpu_count", lambda: 2)
    with_worker = Home(tmp_path / "a")
    first = run_import(with_worker, "claude", [projects], defer_mirror=True, bind=False)
    if not made[0].taken:
        pytest.skip(f"no worker process here: {made[0].broken}")
    assert made[0].taken >= len(paths) - 1
    monkeypatch.setattr(parse_ahead, "usable", lambda importer, files: False)
    without = Home(tmp_path / "b")
    second = run_import(without, "claude", [projects], defer_mirror=True, bind=False)
    assert (first.sessions, first.turns, first.nodes, first.warnings) == (
        second.sessions,
        second.turns,
        second.nodes,
        second.warnings,
    )
    for sid in sorted(first.touched):
        ours = sorted(p.name for p in (with_worker.sessions.path_for(sid) / "history").iterdir())
        theirs = sorted(p.name for p in (without.sessions.path_for(sid) / "history").iterdir())
        assert ours == theirs
        for name in ours:
            a = (with_worker.sessions.path_for(sid) / "history" / name).read_bytes()
            assert a == (without.sessions.path_for(sid) / "history" / name).read_bytes()
    state = json.loads((with_worker.path / "import-state.json").read_text())["files"]
    assert sorted(state) == sorted(str(p) for p in paths)

    class Kept(real):  # as run_import makes it, kept to look at
        def __init__(self, importer) -> None:
            super().__init__(importer)
            made.append(self)

    monkeypatch.setattr(parse_ahead, "usable", lambda importer, files: True)
    monkeypatch.setattr("opmem_tui.backend.importers.ParseAhead", Kept)
    made.clear()
    again = run_import(with_worker, "claude", [projects], defer_mirror=True, bind=False)
    assert (again.skipped, again.nodes) == (5, 0)
    assert len(made) == 1 and not made[0].spawned  # nothing new to parse: no worker started


def test_the_stat_recorded_is_the_one_taken_before_the_worker_read_the_file(ahead: ParseAhead, tmp_path: Path) -> None:
    """A file that grows after it was handed to the worker is read again by the next import."""
    (path,) = _transcripts(tmp_path, 1)
    before = os.stat(path)
    ahead.send(path, before, True)
    with path.open("a") as fh:
        fh.write(json.dumps({"type": "summary", "summary": "later", "leafUuid": "x"}) + "\n")
    parsed = ahead.take(path)
    assert parsed is not None and parsed.stat.st_size == before.st_size < path.stat().st_size


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as fh:
            return not any(line.startswith("State:") and "Z" in line.split()[1] for line in fh)
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")
def test_a_worker_whose_import_was_killed_exits_too(tmp_path: Path) -> None:
    """An import killed with SIGKILL reaches no shutdown: its worker must not wait forever."""
    import subprocess
    import sys
    import time

    script = (
        "import os, sys, time\n"
        "from opmem_tui.backend.importers import get_importer\n"
        "from opmem_tui.backend.importers.parse_ahead import ParseAhead\n"
        "ahead = ParseAhead(get_importer('claude'))\n"
        "ahead.start()\n"
        f"assert ahead.started({START})\n"
        "print(*ahead._executor._processes, flush=True)\n"
        "time.sleep(600)\n"
    )
    importer = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        line = importer.stdout.readline()
        if not line.strip():
            pytest.skip("no worker process here")
        (worker,) = map(int, line.split())
        assert _alive(worker)
    finally:
        importer.kill()
        importer.wait()
    deadline = time.monotonic() + START  # a hang guard, not a timing: it watches its parent each second
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(worker)


def test_a_worker_started_after_its_import_died_exits_too() -> None:
    """The parent's pid is handed to the worker: one whose import was killed before the worker ran
    (so it was reparented at once) still knows it is an orphan."""
    import subprocess
    import sys

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a pid that is not this process's parent
    script = (
        "import time\n"
        "from opmem_tui.backend.worker_process import exit_with_parent\n"
        f"exit_with_parent({gone.pid}, interval=0.05)\n"
        "time.sleep(600)\n"
    )
    orphan = subprocess.Popen([sys.executable, "-c", script])
    try:
        assert orphan.wait(timeout=START) == 0  # a hang guard: it exits at its first look
    finally:
        orphan.kill()
