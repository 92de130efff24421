"""The packs of a session repo: each turn commit writes one small pack; they are merged as they pile up.

Nothing here deletes an object that is not in the pack that replaces it: a merge keeps the pack
it produced even when its name is one of its inputs' (same objects, same checksum), whatever
`pack_after_turns` says, and a full repack removes old packs and loose objects only once git
has written the new pack.
"""

from __future__ import annotations

import os
import shutil
import zlib
from collections.abc import Callable
from pathlib import Path

import pygit2

from .packwriter import MergeRefused, merge_packs

HistoryBase = Callable[[bytes], "tuple[bytes, bytes] | None"]


class Packs:
    """`.git/objects` of one session repo."""

    def __init__(self, git_dir: Path, threshold: int) -> None:
        self.objects = git_dir / "objects"
        self.pack_dir = self.objects / "pack"
        self.threshold = threshold

    def index_files(self) -> list[Path]:
        try:
            names = os.listdir(self.pack_dir)
        except FileNotFoundError:
            return []
        return sorted(self.pack_dir / n for n in names if n.endswith(".idx") and n.startswith("pack-"))

    def merge_if_due(self, history_base: HistoryBase) -> bool:
        """Merge the turn packs into the largest pack once more than `threshold` packs exist.

        The merge concatenates packs and stores each history tree as an append delta on the one
        before (packwriter.merge_packs), so its cost follows the turns since the last merge, not
        the session. False: nothing was due. Raises MergeRefused when only a full repack can
        merge them (e.g. an object in two packs).
        """
        packs = self.index_files()
        if len(packs) < 2 or len(packs) <= self.threshold:
            return False  # one pack (or none) is merged already, whatever the setting
        sizes = {p: p.stat().st_size for p in packs}
        base = max(packs, key=lambda p: sizes[p])
        others = sorted((p for p in packs if p != base), key=lambda p: p.stat().st_mtime_ns)
        try:
            merged = merge_packs(self.pack_dir, base, others, history_base, durable=False)
        except (ValueError, zlib.error) as exc:
            raise MergeRefused(str(exc)) from exc
        for idx in [base, *others]:
            if idx.stem == merged:
                continue  # the merge gave back this very pack: it stays
            idx.unlink(missing_ok=True)  # the index first: no reader finds an index without its pack
            idx.with_suffix(".pack").unlink(missing_ok=True)
        return True

    def repack(self, repo: pygit2.Repository) -> int:
        """Every object, with deltas, in one pack written by libgit2; then old packs and loose objects go."""
        old = set(self.pack_dir.glob("pack-*")) if self.pack_dir.exists() else set()
        written = repo.pack()
        new = set(self.pack_dir.glob("pack-*")) - old
        if not any(p.suffix == ".idx" for p in new):
            return written  # the same pack again (nothing new), or nothing written: keep what is there
        for path in sorted(old, key=lambda p: p.suffix != ".idx"):  # indexes first
            path.unlink(missing_ok=True)
        for directory in self._loose_dirs():
            shutil.rmtree(directory, ignore_errors=True)
        return written

    def _loose_dirs(self) -> list[Path]:
        try:
            return [self.objects / d for d in os.listdir(self.objects) if len(d) == 2]
        except FileNotFoundError:
            return []
