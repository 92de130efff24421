"""The daily sleep (`opmem sleep`, and `[distill] sleep_at` each day): consolidation.

Under the run lock: distil what is pending, re-link every entity against every other (merges
the day's batches could not see), reconcile every single-valued relation across all
subjects, rebuild core.md and the entity views, pack the session repositories, and record
when it ran (state.json), so a missed sleep is caught up at the next start.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..memory import relations
from ..memory.redaction_upgrade import redact_earlier_memory
from .link import LINK_TYPES, relink
from .memory_port import log_contradictions
from .model import Extraction, Linked, Reconciled, RunReport, Written
from .pipeline import CancelFn, DistillJob, ProgressFn, RunOptions, distil_pending, run_lock
from .project import project_all
from .reconcile import resolve_chain
from .state import load_state

if TYPE_CHECKING:
    from ..home import Home

# the knowledge slots (a project's test framework, its test command, ...) hold one value at a time too
KNOWLEDGE_SLOTS = tuple(sorted(relations.names(single=True)))


@dataclass(frozen=True, slots=True)
class SleepReport:
    run: RunReport = field(default_factory=RunReport)
    written: Written = field(default_factory=Written)
    contradictions: int = 0
    packed: int = 0
    notes: tuple[str, ...] = ()
    cancelled: bool = False
    seconds: float = 0.0

    def line(self) -> str:
        text = (
            f"slept: {self.run.line()}; re-linked {self.written.merges:,} aliases, "
            f"{self.written.patches:,} supersedes ({self.contradictions:,} contradictions), "
            f"core.md and views rebuilt, {self.packed:,} session repos packed"
        )
        return text + (" (cancelled)" if self.cancelled else "")


def sleep(
    home: Home,
    *,
    progress: ProgressFn | None = None,
    cancel: CancelFn | None = None,
    lock_timeout: float = 0.0,
) -> SleepReport:
    started = time.monotonic()
    with run_lock(home, lock_timeout):
        redact_earlier_memory(home, project_all)
        job = DistillJob(home, RunOptions(project=False, scan=True), progress, cancel)
        job.state = load_state(home.memory_dir)
        report = distil_pending(job, started)
        if report.cancelled:
            return SleepReport(run=report, cancelled=True, seconds=time.monotonic() - started)
        job.tell("relink", 0, 3, "aliases")
        port = job.memory()
        merges = relink(port.known_entities(LINK_TYPES), at=job.now)
        job.tell("reconcile", 1, 3, "single-valued relations")
        patches, contradictions = [], []
        for relation in dict.fromkeys([*home.config.distill.single_valued, *KNOWLEDGE_SLOTS]):
            groups: dict[tuple[str, str], list] = {}
            for edge in port.relation_edges(relation):
                groups.setdefault((edge.from_id, edge.scope), []).append(edge)
            for edges in groups.values():
                found_patches, found = resolve_chain(edges, at=job.now)
                patches += found_patches
                contradictions += found
        log_contradictions(home.memory_dir, contradictions, durable=home.durable)
        written = port.write(Reconciled(Linked(Extraction(), tuple(merges)), edge_patches=tuple(patches)))
        job.tell("project", 2, 3, "core.md and views")
        notes = list(report.notes) + project_all(home)
        packed = home.sessions.pack_all()
        job.state.last_sleep = time.time()
        job.state.unprojected = False  # project_all above projected everything
        job.dirty = True
        job.save(force=True)
        job.tell("done", 3, 3, "")
        return SleepReport(
            run=report,
            written=written,
            contradictions=len(contradictions),
            packed=packed,
            notes=tuple(notes),
            seconds=time.monotonic() - started,
        )
