"""The outbox's refs as one table, written as one packed-refs file: 10,000 sessions' refs are one
rename, not 10,000 lock files. Loose refs (what `git fetch` writes) are folded in and removed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from ..store.files import write_atomic

HEADER = b"# pack-refs with: peeled fully-peeled sorted \n"


class RefTable:
    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self.refs: dict[str, str] = {}
        self._loose: list[Path] = []
        self.dirty = False
        self.load()

    def load(self) -> None:
        refs: dict[str, str] = {}
        try:
            for line in (self.git_dir / "packed-refs").read_bytes().split(b"\n"):
                if not line or line.startswith((b"#", b"^")):
                    continue
                oid, _, name = line.decode("utf-8", "replace").partition(" ")
                if len(oid) == 40 and name:
                    refs[name] = oid
        except FileNotFoundError:
            pass
        self._loose = []
        self.refs = refs
        self.dirty = False
        self.fold_loose()

    def fold_loose(self, under: str = "refs") -> None:
        """The loose refs under `under` (what `git fetch` writes) taken into the table; the next
        save removes their files. What the table holds in memory is kept."""
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
                if file.endswith(".lock"):
                    continue
                path = os.path.join(folder, file)
                try:
                    with open(path, "rb") as fh:
                        oid = fh.read(64).strip().decode("ascii")
                except (OSError, UnicodeDecodeError):
                    continue
                if len(oid) == 40:
                    self.refs[path[base:].replace(os.sep, "/")] = oid
                    self._loose.append(Path(path))
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
            self.dirty = True

    def delete(self, name: str) -> None:
        if self.refs.pop(name, None) is not None:
            self.dirty = True

    def save(self, *, durable: bool = True) -> None:
        """Every ref in one packed-refs file (atomic), then the loose copies git no longer needs."""
        if not self.dirty:
            return
        body = b"".join(f"{oid} {name}\n".encode() for name, oid in sorted(self.refs.items()))
        write_atomic(self.git_dir / "packed-refs", HEADER + body, durable=durable)
        refs_root = self.git_dir / "refs"
        for path in self._loose:
            try:
                path.unlink()
            except FileNotFoundError:
                pass
            parent = path.parent  # the folders it leaves empty go too: each walk would read them
            while refs_root in parent.parents and parent not in (refs_root / "heads", refs_root / "tags"):
                try:
                    parent.rmdir()
                except OSError:
                    break  # not empty: nor are its parents
                parent = parent.parent
        self._loose = []
        self.dirty = False
