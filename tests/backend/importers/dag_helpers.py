"""Helpers the importer tests share: walk an ImportedSession's DAG, find the real fixtures."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import pytest

from opmem_tui.backend.importers.base import ImportedSession, ImportReport, LineImporter, feed_file
from opmem_tui.backend.model import Node


def fixtures_dir() -> Path | None:
    """/work/shared/fixtures beside the repo (or $OPMEM_FIXTURES); None when absent."""
    env = os.environ.get("OPMEM_FIXTURES")
    path = Path(env) if env else Path(__file__).resolve().parents[3] / ".." / "shared" / "fixtures"
    return path.resolve() if path.is_dir() else None


def fixture(relative: str) -> Path:
    base = fixtures_dir()
    if base is None or not (base / relative).is_file():
        pytest.skip(f"real fixture {relative} not available")
    return base / relative


def by_id(session: ImportedSession) -> dict[str, Node]:
    return {n.id: n for n in session.nodes}


def branch(session: ImportedSession, head: str | None = None) -> list[Node]:
    """The chain root..head (no tool nodes), following `parent`."""
    nodes = by_id(session)
    out: list[Node] = []
    current = head if head is not None else session.head
    while current is not None:
        node = nodes[current]
        out.append(node)
        current = node.parent_id
    return out[::-1]


def turn_count(session: ImportedSession, head: str | None = None) -> int:
    return sum(1 for n in branch(session, head) if n.role == "user")


def tools_of(session: ImportedSession, id: str) -> list[Node]:
    return [n for n in session.nodes if n.called_by == id]


def leaves(session: ImportedSession) -> set[str]:
    """Chain nodes nobody continues from: one per branch."""
    chain = [n for n in session.nodes if n.called_by is None]
    parents = {n.parent_id for n in chain}
    return {n.id for n in chain if n.id not in parents}


def assert_well_formed(session: ImportedSession, earlier: Iterable[str] = ()) -> None:
    """Unique ids, parents before children, tool nodes hang off the node that called them.

    `earlier`: ids returned by earlier (incremental) parses, valid as references."""
    seen: set[str] = set(earlier)
    for node in session.nodes:
        assert node.id not in seen, f"duplicate source id {node.id}"
        for ref in (node.parent_id, node.called_by):
            assert ref is None or ref in seen, f"{node.id} refers to {ref} before it"
        if node.called_by is not None:
            assert node.parent_id == node.called_by
        assert node.role in ("user", "assistant", "tool", "system")
        seen.add(node.id)
    if session.head is not None:
        assert session.head in seen, f"head {session.head} is not a returned node"


def parse_from(importer: LineImporter, path: Path, start_offset: int, *, final: bool) -> list[ImportedSession]:
    """What an incremental read returns: the nodes of `path` settled at or after `start_offset`."""
    report = ImportReport()
    parser = importer.open_parser(path, report)
    feed_file(parser, path, report)
    parser.taken_to = start_offset
    return parser.take(final=final)
