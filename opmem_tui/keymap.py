"""Binding ids, their default keys, and the `[keys]` overrides from config.toml.

Every remappable binding is declared where it acts (app, screen or widget) with an `id=`;
this module gathers them for the keys screen and checks a user's overrides before they reach
`App.set_keymap`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from textual.binding import Binding


@dataclass(frozen=True)
class KeyInfo:
    id: str
    default: str
    keys: str
    description: str
    scope: str


def keyed_classes() -> list[tuple[str, type]]:
    """(scope title, class) for every class whose BINDINGS carry ids, in the order shown by `?`."""
    from opmem_tui.widgets.activity_view import ActivityView
    from opmem_tui.widgets.blame_view import BlameView
    from opmem_tui.widgets.commit_log import CommitLog
    from opmem_tui.widgets.core_view import CoreView
    from opmem_tui.widgets.diff_view import DiffView
    from opmem_tui.widgets.graph_explorer import GraphExplorer
    from opmem_tui.widgets.graph_tree import GraphLines
    from opmem_tui.widgets.item_lines import ItemLines
    from opmem_tui.widgets.project_list import ProjectList
    from opmem_tui.widgets.replay_view import ReplayPane, TurnView
    from opmem_tui.widgets.session_list import SessionList
    from opmem_tui.widgets.session_table import SessionTable
    from opmem_tui.widgets.timeline_view import TimelineView

    from .app import OpmemApp
    from .screens.main import MainScreen
    from .screens.search import SearchScreen
    from .tabs.memory import MemoryTab

    return [
        ("Everywhere", OpmemApp),
        ("Main screen", MainScreen),
        ("Session list", SessionList),
        ("Session list", SessionTable),
        ("Replay", ReplayPane),
        ("Replay", TurnView),
        ("Project list", ProjectList),
        ("Commit log", CommitLog),
        ("Commit diff", DiffView),
        ("Blame", BlameView),
        ("Memory", MemoryTab),
        ("Graph", GraphExplorer),
        ("Graph", GraphLines),
        ("core.md", CoreView),
        ("Timeline", TimelineView),
        ("Memory lists", ItemLines),
        ("Search everywhere", SearchScreen),
        ("Activity", ActivityView),
    ]


def _bindings_of(cls: type) -> Iterable[Binding]:
    for item in cls.__dict__.get("BINDINGS", ()):
        if isinstance(item, Binding):
            yield item


def default_bindings() -> dict[str, KeyInfo]:
    table: dict[str, KeyInfo] = {}
    for scope, cls in keyed_classes():
        for binding in _bindings_of(cls):
            if binding.id and binding.id not in table:
                table[binding.id] = KeyInfo(binding.id, binding.key, binding.key, binding.description, scope)
    return table


def load_overrides(raw: Mapping[str, Any], known: Iterable[str]) -> tuple[dict[str, str], list[str]]:
    """Valid overrides as {id: "key1,key2"} and one problem line per entry that was refused."""
    known_ids = set(known)
    overrides: dict[str, str] = {}
    problems: list[str] = []
    for binding_id, value in raw.items():
        if binding_id not in known_ids:
            problems.append(f"[keys] {binding_id!r}: no binding has this id (see `?` for the list)")
            continue
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            value = ",".join(value)
        if not isinstance(value, str) or not value.strip():
            problems.append(f'[keys] {binding_id!r}: expected a key string such as "ctrl+n" or "right,l"')
            continue
        keys = ",".join(part.strip() for part in value.split(",") if part.strip())
        overrides[binding_id] = keys
    return overrides, problems


def effective_bindings(overrides: Mapping[str, str]) -> list[KeyInfo]:
    """Every binding for the keys screen, with the keys it has now. An id bound in more than one
    place (`list.choose`: enter recentres in the graph, opens the turn in the other lists) is one
    row per place: a remap of the id moves them all."""
    out = []
    seen: set[tuple[str, str, str]] = set()
    for scope, cls in keyed_classes():
        for binding in _bindings_of(cls):
            if not binding.id or (binding.id, scope, binding.description) in seen:
                continue
            seen.add((binding.id, scope, binding.description))
            keys = overrides.get(binding.id, binding.key)
            out.append(KeyInfo(binding.id, binding.key, keys, binding.description, scope))
    return out
