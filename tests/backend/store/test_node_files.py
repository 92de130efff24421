"""How a node file comes to be: whole or not at all, by an unnamed file given its name where the
system can (O_TMPFILE), else a temp file renamed; the same bytes either way."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from opmem_tui.backend.model import Node
from opmem_tui.backend.store import files, node_log
from opmem_tui.backend.store.node_log import NodeLog

NODE = Node(id="n1", seq=1, role="user", content="hello", created_at=1.5)


def _log(tmp_path: Path) -> NodeLog:
    history = tmp_path / "s1" / "history"
    history.mkdir(parents=True)
    return NodeLog(history, durable=False)


def _names(log: NodeLog) -> list[str]:
    return sorted(os.listdir(log.dir))


def _can_link_unnamed(folder: Path) -> bool:
    return node_log.link_new_file(str(folder), str(folder / "probe"), b"x") and not os.unlink(folder / "probe")


def test_a_node_file_appears_whole_with_no_temp_file_left(tmp_path: Path) -> None:
    log = _log(tmp_path)
    if not _can_link_unnamed(log.dir):
        pytest.skip("no O_TMPFILE on this filesystem: the rename path is tested below")
    log.write(NODE)
    assert _names(log) == [NODE.file_name]
    assert json.loads((log.dir / NODE.file_name).read_bytes()) == NODE.to_json()
    assert (log.dir / NODE.file_name).stat().st_mode & 0o777 == 0o644 & ~_umask()


def test_where_unnamed_files_cannot_be_made_a_temp_file_is_renamed_to_the_same_bytes(
    tmp_path: Path, monkeypatch
) -> None:
    linked = _log(tmp_path / "a")
    linked.write(NODE)
    monkeypatch.setattr(node_log, "_O_TMPFILE", 0)
    renamed = _log(tmp_path / "b")
    renamed.write(NODE)
    assert _names(renamed) == [NODE.file_name]
    assert (renamed.dir / NODE.file_name).read_bytes() == (linked.dir / NODE.file_name).read_bytes()


def test_a_node_file_written_again_replaces_the_old_one(tmp_path: Path) -> None:
    log = _log(tmp_path)
    (log.dir / NODE.file_name).write_text("old")
    log.write(NODE)  # the name exists: linking fails, a rename replaces it
    assert json.loads((log.dir / NODE.file_name).read_bytes()) == NODE.to_json()
    assert _names(log) == [NODE.file_name]


@pytest.mark.parametrize("unnamed", [True, False])
def test_a_write_that_fails_leaves_nothing_under_any_name(tmp_path: Path, monkeypatch, unnamed: bool) -> None:
    log = _log(tmp_path)
    if not unnamed:
        monkeypatch.setattr(node_log, "_O_TMPFILE", 0)

    def full(fd: int, data: bytes) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(node_log, "write_all", full)
    monkeypatch.setattr(files, "write_all", full)
    with pytest.raises(OSError, match="No space left"):
        log.write(NODE)
    assert _names(log) == []


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
