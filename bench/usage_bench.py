"""Usage reports and the Activity tab over a synthetic usage index of 10,000 sessions.

  python bench/usage_bench.py [--quick]

The index rows are synthesised directly (2 million replies of 10,000 sessions over a year, four
agents, thirteen projects, five models, costs from the shipped price table's per-token prices);
the store beside it holds the 10,000 sessions as meta.json-only folders whose `updated_at` the
index has seen, so the Activity tab draws from the index without reading a session file.

Figures, each beside its baseline from the same run:
- `opmem usage daily` (backend/usage/reports.report, connection and staleness check included),
  warm: best of 5, against a bare SQL sum of the same reply rows (target: <= 1 s);
- the same, cold: the database file's pages dropped from the OS cache (posix_fadvise DONTNEED)
  and a new connection before each run, both sides (target: <= 2x the bare sum);
- the Activity tab's first draw (Textual's pilot: press 4, until the counts are shown) on the
  10,000-session store, beside the same on a 1-session store (target: <= 1 s).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sqlite3
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import best_of, fmt, parser, report

from opmem_tui.backend.home import Home
from opmem_tui.backend.usage.index import ROLL_DAY_SUMS, SCHEMA, SCHEMA_VERSION, USAGE_COLUMNS, USAGE_FILE, zone_name
from opmem_tui.backend.usage.prices import PriceTable
from opmem_tui.backend.usage.reports import Filters, query
from opmem_tui.backend.usage.reports import report as usage_report
from opmem_tui.backend.usage.tokens import TokenCounts

NOW = 1_767_225_600.0  # 2026-01-01 00:00 UTC
YEAR = 365 * 86_400
SOURCES = ("claude-code", "codex", "gemini", "opencode")
MODELS = ("claude-sonnet-4-5", "claude-opus-4-6", "gpt-5", "gemini-2.5-pro", "local-model-x")
BARE_SUM = "SELECT sum(input), sum(output), sum(cache_write), sum(cache_read), sum(reasoning), sum(cost) FROM usage"


def unit_prices() -> dict[str, tuple[float, ...] | None]:
    """Dollars per token of each kind per model (None: not in the table), from the shipped table."""
    table = PriceTable()
    out = {}
    for model in MODELS:
        kinds = [
            TokenCounts(input=1_000),
            TokenCounts(output=1_000),
            TokenCounts(cache_write=1_000),
            TokenCounts(cache_read=1_000),
        ]
        prices = [table.cost(model, k, NOW - 86_400) for k in kinds]
        out[model] = None if prices[0] is None else tuple((p or 0.0) / 1_000 for p in prices)
    return out


def build(root: Path, sessions: int, replies: int) -> Path:
    """meta.json-only sessions under root/sessions and memory/usage.sqlite with `replies` rows each."""
    rng = random.Random(7)
    prices = unit_prices()
    folder = root / "sessions"
    folder.mkdir(parents=True)
    metas = []
    for i in range(sessions):
        d = folder / f"s{i:05d}"
        d.mkdir()
        start = NOW - YEAR + rng.random() * (YEAR - 10 * 86_400)
        meta = {
            "id": d.name, "title": f"session {i}", "title_source": "excerpt", "agent_id": "",
            "project_id": f"proj{i % 13}", "source": SOURCES[i % 4], "source_ref": None,
            "created_at": start, "updated_at": start + 5 * 86_400, "head_id": None, "turns": replies // 10,
        }  # fmt: skip
        (d / "meta.json").write_text(json.dumps(meta))
        metas.append(meta)
    path = root / "memory" / USAGE_FILE
    path.parent.mkdir(parents=True)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(SCHEMA)
    with conn:
        for meta in metas:
            sid, source, project = meta["id"], meta["source"], meta["project_id"]
            rows, turns = [], []
            for seq in range(replies):
                ts = meta["created_at"] + seq * (5 * 86_400 / replies)
                day = datetime.fromtimestamp(ts).date().isoformat()
                model = MODELS[(hash(sid) + seq // 50) % len(MODELS)]
                counts = (
                    rng.randint(1, 3_000),
                    rng.randint(50, 4_000),
                    rng.randint(0, 20_000),
                    rng.randint(0, 150_000),
                )
                unit = prices[model]
                cost = None if unit is None else sum(c * p for c, p in zip(counts, unit, strict=True))
                rows.append((sid, 2 * seq + 1, ts, day, source, project, model, *counts, 0, cost))
                if seq % 10 == 0:
                    turns.append((sid, 2 * seq, ts - 1, day, source, project))
            conn.executemany(f"INSERT INTO usage ({USAGE_COLUMNS}) VALUES ({', '.join('?' * 13)})", rows)
            conn.executemany("INSERT INTO turns VALUES (?, ?, ?, ?, ?, ?)", turns)
            conn.execute(
                "INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?)",
                (sid, 2 * replies, source, project, "", meta["updated_at"]),
            )
        conn.execute(
            "INSERT INTO daily SELECT day, session_id, model, source, project_id, count(*), count(cost), sum(input),"
            " sum(output), sum(cache_write), sum(cache_read), sum(reasoning), sum(cost), max(ts) FROM usage"
            " GROUP BY day, session_id, model"
        )
        conn.execute(
            "INSERT INTO session_days SELECT day, session_id, source, project_id, sum(turns), sum(tokens), sum(cost),"
            " sum(unpriced) FROM (SELECT day, session_id, source, project_id, 0 AS turns,"
            " input + output + cache_write + cache_read AS tokens, coalesce(cost, 0) AS cost,"
            " CASE WHEN cost IS NULL THEN input + output + cache_write + cache_read ELSE 0 END AS unpriced FROM usage"
            " UNION ALL SELECT day, session_id, source, project_id, 1, 0, 0, 0 FROM turns) GROUP BY day, session_id"
        )
        conn.execute(
            "INSERT INTO session_totals SELECT session_id, sum(input), sum(output), sum(cache_write), sum(cache_read),"
            " sum(reasoning), sum(cost), sum(replies), sum(priced) FROM daily GROUP BY session_id"
        )
        for statement in ROLL_DAY_SUMS:  # the per-day sums of every day
            conn.execute(statement.format(days="SELECT DISTINCT day FROM session_days"))
        wanted = {"schema": SCHEMA_VERSION, "prices": PriceTable().version, "zone": zone_name(None)}
        conn.executemany("INSERT INTO meta VALUES (?, ?)", wanted.items())
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path


def drop_cache(path: Path) -> None:
    """The file's pages out of the OS page cache (clean pages: no root needed)."""
    for name in (path, Path(f"{path}-wal")):
        if name.exists():
            fd = os.open(name, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def bare_sum(path: Path) -> None:
    conn = sqlite3.connect(path)
    try:
        conn.execute(BARE_SUM).fetchone()
    finally:
        conn.close()


def cold(fn, path: Path, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        drop_cache(path)
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


async def first_draw(root: Path) -> float:
    from opmem_tui.app import OpmemApp
    from opmem_tui.widgets.activity_view import ActivityView

    app = OpmemApp(Home(root, durable=False), now=lambda: NOW, poll_interval=0)
    async with app.run_test(size=(160, 48)) as pilot:
        table = app.screen.query_one("SessionTable")
        while not table.rows:  # the listing first: the Activity tab counts what it lists
            await asyncio.sleep(0.005)
        start = time.perf_counter()
        await pilot.press("4")
        view = app.screen.query_one(ActivityView)
        while view.activity is None:
            await asyncio.sleep(0.002)
        await pilot.pause()
        return time.perf_counter() - start


def main() -> None:
    args = parser(__doc__.splitlines()[0]).parse_args()
    sessions, replies = (1_000, 200) if args.quick else (10_000, 200)
    with tempfile.TemporaryDirectory(prefix="opmem-usage-bench-") as tmp:
        big, small = Path(tmp) / "big", Path(tmp) / "small"
        started = time.perf_counter()
        path = build(big, sessions, replies)
        build(small, 1, replies)
        print(f"built {sessions:,} sessions, {sessions * replies:,} reply rows in {fmt(time.perf_counter() - started)}")
        index = Home(big, durable=False).usage
        result = usage_report(index, "daily")
        with sqlite3.connect(path) as conn:
            bare = conn.execute(BARE_SUM).fetchone()
        assert result.total.total == sum(bare[:4]), "the report and the bare sum disagree"
        from opmem_tui.backend.activity import ActivityCounter

        listed = Home(big, durable=False).sessions.list_sessions().sessions
        assert ActivityCounter(index).count(listed).usage.total == result.total.total, "the Activity tab disagrees"
        warm = best_of(lambda: usage_report(index, "daily"), 5)
        warm_bare = best_of(lambda: bare_sum(path), 5)
        report("daily report, warm", warm, warm_bare, "bare SQL sum", "<= 1 s", warm <= 1.0)
        ours_cold = cold(lambda: usage_report(index, "daily"), path, 3)
        bare_cold = cold(lambda: bare_sum(path), path, 3)
        report("daily report, cold", ours_cold, bare_cold, "bare SQL sum, cold", "<= 2x", ours_cold <= 2 * bare_cold)
        with index.connect() as conn:
            filtered = best_of(lambda: query(conn, "model", Filters(agent="codex", since="2025-06-01")), 3)
        print(f"model report, one agent since June (warm connection): {fmt(filtered)}")
        draws = [asyncio.run(first_draw(big)) for _ in range(3)]
        base = [asyncio.run(first_draw(small)) for _ in range(3)]
        draw, draw_base = min(draws), min(base)
        report(f"Activity tab first draw, {sessions:,} sessions", draw, draw_base, "1 session", "<= 1 s", draw <= 1.0)


if __name__ == "__main__":
    main()
