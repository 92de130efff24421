"""Sessions found by their shape: every importer's sample (tests/fixtures/agents/<source>/store)
read from a tree where its folders are renamed, nested two levels deeper and mixed with unrelated
files gives what it gives from its usual place; `opmem import DIR` names the right importer."""

from __future__ import annotations

import fnmatch
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import SOURCES, run_import
from opmem_tui.backend.importers.detect import detect_sources

from .agent_helpers import age
from .conftest import fixtures_dir

SAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "agents"
JAN_5 = 1767600000  # the samples' messages are dated 2026-01-05
# the shared samples of other agents' stores: folder -> the importer that reads them
SHARED = {
    "copilot-cli": "copilot",
    "crush": "crush",
    "cursor": "cursor",
    "factory-droid": "droid",
    "goose": "goose",
    "kimi-cli": "kimi",
    "opencode": "opencode",
    "qwen-code": "qwen",
}
SHARED_TRANSCRIPTS = {"claude-code": "claude", "codex": "codex"}


def sample(tmp_path: Path, name: str) -> Path:
    """A copy of the sample's store in its usual layout, long finished."""
    target = tmp_path / "usual" / name
    shutil.copytree(SAMPLES / name / "store", target)
    age(target)
    return target


def elsewhere(tmp_path: Path, name: str) -> Path:
    """The same store with its folders and session files renamed, two levels deeper, beside
    unrelated files. What keeps its name: a file whose name is the agent's format
    (``api_conversation_history.json``, ``state.vscdb``, ``chat_history.jsonl``, ...) and a fork's
    own folder (it is what tells its sessions from its parent format's)."""
    root = tmp_path / "elsewhere"
    deep = root / "one" / "two"
    deep.mkdir(parents=True)
    for child in (SAMPLES / name / "store").iterdir():
        kept = not child.is_dir() or any(fnmatch.fnmatchcase(child.name, w) for w in SOURCES[name].shape.within)
        target = deep / (child.name if kept else f"renamed-{child.name}")
        (shutil.copytree if child.is_dir() else shutil.copy2)(child, target)
    shape = SOURCES[name].shape
    for file in [f for f in deep.rglob("*") if f.is_file()]:
        by_convention = [n for n in shape.names if n.startswith("*.") and fnmatch.fnmatchcase(file.name, n)]
        if by_convention and not any(fnmatch.fnmatchcase(file.name, n) for n in shape.names if n not in by_convention):
            file.rename(file.with_name(f"renamed-{file.name}"))  # a name of its own only by convention
    (root / "notes.txt").write_text("not a session\n")
    (root / "one" / "data.json").write_text(json.dumps({"id": 1, "items": [1, 2]}))
    (root / "one" / "metrics.csv").write_text("a,b\n1,2\n")
    (deep / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    age(root)
    return root


def what_it_holds(home: Home) -> list[tuple]:
    """Per stored session (sorted): its turns' roles, its tools' names and its node count."""
    out = []
    for meta in home.sessions.list_sessions(rescan=True).sessions:
        nodes = list(home.sessions.get_nodes(meta.id))
        out.append((meta.source, [n.role for n in nodes], sorted(n.name or "" for n in nodes if n.role == "tool")))
    return sorted(out)


@pytest.mark.parametrize("name", list(SOURCES))
def test_every_source_has_a_sample_a_label_and_a_shape(name: str) -> None:
    importer = SOURCES[name]
    assert (SAMPLES / name / "store").is_dir() and (SAMPLES / name / "SOURCES.md").is_file()
    assert importer.label and importer.reads and importer.shape.names
    assert importer.find([SAMPLES / name / "store"])
    assert bool(importer.locations) == importer.discoverable  # `opmem import` and --list look there


@pytest.mark.parametrize("name", list(SOURCES))
def test_renamed_nested_and_mixed_gives_the_same_sessions(tmp_path: Path, name: str) -> None:
    usual = Home(tmp_path / "h1")
    first = run_import(usual, name, [sample(tmp_path, name)], bind=False)
    assert first.warnings == [] and first.new_sessions >= 1 and first.turns >= 1
    expected = what_it_holds(usual)

    moved = elsewhere(tmp_path, name)
    named = Home(tmp_path / "h2")
    report = run_import(named, name, [moved], bind=False)
    assert report.warnings == [] and what_it_holds(named) == expected

    log = {"level": "info", "msg": "started", "time": "2026-01-05T08:00:00Z"}
    (moved / "one" / "app.jsonl").write_text(json.dumps(log) + "\n")  # JSON lines of no agent
    found = detect_sources([moved], SOURCES)
    assert list(found.sessions) == [name] and found.ambiguous == [] and found.unknown == []
    detected = Home(tmp_path / "h3")
    run_import(detected, name, found.sessions[name], bind=False, exact=True)
    assert what_it_holds(detected) == expected
    again = run_import(detected, name, found.sessions[name], bind=False, exact=True)
    assert (again.nodes, again.new_sessions) == (0, 0)  # a second import adds nothing


@pytest.mark.parametrize("name", list(SOURCES))
def test_session_times_come_from_its_messages(tmp_path: Path, name: str) -> None:
    home = Home(tmp_path / "h")
    run_import(home, name, [sample(tmp_path, name)], bind=False)
    for meta in home.sessions.list_sessions(rescan=True).sessions:
        times = [n.created_at for n in home.sessions.get_nodes(meta.id)]
        assert all(JAN_5 <= t < JAN_5 + 86400 for t in times), (meta.id, times)
        assert (meta.created_at, meta.updated_at) == (min(times), max(times))
        starts = [turn.nodes[0].created_at for turn in home.sessions.get_turns(meta.id)]
        assert starts and starts == sorted(starts)  # each turn at its own first message's time


def test_every_sample_found_with_its_importer(tmp_path: Path) -> None:
    found = detect_sources([SAMPLES], SOURCES)
    assert found.ambiguous == [] and found.unknown == []
    for name, units in found.sessions.items():
        assert {u.relative_to(SAMPLES).parts[0] for u in units} == {name}
    assert set(found.sessions) == set(SOURCES)


def test_the_shared_samples_of_other_agents_are_found_with_theirs() -> None:
    shared = fixtures_dir()
    if not (shared / "agents").is_dir():
        pytest.skip("../shared/fixtures is absent")
    found = detect_sources([shared], SOURCES)
    assert found.ambiguous == []
    by_folder: dict[str, set[str]] = {}
    for name, units in found.sessions.items():
        for unit in units:
            parts = unit.relative_to(shared).parts
            by_folder.setdefault(parts[1], set()).add(name)
    for folder, name in {**SHARED, **SHARED_TRANSCRIPTS}.items():
        assert by_folder.get(folder) == {name}, folder
    total = sum(len(units) for units in found.sessions.values())
    assert total >= 45  # every session file and store of the samples (two empty files aside)


def test_a_task_of_neither_extension_is_named_with_both_and_not_imported(tmp_path: Path) -> None:
    task = tmp_path / "copied" / "1767600000000"
    shutil.copytree(SAMPLES / "cline" / "store" / "globalStorage" / "saoudrizwan.claude-dev" / "tasks", task.parent)
    (task / "task_metadata.json").unlink()
    found = detect_sources([tmp_path], SOURCES)
    assert found.sessions == {} and found.ambiguous == [(task, ("cline", "roo"))]
    assert "fits several importers (cline, roo); not imported" in found.warnings()[0]


def test_imported_session_repos_pass_git_fsck(tmp_path: Path) -> None:
    home = Home(tmp_path / "h")
    found = detect_sources([SAMPLES], SOURCES)
    for name, units in found.sessions.items():
        run_import(home, name, units, bind=False, exact=True)
    repos = [p.parent for p in (home.path / "sessions").glob("*/.git")]
    assert len(repos) >= len(SOURCES)
    for repo in repos:
        done = subprocess.run(["git", "-C", str(repo), "fsck", "--strict"], capture_output=True, text=True)
        assert done.returncode == 0, (repo, done.stderr)


@pytest.mark.parametrize("name", list(SOURCES))
def test_a_cut_or_damaged_sample_is_a_warning_never_a_crash(tmp_path: Path, name: str) -> None:
    tree = sample(tmp_path, name)
    home = Home(tmp_path / "h")
    run_import(home, name, [tree], bind=False)
    kept = what_it_holds(home)
    for file in (f for f in tree.rglob("*") if f.is_file()):
        data = file.read_bytes()
        file.write_bytes(data[: len(data) // 2] + b"\x00\xff{not json" if data else b"")
    age(tree, when=1_700_000_000)
    again = run_import(home, name, [tree], bind=False)
    assert not [w for w in again.warnings if "internal error" in w], again.warnings
    assert all(str(tree) in w for w in again.warnings), again.warnings  # each names its file
    assert what_it_holds(home) == kept  # nothing stored is lost, nothing made up
