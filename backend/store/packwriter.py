"""Write a turn's git objects as one small pack (.pack + .idx), not one loose file per object.

Creating a file is the dominant cost of a turn commit (a turn makes 5-60 objects); a pack is
two files whatever the count. The format is git's pack v2 and index v2 (Documentation/
gitformat-pack.txt), so libgit2 and the git command line read these packs as usual, and
SessionRepo.pack() later merges them into one delta-compressed pack.
"""

from __future__ import annotations

import hashlib
import os
import struct
import zlib
from pathlib import Path

from .files import write_all

COMMIT, TREE, BLOB = 1, 2, 3
_TYPE_NAMES = {COMMIT: b"commit", TREE: b"tree", BLOB: b"blob"}
MODE_BLOB = b"100644"
MODE_TREE = b"40000"


def object_id(kind: int, data: bytes) -> bytes:
    """The 20-byte SHA-1 git gives an object of this type and content."""
    h = hashlib.sha1(_TYPE_NAMES[kind] + b" " + str(len(data)).encode() + b"\0")
    h.update(data)
    return h.digest()


def tree_entry(mode: bytes, name: str, oid: bytes) -> bytes:
    return mode + b" " + name.encode("utf-8") + b"\0" + oid


def parse_tree(raw: bytes) -> list[tuple[bytes, bytes, bytes]]:
    """(mode, name, oid) of every entry of a raw tree object."""
    out = []
    i, n = 0, len(raw)
    while i < n:
        sp = raw.index(b" ", i)
        nul = raw.index(b"\0", sp)
        out.append((raw[i:sp], raw[sp + 1 : nul], raw[nul + 1 : nul + 21]))
        i = nul + 21
    return out


def last_entry_name(raw: bytes) -> bytes:
    """Name of a raw tree's last entry, found from the end without parsing the whole tree."""
    if not raw:
        return b""
    end = len(raw) - 21  # the NUL before the last oid
    start = raw.rfind(b" ", 0, end)
    # A name may contain spaces; entries of our history trees never do.
    return raw[start + 1 : end]


def _pack_header(kind: int, size: int) -> bytes:
    byte = (kind << 4) | (size & 0x0F)
    size >>= 4
    out = bytearray()
    while size:
        out.append(byte | 0x80)
        byte = size & 0x7F
        size >>= 7
    out.append(byte)
    return bytes(out)


def write_pack(pack_dir: Path, objects: list[tuple[int, bytes]], *, durable: bool = True) -> list[bytes]:
    """Write `objects` (type, raw content) as one pack with its index; return their ids."""
    known = [(kind, data, object_id(kind, data)) for kind, data in objects]
    write_known_pack(pack_dir, known, durable=durable)
    return [oid for _kind, _data, oid in known]


def write_known_pack(pack_dir: Path, objects: list[tuple[int, bytes, bytes]], *, durable: bool = True) -> None:
    """write_pack of objects whose ids the caller has computed already (type, raw content, id)."""
    body = bytearray(b"PACK\0\0\0\0\0\0\0\0")
    entries: list[tuple[bytes, int, int]] = []  # (oid, crc32, offset)
    seen: set[bytes] = set()
    for kind, data, oid in objects:
        if oid in seen:
            continue
        seen.add(oid)
        packed = _pack_header(kind, len(data)) + zlib.compress(data, 1)
        entries.append((oid, zlib.crc32(packed) & 0xFFFFFFFF, len(body)))
        body += packed
    _finish_pack(pack_dir, body, entries, durable)


