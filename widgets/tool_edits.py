"""File edits made by tool calls, as diffs: the backend's (backend/edits.py), which the exports
share with the replay."""

from __future__ import annotations

from opmem_tui.backend.edits import EDIT_TOOLS, MAX_DIFF_LINES, PATCH_BEGIN, FileEdit, parse_patch, tool_edits

__all__ = ["EDIT_TOOLS", "MAX_DIFF_LINES", "PATCH_BEGIN", "FileEdit", "parse_patch", "tool_edits"]
