"""What the reliability suites check on a store: git fsck, node files, memory logs, the search index."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

from opmem_tui.backend.home import Home

WRITER = Path(__file__).with_name("crash_writer.py")


def fsck(path: Path) -> str:
    """`git fsck --strict` output ('' when clean)."""
    return fsck_all([path])[0]


def fsck_all(paths: list[Path]) -> list[str]:
    """`git fsck --strict` of each repository, run side by side: each one's output ('' when clean)."""
    procs = [
        subprocess.Popen(
            ["git", "-C", str(path), "fsck", "--strict", "--no-progress", "--no-dangling"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"},
        )
        for path in paths
    ]
    outputs = []
    for proc in procs:
        out, _ = proc.communicate()
        # "notice: HEAD points to an unborn branch" is a session killed before its first node: no error
        lines = [line for line in out.splitlines() if line and not line.startswith("notice:")]
        outputs.append("\n".join(lines) or (f"exit {proc.returncode}" if proc.returncode else ""))
    return outputs


def session_paths(home: Home) -> dict[str, Path]:
    return {meta.id: home.sessions.path_for(meta.id) for meta in home.sessions.list_sessions().sessions}


def reopen_and_fsck(home: Home) -> list[str]:
    """Open every session, backfill what git misses (`opmem verify`: reads take no lock and
    write nothing, so the backfill is the next write's or verify's), then fsck each repo."""
    problems: list[str] = []
    listing = home.sessions.list_sessions(rescan=True)
    problems.extend(listing.problems)
    for meta in listing.sessions:
        home.sessions.get_turns(meta.id)
        if home.sessions.problems(meta.id):
            problems.extend(home.sessions.problems(meta.id))
    problems.extend(home.sessions.verify(repair=True).problems)
    home.sessions.flush()
    paths = [home.sessions.path_for(meta.id) for meta in listing.sessions]
    for path, out in zip(paths, fsck_all(paths), strict=True):
        if out:
            problems.append(f"{path}: git fsck --strict: {out}")
        missing = _nodes_not_in_git(path)
        if missing:
            problems.append(f"{path}: {len(missing)} node file(s) in no commit after the backfill")
    return problems


def _nodes_not_in_git(path: Path) -> set[str]:
    """Node files that no branch's commits hold (after the backfill there must be none)."""
    proc = subprocess.run(
        ["git", "-C", str(path), "log", "--all", "--name-only", "--format="],
        capture_output=True,
        text=True,
    )
    in_git = {Path(line).name for line in proc.stdout.splitlines() if line.startswith("history/")}
    on_disk = {p.name for p in (path / "history").glob("*.json")}
    return on_disk - in_git


def read_acks(path: Path) -> list[list[str]]:
    """The acknowledged lines (a torn last line was never acknowledged)."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return []
    lines = text.split("\n")
    return [line.split(" ") for line in lines[:-1] if line]


def start_writer(kind: str, home: Path, acks: Path, seed: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(WRITER), kind, str(home), str(acks), str(seed), "project"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def memory_lines(home: Home) -> Counter:
    """Every record line of the memory logs, ingestion times dropped (they differ by run)."""
    found: Counter = Counter()
    for path in sorted(home.memory_dir.rglob("*.jsonl")):
        if path.name == "contradictions.jsonl":
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                data = json.loads(line)
            except ValueError:
                continue  # a torn line: not a record (the store reports it)
            data.pop("ingestion_time", None)
            data.pop("at", None)
            if isinstance(data.get("provenance"), dict):
                data["provenance"].pop("ingestion_time", None)
            found[(path.relative_to(home.memory_dir).as_posix(), json.dumps(data, sort_keys=True))] += 1
    return found


def bad_log_lines(home: Home) -> list[str]:
    """Whole memory log lines that do not parse."""
    return [f"{path}:{n}" for path in sorted(home.memory_dir.rglob("*.jsonl")) for n in bad_lines(path)]


def bad_lines(path: Path) -> list[int]:
    """Numbers of the whole (newline-ended) lines of a JSONL log that do not parse; an unended
    last line is a torn append, which readers skip, so it is not counted."""
    lines = path.read_bytes().split(b"\n")
    bad = []
    for number, line in enumerate(lines[:-1], 1):
        try:
            json.loads(line)
        except ValueError:
            bad.append(number)
    return bad


def index_dump(home: Home) -> dict[str, list]:
    """What memory/index.sqlite holds, independent of row ids and of the order rows were written:
    every doc row (its `prev` as a node id), every term instance of the turns' full-text index
    (through fts5vocab, keyed by session and node), every record row, every session cursor."""
    db = sqlite3.connect(home.search_index.path)
    try:
        db.execute("CREATE VIRTUAL TABLE temp.turn_terms USING fts5vocab(main, 'turns_fts', 'instance')")
        dump = {
            "docs": "SELECT s.session_id, d.kind, d.node, d.seq, d.role, d.turn, d.commit_id, d.time, d.speaker, p.node "
            "FROM docs d JOIN sessions s ON s.id = d.sess LEFT JOIN docs p ON p.id = d.prev WHERE s.dead = 0",
            "terms": "SELECT s.session_id, d.node, t.term, t.col, t.offset FROM temp.turn_terms t "
            "JOIN docs d ON d.id = t.doc JOIN sessions s ON s.id = d.sess",
            "records": "SELECT record_id, kind, session_id, node_ids, turn, commit_id, time, scope, body, entities, "
            "source FROM records",
            "record_entities": "SELECT e.entity_id, r.record_id FROM record_entities e JOIN records r ON r.id = e.rec",
            "sessions": "SELECT session_id, scope, cursor FROM sessions WHERE dead = 0",
            "superseded": "SELECT * FROM superseded",
            "aliases": "SELECT * FROM aliases",
            "names": "SELECT * FROM names",
        }
        return {key: _ordered(db, query) for key, query in dump.items()}
    finally:
        db.close()


def _ordered(db: sqlite3.Connection, query: str) -> list:
    """The rows ordered by SQLite on every column (cheaper than sorting ~300,000 term rows in Python)."""
    columns = len(db.execute(f"{query} LIMIT 0").description)
    return db.execute(f"{query} ORDER BY {', '.join(str(n) for n in range(1, columns + 1))}").fetchall()
