"""A/B proof for an import speed-up: the same corpus imported by two checkouts, their homes compared.

  python bench/import_ab.py BASE_CHECKOUT [NEW_CHECKOUT] [--quick]

(e.g. `git worktree add --detach /tmp/base-x main` for BASE_CHECKOUT; NEW_CHECKOUT defaults to
this one). Each checkout imports bench/claude_corpus.py's corpus (50 MB; 5 MB with --quick)
the way its figure 3b does (run_import(defer_mirror=True) with the search-index hook, then the
background git mirror), in a process of its own, into a fresh home. Then they must match: every
file under sessions/ byte for byte (node files, meta.json; the store's random change tokens
apart), each session's git history (every ref's commits: tree, message; not their ids, which hold the time they were written at), import-state.json, and every row of every
table of memory/index.sqlite (the FTS shadow tables included; the sessions' file stamps, which
hold inode numbers and times, and the rows' commit ids masked). Exits 1 on a difference.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOP = {"opmem_tui": "opmem_tui", "opmem_tui.backend": "backend", "opmem_tui.widgets": "widgets"}


class _Checkout:
    """Import opmem_tui from one checkout's folders, not from the installed (editable) one."""

    root = ""

    @classmethod
    def find_spec(cls, name: str, path: object = None, target: object = None) -> object:
        if name not in TOP:
            return None
        folder = os.path.join(cls.root, TOP[name])
        return importlib.util.spec_from_file_location(
            name, os.path.join(folder, "__init__.py"), submodule_search_locations=[folder]
        )


def child(checkout: str, corpus: str, out: str) -> None:
    _Checkout.root = checkout
    sys.meta_path.insert(0, _Checkout)
    import opmem_tui.backend
    from opmem_tui.backend.home import Home
    from opmem_tui.backend.importers import run_import
    from opmem_tui.backend.importers.hooks import IngestHooks
    from opmem_tui.backend.store.mirror_backlog import MirrorWriter

    assert opmem_tui.backend.__file__.startswith(checkout), opmem_tui.backend.__file__
    home = Home(Path(out) / "home")
    hooks = IngestHooks(after_ingest=(home.search_index.after_ingest,))
    search = home.search_index
    if "mirrors" in inspect.signature(run_import).parameters:  # as `opmem import`: worker processes beside it
        from opmem_tui.backend.store.mirror_pool import default_workers

        writer = MirrorWriter(home.sessions, on_commits=search.after_mirror, workers=default_workers())
        report = run_import(home, "claude", [Path(corpus)], hooks=hooks, defer_mirror=True, mirrors=writer)
        writer.add(home.sessions.owed_mirrors())
    else:
        report = run_import(home, "claude", [Path(corpus)], hooks=hooks, defer_mirror=True)
        if hasattr(search, "after_mirror"):
            writer = MirrorWriter(home.sessions, on_commits=search.after_mirror)
        else:  # a checkout from before issue 41: the index read the sessions back
            writer = MirrorWriter(home.sessions, on_written=search.after_ingest)
        writer.add(sorted(report.mirror_pending))
    mirror = writer.run()
    home.search_index.close()
    print(
        f"{checkout}: {report.sessions} sessions, {report.nodes} nodes, {report.turns} turns, "
        f"{len(report.warnings)} warnings, {mirror.commits} mirror commits"
    )
    for warning in report.warnings:
        print("  warning:", warning)


def session_files(home: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    sessions = home / "sessions"
    for folder, dirs, names in os.walk(sessions):
        dirs[:] = [d for d in dirs if d not in (".git", ".locks")]
        for name in names:
            path = Path(folder) / name
            if path.parent == sessions and name in (".journal", ".changed"):
                continue  # random change tokens, by design
            out[str(path.relative_to(home))] = hashlib.sha1(path.read_bytes()).hexdigest()
    return out


def git_history(home: Path) -> dict[str, str]:
    """Per session: each ref's commits, newest first, as (tree, message, parents' count): a commit's
    id holds the wall-clock time it was written at, its tree and message do not."""
    import pygit2

    out: dict[str, str] = {}
    for folder in sorted((home / "sessions").iterdir()):
        if not (folder / ".git").is_dir():
            continue
        repo = pygit2.Repository(str(folder))
        lines = []
        for name in sorted(repo.references):
            for commit in repo.walk(repo.references[name].target, pygit2.enums.SortMode.TOPOLOGICAL):
                lines.append((name, str(commit.tree_id), commit.message, len(commit.parent_ids)))
        out[folder.name] = hashlib.sha1(repr(lines).encode()).hexdigest()
    return out


# Columns that differ between two runs by design: the file stamps (inode numbers, times) and the
# turn commits' ids (a commit holds the time it was written at; git_history compares the rest).
MASKED = {"sessions": {"stamp": "<stamp>"}, "docs": {"commit_id": "<commit>"}}


def index_rows(path: Path) -> dict[str, list[str]]:
    db = sqlite3.connect(path)
    out: dict[str, list[str]] = {}
    for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name"):
        columns = [row[1] for row in db.execute(f"PRAGMA table_info('{table}')")]
        rows = db.execute(f"SELECT * FROM '{table}'").fetchall()
        for name, mask in MASKED.get(table, {}).items():
            at = columns.index(name)
            rows = [(*row[:at], mask if row[at] is not None else None, *row[at + 1 :]) for row in rows]
        out[table] = sorted(map(repr, rows))
    db.close()
    return out


def compare(a: Path, b: Path) -> list[str]:
    problems = []
    for what, read in (("session files", session_files), ("git history", git_history)):
        left, right = read(a), read(b)
        differing = sorted(k for k in left.keys() | right.keys() if left.get(k) != right.get(k))
        print(f"{what}: {len(left)} vs {len(right)}, {len(differing)} differ")
        problems += [f"{what}: {k}" for k in differing[:20]]
    for name in ("import-state.json",):
        if (a / name).read_bytes() != (b / name).read_bytes():
            problems.append(name)
    left, right = index_rows(a / "memory" / "index.sqlite"), index_rows(b / "memory" / "index.sqlite")
    for table in sorted(left.keys() | right.keys()):
        same = left.get(table) == right.get(table)
        print(f"  index table {table}: {len(left.get(table, []))} rows{'' if same else ' DIFFER'}")
        if not same:
            problems.append(f"index table {table}")
    return problems


def main() -> int:
    if sys.argv[1:2] == ["--child"]:
        child(*sys.argv[2:5])
        return 0
    args = [a for a in sys.argv[1:] if a != "--quick"]
    if not args:
        print(__doc__)
        return 2
    base = str(Path(args[0]).resolve())
    new = str(Path(args[1]).resolve()) if len(args) > 1 else str(HERE.parent)
    sys.path.insert(0, str(HERE))
    from claude_corpus import corpus

    root = corpus(5 if "--quick" in sys.argv else 50) / "projects"
    with tempfile.TemporaryDirectory(prefix="opmem-ab-") as work:
        homes = []
        for label, checkout in (("base", base), ("new", new)):
            out = Path(work) / label
            subprocess.run([sys.executable, __file__, "--child", checkout, str(root), str(out)], check=True)
            homes.append(out / "home")
        problems = compare(*homes)
    print("the same" if not problems else "DIFFERENT: " + "; ".join(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
