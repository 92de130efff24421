"""The writer process of the faults suite: `python fault_writer.py ERRNO AFTER -- opmem ARGS...`.

Installs a fault-injecting wrapper around os.write, os.fsync, os.replace, os.rename, os.link,
os.mkdir, os.open and open() for writing: the first AFTER calls pass, every later one raises
OSError(ERRNO) (ENOSPC: a full disk; EROFS: a read-only home). AFTER = -1 only counts the calls
and prints the count. Then runs the opmem CLI with ARGS, as a user would.

SQLite writes through its own C code, past these wrappers: with FAULT_SQLITE_PAGES=N set, every
database opened under FAULT_UNDER (the search index, the memory cache) may grow by N pages
only (PRAGMA max_page_count), after which SQLite fails the write with SQLITE_FULL ("database or
disk is full"), as on a full disk.
"""

from __future__ import annotations

import builtins
import errno
import io
import os
import sys

calls = {"n": 0}


def main() -> None:
    code, after = int(sys.argv[1]), int(sys.argv[2])
    args = sys.argv[sys.argv.index("--") + 2 :]
    paths = os.environ["FAULT_UNDER"]  # only writes under this folder fail (not the interpreter's own)

    def fault(target: object) -> None:
        if isinstance(target, int):  # a descriptor: a file under the folder, not a pipe (a full disk leaves pipes be)
            try:
                target = os.readlink(f"/proc/self/fd/{target}")
            except OSError:
                pass  # no /proc: every descriptor counts, as before
            else:
                if not target.startswith(paths):
                    return
        elif not str(target).startswith(paths):
            return
        calls["n"] += 1
        if after >= 0 and calls["n"] > after:
            raise OSError(code, os.strerror(code), str(target))

    def wrap(fn, *, writes=lambda *a, **k: True, target=lambda *a, **k: a[0]):
        def wrapper(*args, **kwargs):
            if writes(*args, **kwargs):
                fault(target(*args, **kwargs))
            return fn(*args, **kwargs)

        return wrapper

    os.write = wrap(os.write)
    os.fsync = wrap(os.fsync)
    os.replace = wrap(os.replace, target=lambda a, b, **k: b)
    os.rename = wrap(os.rename, target=lambda a, b, **k: b)
    os.link = wrap(os.link, target=lambda a, b, **k: b)  # an unnamed node file given its name
    os.mkdir = wrap(os.mkdir)
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
    os.open = wrap(os.open, writes=lambda path, flags, *a, **k: bool(flags & write_flags))
    opened = wrap(builtins.open, writes=lambda file, mode="r", *a, **k: any(c in mode for c in "wax+"))
    builtins.open = io.open = opened

    if os.environ.get("FAULT_SQLITE_PAGES"):
        limit_sqlite(paths, int(os.environ["FAULT_SQLITE_PAGES"]))

    from opmem_tui.cli import main as cli

    try:
        cli.main(args, prog_name="opmem", standalone_mode=True)
    finally:
        if after < 0:
            print(f"fault-calls {calls['n']}", file=sys.stderr, flush=True)


def limit_sqlite(under: str, pages: int) -> None:
    import sqlite3

    connect = sqlite3.connect

    def limited(database, *args, **kwargs):
        db = connect(database, *args, **kwargs)
        if str(database).startswith(under):
            grown = db.execute("PRAGMA page_count").fetchone()[0] + pages
            db.execute(f"PRAGMA max_page_count = {grown}")
        return db

    sqlite3.connect = limited


if __name__ == "__main__":
    assert errno.ENOSPC
    main()
