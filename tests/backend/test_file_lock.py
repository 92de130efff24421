"""The locks of the small shared files (projects.json, links.jsonl, warnings.jsonl,
import-state.json) are waited for at most $OPMEM_LOCK_TIMEOUT, then an error names the file and
says another opmem process holds it; the file is left exactly as it was (they waited forever)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pygit2
import pytest

from opmem_tui.backend.file_lock import FileBusy, file_lock, lock_timeout
from opmem_tui.backend.home import Home
from opmem_tui.backend.importers.state import FileState, ImportState
from opmem_tui.backend.model import OpmemError
from opmem_tui.backend.projects.links import HIGH, CommitLink

HOLDER = textwrap.dedent(
    """
    import sys
    from filelock import FileLock
    with FileLock(sys.argv[1]):
        print("held", flush=True)
        sys.stdin.read()  # until the test closes our stdin
    """
)


@contextmanager
def held_by_another_process(lock: Path) -> Iterator[None]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        yield
    finally:
        holder.stdin.close()
        holder.wait(60)
        holder.stdout.close()


def bound_home(tmp_path: Path) -> tuple[Home, str]:
    home = Home(tmp_path / "home")
    folder = tmp_path / "proj"
    folder.mkdir()
    pygit2.init_repository(str(folder))
    project = home.projects.resolve_project(folder)
    home.projects.record_warning(project.id, "s1", 1, "an earlier warning")
    home.projects.links.add([CommitLink("a" * 40, "s1", 1, HIGH, "opmem", "n1", project.id, ("f.py",))])
    return home, project.id


def set_status(home: Home, project_id: str) -> Path:
    home.projects.set_status(project_id, "paused")
    return home.projects.path


def add_link(home: Home, project_id: str) -> Path:
    home.projects.links.add([CommitLink("b" * 40, "s1", 2, HIGH, "opmem", "n2", project_id, ("g.py",))])
    return home.projects.links.path


def record_warning(home: Home, project_id: str) -> Path:
    home.projects.record_warning(project_id, "s1", 2, "a later warning")
    return home.projects.warnings_path


def save_import_state(home: Home, project_id: str) -> Path:
    path = home.path / "import-state.json"
    state = ImportState(path)
    state.record("/t/x.jsonl", FileState("jsonl", 10, 1, 10, 1))
    state.save()
    return path


WRITES: dict[str, Callable[[Home, str], Path]] = {
    "projects.json": set_status,
    "links.jsonl": add_link,
    "warnings.jsonl": record_warning,
    "import-state.json": save_import_state,
}


@pytest.mark.parametrize("name", list(WRITES))
def test_a_held_lock_is_a_clear_error_and_the_file_is_unchanged(name: str, tmp_path: Path, monkeypatch) -> None:
    home, project_id = bound_home(tmp_path)
    write = WRITES[name]
    target = home.path / "import-state.json" if name == "import-state.json" else home.projects.dir / name
    if name == "import-state.json":
        state = ImportState(target)
        state.record("/t/earlier.jsonl", FileState("jsonl", 5, 1, 5, 1))
        state.save()
    before = target.read_bytes()
    monkeypatch.setenv("OPMEM_LOCK_TIMEOUT", "0.2")
    with held_by_another_process(Path(str(target) + ".lock")):
        with pytest.raises(FileBusy) as caught:
            write(Home(home.path), project_id)
    message = str(caught.value)
    assert message.startswith(f"{target}: another opmem process")
    assert f"{name}.lock for more than 0.2s" in message
    assert target.read_bytes() == before
    # released: the same write goes through
    assert write(Home(home.path), project_id) == target
    assert target.read_bytes() != before


def test_the_import_state_error_says_the_next_import_reads_again(tmp_path: Path, monkeypatch) -> None:
    home = Home(tmp_path / "home")
    monkeypatch.setenv("OPMEM_LOCK_TIMEOUT", "0")
    with held_by_another_process(home.path / "import-state.json.lock"):
        with pytest.raises(FileBusy, match="the next import reads these files again"):
            save_import_state(home, "")
    assert not (home.path / "import-state.json").exists()


def test_the_wait_comes_from_the_environment(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("OPMEM_LOCK_TIMEOUT", raising=False)
    assert lock_timeout() == 60.0
    monkeypatch.setenv("OPMEM_LOCK_TIMEOUT", "2.5")
    assert lock_timeout() == 2.5
    for bad in ("soon", "-1", "nan"):
        monkeypatch.setenv("OPMEM_LOCK_TIMEOUT", bad)
        with pytest.raises(OpmemError, match=f"OPMEM_LOCK_TIMEOUT must be a number of seconds >= 0, got '{bad}'"):
            with file_lock(tmp_path / "x.json"):
                pass


def test_an_unreadable_import_state_is_named_not_silently_dropped(tmp_path: Path) -> None:
    path = tmp_path / "import-state.json"
    assert ImportState(path).problem == ""  # no file yet: nothing to say
    path.write_text('{"version": 1, "files": {')
    state = ImportState(path)
    assert state.files == {}
    assert state.problem.startswith("the import state does not parse (line 1 column 26: Expecting property name")
    assert "every file is imported again" in state.problem
    path.write_text(json.dumps([1, 2]))
    assert 'no "files" object' in ImportState(path).problem
    path.write_text("[" * 100_000 + "]" * 100_000)
    assert "nested too deeply" in ImportState(path).problem
