"""`opmem verify` for one session: meta, node files and git mirror checked, what git misses backfilled."""

from __future__ import annotations

from .session_repo import SessionRepo
from .writers import InFlight


def verify_session(
    repo: SessionRepo,
    in_flight: InFlight,
    repair: bool,
    repaired: list[str],
    problems: list[str],
    being_written: bool = False,
    writing: list[str] | None = None,
) -> None:
    """Check one session (lock held); with `repair`, rebuild a broken mirror and commit missing nodes.

    Nodes a live writer has not committed yet are not missing: the in-flight marker is read after
    the refresh, so a writer that started in between has its nodes skipped too. `being_written`:
    a live process is writing this session's mirror (mirror_backlog.py): what git misses is said
    in `writing` ("mirror being written (N turns behind)"), not a problem, and left to it."""
    repo.refresh()
    skip_from = in_flight.live_since()
    broken = repo.mirror_problems()
    if broken:
        if not repair:
            problems.extend(broken)
            return
        made = repo.rebuild_mirror(skip_from)
        repaired.append(
            f"{repo.path}: rebuilt the git mirror from the node files ({made} turn commits; was: {broken[0]})"
        )
    problems.extend(repo.log.problems)
    missing = repo.missing_node_ids(skip_from)
    if missing and being_written:
        behind = sum(1 for nid in missing if (n := repo.node(nid)).role == "user" and n.called_by is None)
        if writing is not None:
            writing.append(f"{repo.path}: mirror being written ({behind} turns behind)")
    elif missing:
        if repair:
            made = repo.backfill(skip_from)
            repaired.append(f"{repo.path}: committed {len(missing)} node(s) in {made} turn commit(s)")
        else:
            problems.append(f"{repo.path}: {len(missing)} node(s) not in git")
    if repair:
        repo.flush(force_index=True)
    problems.extend(repo.mirror_problems())
