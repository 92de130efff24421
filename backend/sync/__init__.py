"""The store on a git remote: one history on every machine (engine.py documents the layout and rules)."""

from __future__ import annotations

from .engine import Sync, SyncRefused, SyncReport, machine, machine_names, origins
from .gitcli import SyncError

__all__ = ["Sync", "SyncError", "SyncRefused", "SyncReport", "machine", "machine_names", "origins"]
