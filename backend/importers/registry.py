"""The importers, found as the concrete subclasses of `Importer`, and the tables derived from them.

An importer declares what it is (name, label, coding agent or not, id prefix, aliases,
discoverable, default locations, the shape of a session) as class attributes (base.py); nothing
here is kept by hand but the list of modules that define importers, imported so their classes exist.
"""

from __future__ import annotations

import inspect
from types import MappingProxyType

from . import (  # noqa: F401  (imported for their Importer subclasses)
    aider,
    amp,
    claude_code,
    cline,
    codex,
    continue_dev,
    copilot,
    crush,
    cursor,
    droid,
    exports,
    gemini,
    goose,
    gptme,
    grok,
    jsonl,
    kilo,
    kimi,
    opencode,
    openhands,
    openprogram,
    pi,
    qwen,
    specstory,
    vibe,
    vscode_chat,
    zed,
)
from .base import Importer


def importer_classes() -> list[type[Importer]]:
    """Every concrete Importer subclass, lower `rank` first, then by label."""
    found: dict[type[Importer], None] = {}
    pending = list(Importer.__subclasses__())
    while pending:
        cls = pending.pop(0)
        pending.extend(cls.__subclasses__())
        if not inspect.isabstract(cls) and "name" in vars(cls):
            found[cls] = None
    return sorted(found, key=lambda c: (c.rank, c.label.lower()))


SOURCES: MappingProxyType[str, Importer] = MappingProxyType({cls.name: cls() for cls in importer_classes()})
ALIASES: MappingProxyType[str, str] = MappingProxyType(
    {alias: imp.name for imp in SOURCES.values() for alias in imp.aliases}
)
LABELS: MappingProxyType[str, str] = MappingProxyType(
    {key: imp.label for imp in SOURCES.values() for key in dict.fromkeys((imp.name, imp.source, *imp.aliases))}
)
CODING_SOURCES = frozenset(imp.source for imp in SOURCES.values() if imp.coding)
ID_PREFIXES: MappingProxyType[str, str] = MappingProxyType(
    {imp.source: imp.id_prefix or imp.source for imp in SOURCES.values()}
)
