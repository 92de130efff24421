"""The store's change journal, `<sessions>/.journal`: the id of every session a write touched, one a
line, appended when the writer takes the session's lock and again after its files, before the
store's change token (`.changed`): a writer killed midway still left the first line.

A reader (the sync) keeps a cursor (the journal's id and the offset it read up to) and reads only
what was appended since: one small read instead of a stat of every session. It is a hint, never
the only truth: whenever it cannot be trusted the reader scans every session instead, i.e. when
the file is missing, was replaced (another id in its first line), is shorter than the cursor, or
holds a line that is not `<id>\\t<crc32 of id>` (a write torn by a crash).

    opmem-journal <random id>
    s00007\t1c291ca3
"""

from __future__ import annotations

import os
import uuid
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..model import SESSION_ID_RE

MAGIC = b"opmem-journal "
ROTATE_AFTER = 1 << 20  # bytes; the reader replaces a longer journal (its next run scans everything once)


@dataclass(frozen=True)
class JournalRead:
    ids: frozenset[str]  # sessions written since the cursor
    journal: str  # the journal's id (its first line)
    offset: int  # where the next read starts
    size: int  # bytes read in all


def _line(session_id: str) -> bytes:
    sid = session_id.encode()
    return sid + b"\t" + f"{zlib.crc32(sid):08x}".encode() + b"\n"


def _header() -> bytes:
    return MAGIC + uuid.uuid4().hex.encode() + b"\n"


class ChangeJournal:
    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, session_ids: Iterable[str]) -> OSError | None:
        """One write of every id's line (O_APPEND: lines of concurrent writers never interleave).
        A write that fails removes the journal, so that no reader trusts one that misses a change;
        the error is returned for the writer to say."""
        data = b"".join(_line(sid) for sid in session_ids)
        if not data:
            return None
        try:
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
            except FileNotFoundError:
                self._create()
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
        except OSError as exc:
            try:
                os.unlink(self.path)
            except OSError:
                pass
            return exc
        return None

    def _create(self) -> None:
        """The file with its header, made whole before it appears (a link fails if another made it first)."""
        tmp = self.path.with_name(f"{self.path.name}.{uuid.uuid4().hex[:8]}.tmp")
        try:
            with open(tmp, "xb") as fh:
                fh.write(_header())
            try:
                os.link(tmp, self.path)
            except FileExistsError:
                pass
        finally:
            tmp.unlink(missing_ok=True)

    def read(self, journal: str | None, offset: int) -> JournalRead | None:
        """The ids appended since `offset` of journal `journal`; None when the journal cannot say
        (missing, replaced, shorter, torn): the caller then looks at every session."""
        try:
            with open(self.path, "rb") as fh:
                data = fh.read()
        except OSError:
            return None
        head, sep, _rest = data.partition(b"\n")
        if not sep or not head.startswith(MAGIC):
            return None
        name = head[len(MAGIC) :].decode("ascii", "replace")
        start = len(head) + 1
        if journal is None:
            offset = start  # a reader's first look: everything in it is new to it
        elif name != journal or offset < start or offset > len(data):
            return None
        end = data.rfind(b"\n", offset - 1) + 1  # a line still being written is read next time
        ids: set[str] = set()
        for line in data[offset:end].split(b"\n")[:-1]:
            sid, tab, crc = line.partition(b"\t")
            if not tab or crc != f"{zlib.crc32(sid):08x}".encode():
                return None
            text = sid.decode("utf-8", "replace")
            if not SESSION_ID_RE.fullmatch(text):
                return None
            ids.add(text)
        return JournalRead(frozenset(ids), name, max(end, offset), len(data))

    def rotate(self) -> None:
        """A new, empty journal in its place (a writer appending to the old one meanwhile is lost:
        the new id tells every reader to scan everything once)."""
        tmp = self.path.with_name(f"{self.path.name}.{uuid.uuid4().hex[:8]}.tmp")
        try:
            tmp.write_bytes(_header())
            os.replace(tmp, self.path)
        except OSError:
            tmp.unlink(missing_ok=True)