def _finish_pack(pack_dir: Path, body: bytearray, entries: list[tuple[bytes, int, int]], durable: bool) -> str:
    """Seal a pack body (header count, trailer) and write it with its v2 index.

    The .pack is renamed into place before the .idx, so a reader never sees an index
    whose pack is missing.
    """
    pack_dir.mkdir(parents=True, exist_ok=True)
    struct.pack_into(">II", body, 4, 2, len(entries))
    pack_sha = hashlib.sha1(body).digest()
    body += pack_sha
    entries = sorted(entries)
    fanout = [0] * 256
    for oid, _, _ in entries:
        fanout[oid[0]] += 1
    total = 0
    for i in range(256):
        total += fanout[i]
        fanout[i] = total
    idx = bytearray(b"\xfftOc" + struct.pack(">I", 2))
    idx += struct.pack(">256I", *fanout)
    idx += b"".join(oid for oid, _, _ in entries)
    idx += b"".join(struct.pack(">I", crc) for _, crc, _ in entries)
    if any(off >= 0x80000000 for _, _, off in entries):
        raise ValueError("pack too large for 32-bit offsets")
    idx += b"".join(struct.pack(">I", off) for _, _, off in entries)
    idx += pack_sha
    idx += hashlib.sha1(idx).digest()
    name = f"pack-{pack_sha.hex()}"
    _write_file(pack_dir / f"{name}.pack", bytes(body), durable)
    _write_file(pack_dir / f"{name}.idx", bytes(idx), durable)
    return name


# ---------------------------------------------------------------------- merging turn packs

OFS_DELTA, REF_DELTA = 6, 7
MAX_DEPTH = 50  # like git's default pack.depth: reading a tree walks at most this many deltas


class MergeRefused(ValueError):
    """The packs cannot be merged by concatenation (e.g. an object in two of them)."""


def read_index(idx: bytes) -> list[tuple[bytes, int, int]]:
    """(oid, crc32, offset) of every object in a v2 .idx."""
    if idx[:8] != b"\xfftOc" + struct.pack(">I", 2):
        raise MergeRefused("not a version 2 pack index")
    count = struct.unpack_from(">I", idx, 8 + 255 * 4)[0]
    oids_at = 8 + 256 * 4
    crcs_at = oids_at + 20 * count
    offs_at = crcs_at + 4 * count
    crcs = struct.unpack_from(f">{count}I", idx, crcs_at)
    offs = struct.unpack_from(f">{count}I", idx, offs_at)
    if any(off & 0x80000000 for off in offs):
        raise MergeRefused("64-bit pack offsets")
    return [(idx[oids_at + 20 * i : oids_at + 20 * (i + 1)], crcs[i], offs[i]) for i in range(count)]


def _entry_header(pack: bytes | bytearray, off: int) -> tuple[int, int, int]:
    """(type, size, header length) of the pack entry at `off`."""
    c = pack[off]
    kind = (c >> 4) & 7
    size = c & 15
    shift = 4
    i = off + 1
    while c & 0x80:
        c = pack[i]
        i += 1
        size |= (c & 0x7F) << shift
        shift += 7
    return kind, size, i - off


def _ofs_encode(distance: int) -> bytes:
    out = [distance & 0x7F]
    distance >>= 7
    while distance:
        distance -= 1
        out.append(0x80 | (distance & 0x7F))
        distance >>= 7
    return bytes(reversed(out))


def _ofs_decode(pack: bytes | bytearray, i: int) -> tuple[int, int]:
    c = pack[i]
    i += 1
    distance = c & 0x7F
    while c & 0x80:
        c = pack[i]
        i += 1
        distance = ((distance + 1) << 7) | (c & 0x7F)
    return distance, i


def _delta_depth(pack: bytes | bytearray, off: int) -> int:
    depth = 0
    while True:
        kind, _, hl = _entry_header(pack, off)
        if kind == OFS_DELTA:
            distance, _ = _ofs_decode(pack, off + hl)
            off -= distance
            depth += 1
        elif kind == REF_DELTA:
            return MAX_DEPTH  # base elsewhere in the pack: do not chain onto it
        else:
            return depth


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def append_delta(base_len: int, suffix: bytes) -> bytes:
    """A git delta that rebuilds `base + suffix` from `base`: copy the base, insert the rest."""
    out = bytearray(_varint(base_len) + _varint(base_len + len(suffix)))
    pos = 0
    while pos < base_len:
        size = min(0xFFFFFF, base_len - pos)
        cmd = 0x80
        args = bytearray()
        for i in range(4):
            byte = (pos >> (8 * i)) & 0xFF
            if byte:
                cmd |= 1 << i
                args.append(byte)
        for i in range(3):
            byte = (size >> (8 * i)) & 0xFF
            if byte:
                cmd |= 0x10 << i
                args.append(byte)
        out.append(cmd)
        out += args
        pos += size
    for i in range(0, len(suffix), 127):
        chunk = suffix[i : i + 127]
        out.append(len(chunk))
        out += chunk
    return bytes(out)


