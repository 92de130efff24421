"""The outbox's refs as one table, kept in one packed-refs file: 10,000 sessions' refs are one
rename, not 10,000 lock files. A save that changes a few refs (a sync after one new turn) writes
them as loose ref files instead of the whole table again; a save that deletes a packed ref, or
leaves more than LOOSE_AT_MOST loose files, writes the table and removes every loose file (what
`git fetch` writes included)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from ..store.files import write_atomic

HEADER = b"# pack-refs with: peeled fully-peeled sorted \n"
LOOSE_AT_MOST = 64  # loose files left between two full saves (each walk of refs/ reads them all)
_PACKED_LINE = re.compile(r"^([0-9a-f]{40}) (refs/[^\n]+)$", re.MULTILINE)


class RefTable:
    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self.refs: dict[str, str] = {}
        self._packed: dict[str, str] = {}  # what packed-refs holds
        self._loose: dict[str, Path] = {}  # name -> its loose file
        self._touched: set[str] = set()  # names set or deleted since the last save
        self.dirty = False
        self.load()

    def load(self) -> None:
        try:
            text = (self.git_dir / "packed-refs").read_bytes().decode("utf-8", "replace")
        except FileNotFoundError:
            text = ""
        self._packed = {name: oid for oid, name in _PACKED_LINE.findall(text)}
        self.refs = dict(self._packed)
        self._loose = {}
        self._touched = set()
        self.dirty = False
        self.fold_loose()

    def fold_loose(self, under: str = "refs") -> None:
        """The loose refs under `under` (what `git fetch` writes) taken into the table. What the
        table holds in memory is kept; more than LOOSE_AT_MOST of them are packed by the next save."""
        root = os.path.join(self.git_dir, under)
        base = len(str(self.git_dir)) + 1
        keep = {os.path.join(self.git_dir, d) for d in ("refs", "refs/heads", "refs/tags")} | {root}
        for folder, _dirs, files in os.walk(root, topdown=False):
            if not files and folder not in keep:
                try:  # a folder a removed ref left (10,000 of them: every walk reads them all)
                    os.rmdir(folder)
                except OSError:
                    pass  # not empty
                continue
            for file in files:
                if file.endswith(".lock") or file.startswith("."):
                    continue  # git's lock, or a write_atomic temp a kill left (git skips dot files too)
                path = os.path.join(folder, file)
                try:
                    with open(path, "rb") as fh:
                        oid = fh.read(64).strip().decode("ascii")
                except (OSError, UnicodeDecodeError):
                    continue
                if len(oid) == 40:
                    name = path[base:].replace(os.sep, "/")
                    self.refs[name] = oid
                    self._loose[name] = Path(path)
        if len(self._loose) > LOOSE_AT_MOST:
            self.dirty = True

    def get(self, name: str) -> str | None:
        return self.refs.get(name)

    def under(self, prefix: str) -> dict[str, str]:
        """Refs whose name starts with `prefix`, named without it."""
        return {name[len(prefix) :]: oid for name, oid in self.refs.items() if name.startswith(prefix)}

    def names(self) -> Iterator[str]:
        return iter(self.refs)

    def set(self, name: str, oid: str) -> None:
        if self.refs.get(name) != oid:
            self.refs[name] = oid
            self._touched.add(name)
            self.dirty = True

    def delete(self, name: str) -> None:
        if self.refs.pop(name, None) is not None:
            self._touched.add(name)
            self.dirty = True

    def save(self, *, durable: bool = True) -> None:
        if not self.dirty:
            return
        gone_packed = any(name in self._packed and name not in self.refs for name in self._touched)
        loose_after = set(self._loose) | {name for name in self._touched if name in self.refs}
        if gone_packed or len(loose_after) > LOOSE_AT_MOST:
            self._save_all(durable)
        else:
            self._save_loose(durable)
        self._touched = set()
        self.dirty = False

    def _save_loose(self, durable: bool) -> None:
        """Each touched ref as its loose file (git reads a loose ref before the packed one)."""
        for name in sorted(self._touched):
            path = self._loose.get(name) or self.git_dir / name
            oid = self.refs.get(name)
            if oid is None:  # deleted, and not packed: its loose file goes
                path.unlink(missing_ok=True)
                self._loose.pop(name, None)
                self._prune_folders(path)
            elif self._packed.get(name) == oid and name not in self._loose:
                continue  # back to its packed value
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                write_atomic(path, f"{oid}\n".encode(), durable=durable)
                self._loose[name] = path

    def _save_all(self, durable: bool) -> None:
        """Every ref in one packed-refs file (atomic), then the loose copies git no longer needs."""
        body = "".join(f"{oid} {name}\n" for name, oid in sorted(self.refs.items())).encode()
        write_atomic(self.git_dir / "packed-refs", HEADER + body, durable=durable)
        self._packed = dict(self.refs)
        for path in self._loose.values():
            try:
                path.unlink()
            except FileNotFoundError:
                pass
            self._prune_folders(path)
        self._loose = {}

    def _prune_folders(self, path: Path) -> None:
        """The folders a removed loose file leaves empty go too: each walk would read them."""
        refs_root = self.git_dir / "refs"
        parent = path.parent
        while refs_root in parent.parents and parent not in (refs_root / "heads", refs_root / "tags"):
            try:
                parent.rmdir()
            except OSError:
                break  # not empty: nor are its parents
            parent = parent.parent
