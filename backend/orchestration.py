"""What spans the backend's packages, in one module above them (no package imports back into
another that imports it): a session made private or public again, and the memory of an earlier
opmem re-redacted. Each changes privacy's view of the store, then brings the derived layers in
line under the distillation lock: the search index, the distillation cursors, core.md and the
entity views re-projected, and with them the connected agents' blocks (distill/project.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .distill.pipeline import DistillBusy, run_lock
from .distill.project import project_all
from .distill.state import load_state, save_state
from .distill.withheld import forget_in_index, readmit_to_index, reset_cursors, touched_entities
from .memory.redaction_upgrade import UpgradeReport, needs_upgrade, redact_earlier_memory, stamped
from .privacy.exclusions import PRIVATE_KEY, exclusions, is_private, session_reason

if TYPE_CHECKING:
    from .home import Home


# -- turning a session private, and public again -----------------------------------------------


@dataclass(frozen=True, slots=True)
class PrivacyChange:
    session_id: str
    private: bool
    changed: bool  # False: it already was
    reason: str | None  # why it is excluded now (None: it is eligible for the memory)
    notes: tuple[str, ...] = ()


def set_private(home: Home, session_id: str, private: bool = True) -> PrivacyChange:
    """Mark a session private (or public again) in its meta.json, then bring the derived layers in
    line: private withdraws its index rows and re-projects core.md and the views without it;
    public resets its distillation cursor so the next run distils it from scratch (and its records,
    kept in the logs, show again at once)."""
    meta = home.sessions.get_meta(session_id)
    was = is_private(meta)
    if was != private:
        if private:
            meta = home.sessions.update_session(session_id, **{PRIVATE_KEY: True})
        else:
            meta = home.sessions.update_session(session_id, **{PRIVATE_KEY: False})
    reason = exclusions(home).reason(meta)
    notes: list[str] = []
    if reason is not None:
        notes.extend(withdraw(home, [session_id]))
    elif was:  # public again (a session that was public already has nothing to readmit)
        notes.extend(readmit(home, [session_id]))
    return PrivacyChange(session_id, private, was != private, reason, tuple(notes))


def withdraw(home: Home, session_ids: Iterable[str]) -> list[str]:
    """What these (now excluded) sessions gave the derived layers, taken back: index rows dropped,
    core.md and entity views re-projected. Holds the distillation lock, so no run interleaves."""
    ids = sorted(set(session_ids))
    with run_lock(home, home.config.store.lock_timeout_s):
        notes = forget_in_index(home, ids)
        state = load_state(home.memory_dir)
        rules = exclusions(home)
        for sid in ids:
            why = session_reason(home, sid, rules)
            if why:
                state.withheld[sid] = why
        save_state(home.memory_dir, state, durable=home.durable)
        notes.extend(project_all(home, touched_entities(home, ids), ()))
    return notes


def readmit(home: Home, session_ids: Iterable[str]) -> list[str]:
    """These sessions are eligible again: their distillation cursors reset (the next run takes them
    from the first node), their records indexed again, core.md and the views re-projected."""
    ids = sorted(set(session_ids))
    with run_lock(home, home.config.store.lock_timeout_s):
        state = load_state(home.memory_dir)
        notes = reset_cursors(state, ids)
        save_state(home.memory_dir, state, durable=home.durable)
        notes.extend(readmit_to_index(home, ids))
        notes.extend(project_all(home, touched_entities(home, ids), ()))
    return notes


# -- the memory of an earlier opmem --------------------------------------------------------------


def ensure_redacted(home: Home, *, lock_timeout: float = 0.0) -> UpgradeReport | None:
    """Re-redact a memory written by an earlier opmem (None: nothing to do, or another process
    holds the distillation lock and will do it; a run that holds it calls memory/redaction_upgrade.py's
    redact_earlier_memory itself)."""
    if stamped(home.memory_dir):
        return None
    if not needs_upgrade(home.memory_dir):  # only a stamp to write: no lock (nor a folder made for it)
        return redact_earlier_memory(home, project_all)
    try:
        with run_lock(home, lock_timeout):
            return redact_earlier_memory(home, project_all)
    except DistillBusy:
        return None