def merge_packs(
    pack_dir: Path,
    base: Path | None,
    others: list[Path],
    history_base: callable[[bytes], tuple[bytes, bytes] | None],
    *,
    durable: bool = True,
) -> str:
    """Merge packs (given by their .idx paths) into one, without recompressing anything.

    `base` and any pack holding deltas are copied verbatim (their offset deltas stay valid).
    A pack without deltas (a turn pack) is copied entry by entry, and each history tree in it
    that extends the previous one is stored as an append delta, so the merged pack grows by
    what each turn added rather than by a whole tree per turn. `history_base(commit_raw)`
    names the parent commit's history tree (oid, raw) for the first tree of a run.
    """
    body = bytearray(b"PACK\0\0\0\0\0\0\0\0")
    entries: list[tuple[bytes, int, int]] = []
    where: dict[bytes, int] = {}
    prev: tuple[bytes, int, int] | None = None  # (raw history tree, offset in body, depth)

    def copy_verbatim(pack: bytes, index: list[tuple[bytes, int, int]]) -> None:
        shift = len(body) - 12
        body.extend(memoryview(pack)[12:-20])
        for oid, crc, off in index:
            if oid in where:
                raise MergeRefused("an object is in two packs")
            where[oid] = off + shift
            entries.append((oid, crc, off + shift))

    for idx_path in ([base] if base is not None else []) + others:
        pack = idx_path.with_suffix(".pack").read_bytes()
        index = read_index(idx_path.read_bytes())
        ordered = sorted(index, key=lambda e: e[2])
        kinds = [_entry_header(pack, off)[0] for _, _, off in ordered]
        if idx_path is base or any(k in (OFS_DELTA, REF_DELTA) for k in kinds):
            copy_verbatim(pack, index)
            prev = None
            continue
        bounds = [off for _, _, off in ordered] + [len(pack) - 20]
        commit_raw = None
        for (_, _, off), end, kind in zip(ordered, bounds[1:], kinds, strict=False):
            if kind == COMMIT:
                _, _, hl = _entry_header(pack, off)
                commit_raw = zlib.decompress(pack[off + hl : end])
        for (oid, crc, off), end, kind in zip(ordered, bounds[1:], kinds, strict=False):
            if oid in where:
                continue
            entry = pack[off:end]
            start = len(body)
            if kind == TREE:
                _, _, hl = _entry_header(pack, off)
                raw = zlib.decompress(pack[off + hl : end])
                if not raw.startswith(b"40000 history\0"):  # a history tree, not a root tree
                    if prev is None and commit_raw is not None:
                        hint = history_base(commit_raw)
                        if hint is not None and hint[0] in where:
                            prev = (hint[1], where[hint[0]], _delta_depth(body, where[hint[0]]))
                    if (
                        prev is not None
                        and prev[2] + 1 < MAX_DEPTH
                        and len(raw) > len(prev[0])
                        and raw.startswith(prev[0])
                    ):
                        delta = append_delta(len(prev[0]), raw[len(prev[0]) :])
                        entry = (
                            _pack_header(OFS_DELTA, len(delta)) + _ofs_encode(start - prev[1]) + zlib.compress(delta, 1)
                        )
                        crc = zlib.crc32(entry) & 0xFFFFFFFF
                        prev = (raw, start, prev[2] + 1)
                    else:
                        prev = (raw, start, 0)
            body += entry
            where[oid] = start
            entries.append((oid, crc, start))
    return _finish_pack(pack_dir, body, entries, durable)


def _write_file(path: Path, data: bytes, durable: bool) -> None:
    tmp = path.with_name(f"tmp_{path.name}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o444)
    try:
        write_all(fd, data)
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
