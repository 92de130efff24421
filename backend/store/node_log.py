"""history/: one JSON file per node, the source of truth of a session.

A node file is written once and never rewritten: a temp file, fsync, rename (ARCHITECTURE §3).
Inside a group (an importer's batch) the fsyncs wait for the group's end and are done together.
"""

from __future__ import annotations

import os
import re
from collections.abc import Container
from pathlib import Path
from typing import Any

from ..model import CorruptFile, Node
from .files import dump_compact_json, read_json_object, write_atomic

NODE_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
NODE_FILE_RE = re.compile(r"^(\d+)-([uats])-(.+)\.json$")


def node_id_from_file_name(name: str) -> str | None:
    match = NODE_FILE_RE.match(name)
    return match.group(3) if match else None


class NodeLog:
    """The node files of one session folder."""

    def __init__(self, history_dir: Path, *, durable: bool = True) -> None:
        self.dir = history_dir
        self.durable = durable
        self.reset()
        self._unsynced: list[Path] | None = None  # node files awaiting a group fsync

    def reset(self) -> None:
        self.known: set[str] = set()  # file names read or written
        self.problems: list[str] = []
        self._fresh: dict[str, bytes] = {}  # bytes of nodes written here, until their commit reads them

    def scan(self, have: Container[str]) -> list[Node]:
        """Nodes in files not read before, in seq order; unreadable files and duplicate ids are problems."""
        try:
            names = os.listdir(self.dir)
        except FileNotFoundError:
            return []
        loaded: dict[str, Node] = {}
        for name in names:
            if name in self.known or not name.endswith(".json") or name.startswith("."):
                continue
            self.known.add(name)
            path = self.dir / name
            if path.is_symlink():  # it may point anywhere: a node is a plain file opmem wrote
                self.problems.append(f"{path}: a symbolic link, not read (node files are plain files)")
                continue
            try:
                node = Node.from_json(read_json_object(path), path)
            except CorruptFile as exc:
                self.problems.append(str(exc))
                continue
            if node.id in have or node.id in loaded:
                self.problems.append(f"{path}: duplicate node id {node.id!r}")
                continue
            loaded[node.id] = node
        return sorted(loaded.values(), key=lambda n: n.seq)

    def write(self, node: Node) -> None:
        data = dump_compact_json(node.to_json())
        path = self.dir / node.file_name
        if self._unsynced is None:
            write_atomic(path, data, durable=self.durable)
        else:
            write_atomic(path, data, durable=False)
            self._unsynced.append(path)
        self._fresh[node.id] = data
        self.known.add(node.file_name)

    def bytes_of(self, node: Node) -> bytes:
        """The node file's bytes (kept from the write, once; else read back)."""
        data = self._fresh.pop(node.id, None)
        if data is None:
            data = (self.dir / node.file_name).read_bytes()
        return data

    def begin_group(self) -> None:
        if self.durable and self._unsynced is None:
            self._unsynced = []

    def end_group(self) -> None:
        """Make the group's node files durable."""
        paths, self._unsynced = self._unsynced, None
        if paths:
            sync_files(paths, self.dir)


def sync_files(paths: list[Path], folder: Path) -> None:
    """fsync many new files at once: one syncfs(2) where Linux has it, else one fsync each."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        fd = -1
    try:
        if fd >= 0 and _syncfs is not None and _syncfs(fd) == 0:
            return
        for path in reversed(paths):  # the first fsync commits the journal holding them all
            try:
                ffd = os.open(path, os.O_RDONLY)
            except FileNotFoundError:
                continue
            try:
                os.fsync(ffd)
            finally:
                os.close(ffd)
        if fd >= 0:
            os.fsync(fd)
    finally:
        if fd >= 0:
            os.close(fd)


def _load_syncfs() -> Any:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.syncfs
        fn.argtypes = [ctypes.c_int]
        return fn
    except (OSError, AttributeError):
        return None


_syncfs = _load_syncfs()
