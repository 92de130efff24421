"""The outbox's ref table: what git reads of it is what the table holds, whether a save wrote the
few refs it changed as loose files or the whole table as packed-refs."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from opmem_tui.backend.sync import refs
from opmem_tui.backend.sync.refs import RefTable

from .helpers import refs_of


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, list[str]]:
    git_dir = tmp_path / "outbox.git"
    made = pygit2.init_repository(str(git_dir), bare=True)
    sig = pygit2.Signature("t", "t@example.invalid", 1_780_000_000, 0)
    commits = []
    for i in range(3):
        builder = made.TreeBuilder()
        builder.insert("f", made.create_blob(f"{i}".encode()), pygit2.enums.FileMode.BLOB)
        commits.append(str(made.create_commit(None, sig, sig, f"c{i}", builder.write(), [])))
    return git_dir, commits


def loose_files(git_dir: Path) -> list[str]:
    return sorted(str(p.relative_to(git_dir)) for p in (git_dir / "refs").rglob("*") if p.is_file())


def test_a_small_save_writes_loose_refs_git_and_a_reload_read_alike(repo: tuple[Path, list[str]], monkeypatch) -> None:
    git_dir, (c0, c1, c2) = repo
    table = RefTable(git_dir)
    for i in range(10):
        table.set(f"refs/opmem/sessions/s{i}/heads/main", c0)
    table.set("refs/sync/seen/opmem/meta/m", c0)
    table.save(durable=False)  # 11 new refs, fewer than LOOSE_AT_MOST: loose files
    assert len(loose_files(git_dir)) == 11
    table.set("refs/opmem/sessions/s3/heads/main", c1)
    table.delete("refs/sync/seen/opmem/meta/m")
    table.save(durable=False)
    assert refs_of(git_dir) == table.refs == RefTable(git_dir).refs
    assert not (git_dir / "refs" / "sync").exists()  # a deleted loose ref takes its empty folders along
    packed = RefTable(git_dir)
    for i in range(10):
        packed.set(f"refs/opmem/sessions/s{i}/heads/main", c2)
    packed.set("refs/opmem/meta/m", c2)
    monkeypatch.setattr(refs, "LOOSE_AT_MOST", 5)
    packed.save(durable=False)  # more than LOOSE_AT_MOST: everything packed, no loose file
    assert loose_files(git_dir) == []
    assert refs_of(git_dir) == packed.refs == RefTable(git_dir).refs
    again = RefTable(git_dir)
    again.set("refs/opmem/sessions/s1/heads/main", c0)
    again.save(durable=False)
    assert loose_files(git_dir) == ["refs/opmem/sessions/s1/heads/main"]
    again.delete("refs/opmem/sessions/s2/heads/main")  # a packed ref: the table is written again
    again.save(durable=False)
    assert loose_files(git_dir) == []
    assert refs_of(git_dir) == again.refs == RefTable(git_dir).refs
    assert "refs/opmem/sessions/s2/heads/main" not in again.refs


def test_a_temp_file_a_kill_left_is_no_ref(repo: tuple[Path, list[str]]) -> None:
    git_dir, (c0, _c1, _c2) = repo
    folder = git_dir / "refs" / "opmem" / "meta"
    folder.mkdir(parents=True)
    (folder / ".m.123.tmp").write_text(c0 + "\n")
    (folder / "m").write_text(c0 + "\n")
    assert RefTable(git_dir).refs == {"refs/opmem/meta/m": c0}
