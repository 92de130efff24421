"""A brief's line: its text, the session it points to, and where the block shows it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from .results import GraphEdge

PARTS = ("stack", "command", "convention", "preference", "decision", "state", "environment", "layout", "progress")


@dataclass(frozen=True, slots=True)
class BriefLine:
    text: str
    session_id: str
    importance: float  # the layout takes lines in this order, highest first
    part: str = "state"  # where the line is shown (PARTS order), whatever its importance

    @property
    def order(self) -> float:
        """Display order, highest first: by part, then importance."""
        rank = PARTS.index(self.part) if self.part in PARTS else len(PARTS)
        return (len(PARTS) - rank) * 10 + self.importance


def day(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d")


def newest(edges: Iterable[GraphEdge]) -> GraphEdge:
    # ties broken by what the edge says, not its id (a hash of where the store is): the same
    # sessions give the same block, byte for byte, wherever they are distilled
    return max(
        edges, key=lambda g: (g.edge.event_time, g.edge.provenance.session_id, g.relation, g.edge.provenance.node_ids)
    )
