"""The files of one SQLite database on disk: the database and its side files.

The memory cache and the search index are derived data: when one cannot be read, or a rebuild
is abandoned, the database goes whole, side files included. A -journal or -wal left beside a
new database of the same name would be taken for that database's own and replayed into it.
"""

from __future__ import annotations

from pathlib import Path

SIDE_SUFFIXES = ("-journal", "-wal", "-shm")


def remove_database(path: Path) -> None:
    """Delete the database at `path` and its side files (those that exist). Only for derived
    data no connection holds open."""
    for suffix in ("", *SIDE_SUFFIXES):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
