"""Write a session repo's `.git/index` (format v2) for HEAD's tree, so `git status` stays quiet.

Written by hand rather than with libgit2 for one flag libgit2's Python binding cannot set:
meta.json is marked assume-unchanged, because opmem rewrites it (title, head) between commits
while the commit keeps the snapshot; node files never change once written. Entries carry no
stat data, so the first `git status` hashes the files once and git refreshes the index itself.
"""

from __future__ import annotations

import hashlib
import os
import struct
from collections.abc import Iterable
from pathlib import Path

from .files import write_all

_MODE_BLOB = struct.pack(">I", 0o100644)
_NO_STAT = b"\0" * 24  # ctime, mtime, dev, ino
_NO_OWNER = b"\0" * 12  # uid, gid, size
ASSUME_UNCHANGED = 0x8000


def index_bytes(entries: Iterable[tuple[bytes, bytes, bool]]) -> bytes:
    """Index v2 for (path, 20-byte blob id, assume_unchanged) entries; paths are sorted here."""
    parts: list[bytes] = []
    count = 0
    for path, oid, assume in sorted(entries):
        flags = min(len(path), 0xFFF) | (ASSUME_UNCHANGED if assume else 0)
        entry = _NO_STAT + _MODE_BLOB + _NO_OWNER + oid + struct.pack(">H", flags) + path
        parts.append(entry + b"\0" * (8 - len(entry) % 8))  # 1-8 NULs: the name's end and padding
        count += 1
    body = b"DIRC" + struct.pack(">II", 2, count) + b"".join(parts)
    return body + hashlib.sha1(body).digest()


def write_index(git_dir: Path, data: bytes) -> bool:
    """Replace `index` through git's own `index.lock`; False (nothing written) while git holds it."""
    lock = git_dir / "index.lock"
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    try:
        try:
            write_all(fd, data)
        finally:
            os.close(fd)
        os.replace(lock, git_dir / "index")
    except BaseException:
        lock.unlink(missing_ok=True)
        raise
    return True
