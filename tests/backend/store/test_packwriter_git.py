"""The hand-written pack writer, checked by git itself (issue 9).

Random object sets and random session histories are written with packwriter (turn packs,
merged packs with append deltas, libgit2 repacks in between), then git must accept every pack:
`git verify-pack`, `git index-pack` (which must rebuild our .idx byte for byte), `git cat-file`
on every object (same type and bytes as written) and `git fsck --strict --full`.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pygit2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opmem_tui.backend.store.packwriter import (
    BLOB,
    COMMIT,
    MODE_BLOB,
    MODE_TREE,
    TREE,
    merge_packs,
    object_id,
    tree_entry,
    write_pack,
)
from opmem_tui.backend.store.sessions import SessionStore

KIND_NAMES = {BLOB: "blob", TREE: "tree", COMMIT: "commit"}
SETTINGS = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


def run_git(repo: Path, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, input=input)


def all_objects(repo: Path) -> dict[str, tuple[str, bytes]]:
    """{oid: (type, content)} of every object git finds, read with `git cat-file --batch`."""
    out = run_git(repo, "cat-file", "--batch-all-objects", "--batch")
    assert out.returncode == 0, out.stderr
    data, found, i = out.stdout, {}, 0
    while i < len(data):
        nl = data.index(b"\n", i)
        oid, kind, size = data[i:nl].decode().split()
        start = nl + 1
        found[oid] = (kind, data[start : start + int(size)])
        i = start + int(size) + 1
    return found


def check_with_git(repo: Path, expected: dict[str, tuple[str, bytes]] | None = None) -> None:
    pack_dir = repo / ".git" / "objects" / "pack"
    for idx in sorted(pack_dir.glob("pack-*.idx")):
        verified = run_git(repo, "verify-pack", "-v", str(idx))
        assert verified.returncode == 0, verified.stderr.decode() + verified.stdout.decode()[-2000:]
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / idx.with_suffix(".pack").name
            shutil.copy(idx.with_suffix(".pack"), copy)
            rebuilt = run_git(repo, "index-pack", str(copy))
            assert rebuilt.returncode == 0, rebuilt.stderr
            assert copy.with_suffix(".idx").read_bytes() == idx.read_bytes(), f"git indexes {idx.name} differently"
    if expected is not None:
        found = all_objects(repo)
        for oid, (kind, content) in expected.items():
            assert found.get(oid) == (kind, content), f"{oid}: git reads {found.get(oid, ('missing', b''))[0]}"
    fsck = run_git(repo, "fsck", "--strict", "--full", "--no-dangling")
    assert fsck.returncode == 0, fsck.stdout.decode() + fsck.stderr.decode()
    assert b"error" not in fsck.stderr and b"missing" not in fsck.stdout, fsck.stdout + fsck.stderr


# ---------------------------------------------------------------------------- random session-like histories

names = st.text(
    alphabet=st.characters(min_codepoint=33, max_codepoint=0x2FF, blacklist_characters="/\\"), min_size=1, max_size=12
).filter(lambda s: s not in (".", "..", ".git"))
contents = st.binary(max_size=300) | st.text(max_size=200).map(str.encode)


@st.composite
def histories(draw: st.DrawFn) -> list[tuple[int | None, list[tuple[str, bytes]], bool]]:
    """Turns: (parent turn or None, new files, sorted after the rest?) - forks, inserts, big and empty files."""
    turns = []
    for k in range(draw(st.integers(1, 14))):
        parent = None if k == 0 or draw(st.integers(0, 9)) == 0 else draw(st.integers(0, k - 1))
        files = draw(st.lists(st.tuples(names, contents), min_size=1, max_size=5, unique_by=lambda f: f[0]))
        turns.append((parent, files, draw(st.booleans())))
    return turns


def write_history(repo: Path, turns) -> tuple[dict[str, tuple[str, bytes]], list[Path]]:
    """Write each turn as the store does (one pack: blobs, history tree, root tree, commit)."""
    pack_dir = repo / ".git" / "objects" / "pack"
    expected: dict[str, tuple[str, bytes]] = {}
    commits: list[tuple[str, dict[bytes, bytes]]] = []  # (commit oid, history entries)
    for k, (parent, files, append) in enumerate(turns):
        entries = dict(commits[parent][1]) if parent is not None else {}
        objects: list[tuple[int, bytes]] = []
        for j, (name, data) in enumerate(files):
            # "append" turns name their files after every earlier one, as node files sort by seq
            file_name = (f"{k:06d}-{j}-{name}" if append else name).encode()
            objects.append((BLOB, data))
            entries[file_name] = object_id(BLOB, data)
        history = b"".join(MODE_BLOB + b" " + n + b"\0" + o for n, o in sorted(entries.items()))
        meta = f'{{"turn": {k}}}'.encode()
        root = tree_entry(MODE_TREE, "history", object_id(TREE, history)) + tree_entry(
            MODE_BLOB, "meta.json", object_id(BLOB, meta)
        )
        commit = b"tree " + object_id(TREE, root).hex().encode() + b"\n"
        if parent is not None:
            commit += b"parent " + commits[parent][0].encode() + b"\n"
        commit += b"author a <a@b> 1700000000 +0000\ncommitter a <a@b> 1700000000 +0000\n\nturn\n"
        objects += [(TREE, history), (BLOB, meta), (TREE, root), (COMMIT, commit)]
        write_pack(pack_dir, objects, durable=False)
        for kind, data in objects:
            expected[object_id(kind, data).hex()] = (KIND_NAMES[kind], data)
        commits.append((object_id(COMMIT, commit).hex(), entries))
    heads = {oid for oid, _ in commits} - {commits[p][0] for p, _, _ in turns if p is not None}
    for i, oid in enumerate(sorted(heads)):
        (repo / ".git" / "refs" / "heads" / f"line-{i}").write_text(oid + "\n")
    return expected, sorted(pack_dir.glob("pack-*.idx"), key=lambda p: p.stat().st_mtime_ns)


def history_base_of(repo: Path):
    git = pygit2.Repository(str(repo))

    def base(commit_raw: bytes):
        for line in commit_raw.split(b"\n"):
            if line.startswith(b"parent "):
                tree = git[line[7:].decode()].peel(pygit2.Commit).tree["history"]
                return tree.id.raw, git.odb.read(tree.id)[1]
            if not line:
                return None
        return None

    return base


@SETTINGS
@given(turns=histories(), split=st.integers(1, 4), data=st.data())
def test_turn_packs_and_merged_packs_pass_git(tmp_path_factory, turns, split, data) -> None:
    repo = tmp_path_factory.mktemp("repo")
    pygit2.init_repository(str(repo), initial_head="main")
    expected, packs = write_history(repo, turns)
    check_with_git(repo, expected)
    # Merge runs of turn packs, as the store does once they pile up; then merge merged packs.
    for _ in range(split):
        packs = sorted((repo / ".git" / "objects" / "pack").glob("pack-*.idx"), key=lambda p: p.stat().st_mtime_ns)
        if len(packs) < 2:
            break
        base = data.draw(st.sampled_from(packs))
        others = [p for p in packs if p != base]
        merged = merge_packs(base.parent, base, others, history_base_of(repo), durable=False)
        for idx in packs:
            if idx.stem != merged:
                idx.unlink()
                idx.with_suffix(".pack").unlink()
        check_with_git(repo, expected)


# ---------------------------------------------------------------------------- arbitrary object sets


@st.composite
def object_sets(draw: st.DrawFn) -> list[tuple[int, bytes]]:
    blobs = [(BLOB, b) for b in draw(st.lists(contents, min_size=1, max_size=12))]
    objects = list(blobs)
    trees: list[bytes] = []
    for _ in range(draw(st.integers(0, 5))):
        chosen = draw(st.lists(st.tuples(names, st.sampled_from(objects[: len(blobs)])), max_size=6))
        entries = {n.encode(): (MODE_BLOB, object_id(BLOB, b[1])) for n, b in chosen}
        if trees and draw(st.booleans()):
            sub = draw(st.sampled_from(trees))
            entries[draw(names).encode()] = (MODE_TREE, object_id(TREE, sub))
        # git orders a tree entry as if its name ended in "/"
        ordered = sorted(entries.items(), key=lambda e: e[0] + (b"/" if e[1][0] == MODE_TREE else b""))
        raw = b"".join(m + b" " + n + b"\0" + o for n, (m, o) in ordered)
        trees.append(raw)
        objects.append((TREE, raw))
    if trees:
        parents: list[bytes] = []
        for k in range(draw(st.integers(0, 4))):
            raw = b"tree " + object_id(TREE, draw(st.sampled_from(trees))).hex().encode() + b"\n"
            for p in draw(st.lists(st.sampled_from(parents), max_size=2, unique=True)) if parents else []:
                raw += b"parent " + p + b"\n"
            message = draw(st.text(max_size=80)).replace("\0", "")
            raw += f"author a <a@b> {1700000000 + k} +0000\ncommitter a <a@b> {1700000000 + k} +0000\n\n{message}\n".encode()
            parents.append(object_id(COMMIT, raw).hex().encode())
            objects.append((COMMIT, raw))
    # duplicates and any order: a pack holds each object once, whatever order it came in
    return draw(st.permutations(objects + draw(st.lists(st.sampled_from(objects), max_size=3))))


@SETTINGS
@given(objects=object_sets())
def test_any_object_set_is_a_pack_git_reads(tmp_path_factory, objects) -> None:
    repo = tmp_path_factory.mktemp("repo")
    pygit2.init_repository(str(repo), initial_head="main")
    ids = write_pack(repo / ".git" / "objects" / "pack", objects, durable=False)
    assert ids == [object_id(kind, data) for kind, data in objects]
    expected = {object_id(kind, data).hex(): (KIND_NAMES[kind], data) for kind, data in objects}
    commits = [object_id(k, d).hex() for k, d in objects if k == COMMIT]
    for i, oid in enumerate(commits):
        (repo / ".git" / "refs" / "heads" / f"c{i}").write_text(oid + "\n")
    check_with_git(repo, expected)


# ---------------------------------------------------------------------------- the store end to end

ops = st.lists(
    st.tuples(st.sampled_from(["turn", "turn", "turn", "fork", "tools", "repack"]), st.text(max_size=40)),
    min_size=1,
    max_size=25,
)


@SETTINGS
@given(steps=ops, threshold=st.integers(2, 5))
def test_a_session_repo_built_by_the_store_passes_git(tmp_path_factory, steps, threshold) -> None:
    root = tmp_path_factory.mktemp("sessions")
    store = SessionStore(root, pack_threshold=threshold, durable=False)
    user = None
    for op, text in steps:
        if op == "repack" and user is not None:
            store.pack("s")
            continue
        parent = {} if op != "fork" or user is None else {"parent_id": user.parent_id}
        user = store.append_message("s", "user", f"{op} {text}", **parent)
        reply = store.append_message("s", "assistant", text or "ok")
        for i in range(3 if op == "tools" else 0):
            store.append_message("s", "tool", text * i, called_by=reply.id, name="read")
        store.commit_turn("s")
    store.flush()
    check_with_git(root / "s")
    status = run_git(root / "s", "status", "--porcelain")
    assert status.returncode == 0 and status.stdout == b"", status.stdout


def test_git_writes_keep_libgit2s_strict_object_checks(tmp_path: Path) -> None:
    # Run in a fresh process: the setting is process-wide, and any import could change it.
    script = textwrap.dedent(
        f"""
        import pygit2
        from opmem_tui.backend.home import Home
        from opmem_tui.backend import projects, importers  # noqa: F401
        home = Home({str(tmp_path / "home")!r})
        for k in range(4):
            home.sessions.append_message("s", "user", f"q{{k}}")
            home.sessions.append_message("s", "assistant", "a")
            home.sessions.commit_turn("s")
        home.sessions.pack("s")
        repo = pygit2.init_repository({str(tmp_path / "project")!r})
        builder = repo.TreeBuilder()
        try:
            builder.insert("x", pygit2.Oid(hex="1" * 40), pygit2.enums.FileMode.BLOB)
        except pygit2.GitError:
            print("strict")
        else:
            print("not strict")
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "strict"
