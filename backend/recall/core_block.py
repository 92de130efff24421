"""The core block an agent gets (ARCHITECTURE.md §7): the one the memory's renderer wrote.

The distillation writes core.md for every scope each time it consolidates (memory/core.md, and
memory/projects/<id>/core.md per project), dated that day. This module hands that file back;
a scope with no core.md yet (never consolidated), or a file that is not a block the renderer
could have written (hand-edited past the budget, not UTF-8), gets the block rendered now from
the memory, read-only, with today's date. Either way the text comes from memory.core's one
renderer; nothing is written.
"""

from __future__ import annotations

import os
import time

from ..memory.core import CORE_BUDGET, RULE, consolidation_day, core_path, render_core
from ..privacy import redact_text
from ..projects.known import NOT_HERE, unbound_projects
from ..safe_text import plain
from ..session_pointers import known_session_ids
from .context import Recall


def core_block(recall: Recall, project_id: str | None = None) -> str:
    """The core block for a project (default: the caller's), or the global one outside projects."""
    project = recall.project(project_id) if project_id or recall.scope.project_id else None
    path = core_path(recall.home.memory_dir, project.id if project else "")
    try:
        data = path.read_bytes()
    except OSError:
        data = b""
    if 0 < len(data) <= CORE_BUDGET:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = ""
        if text.startswith(RULE):
            text = redact_text(plain(text))  # the last gate: a core.md of an older opmem may hold a value
            if len(text.encode("utf-8")) <= CORE_BUDGET:
                return text

    memory = recall.memory
    memory.refresh()
    day = consolidation_day(time.time() if recall.now is None else recall.now)
    sessions = known_session_ids(recall.home.sessions)  # a pointer's short id is unique among them
    if project is None:
        return redact_text(render_core(memory, day, sessions=sessions))
    bound = project.status != "folder"
    return redact_text(render_core(memory, day, project.id, project.name, bound=bound, sessions=sessions))


def has_content(block: str) -> bool:
    """Whether a block holds any memory line (each ends with its pointer)."""
    return "↪ session:" in block


def blocks_index(recall: Recall) -> str:
    """What `opmem core` says outside any project: which blocks exist and how to get one."""
    bound = recall.home.projects.list_projects()
    unbound = unbound_projects(recall.home)
    if not bound and not unbound:
        return "opmem: no project blocks yet (import sessions with `opmem import`, then `opmem distill`)\n"
    lines = ["opmem: this folder is in no project. Blocks the memory holds (`opmem core --project ID`):"]
    for p in bound:
        where = "" if os.path.isdir(p.workdir) else f", {NOT_HERE}"
        lines.append(f"  {p.id}  {plain(p.name)}  (bound: {plain(p.workdir)}{where})")
    for u in unbound:
        lines.append(f"  {u.id}  {plain(u.name)}  ({u.where}: {plain(u.workdir)})")
    return redact_text("\n".join(lines)) + "\n"
