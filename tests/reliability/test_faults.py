"""Faults suite: a full disk (ENOSPC) and a read-only home (EROFS) injected at a seeded random
write of a real `opmem` command (fault_writer.py wraps os.write/os.fsync/os.replace/os.rename/
os.mkdir/os.open/open()), and git repos with stale lock files.

After each faulted run: the command failed with a clear message (no traceback), no half-written
file is visible (every node file and meta.json parses, whole memory log lines parse, the listing
has no problem), and the same command run again without the fault completes the work.
"""

from __future__ import annotations

import errno
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest

from opmem_tui.backend.home import Home

from .stores import bad_log_lines, reopen_and_fsck
from .test_crash import TrialResult, check_index_equals_rebuild, fold_equals_cache, suite_seed, write_transcript

WRITER = Path(__file__).with_name("fault_writer.py")
SEED = suite_seed()


def opmem(
    home: Path, args: list[str], fault: int = 0, after: int = 0, sqlite_pages: int | None = None
) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPMEM_HOME": str(home), "FAULT_UNDER": str(home)}
    if sqlite_pages is not None:
        env["FAULT_SQLITE_PAGES"] = str(sqlite_pages)
    if fault:
        cmd = [sys.executable, str(WRITER), str(fault), str(after), "--", "opmem", *args]
    else:
        cmd = [sys.executable, str(WRITER), "0", "-1", "--", "opmem", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)


def half_written(home: Path) -> list[str]:
    """Files a reader would take for whole that are not."""
    bad = []
    for path in [*home.glob("sessions/*/history/*.json"), *home.glob("sessions/*/meta.json")]:
        try:
            json.loads(path.read_bytes())
        except ValueError as exc:
            bad.append(f"{path}: {exc}")
    bad.extend(bad_log_lines(Home(home)))
    bad.extend(Home(home).sessions.list_sessions(rescan=True).problems)
    return bad


def count_calls(home: Path, args: list[str]) -> int:
    done = opmem(home, args, 0)
    assert done.returncode == 0, done.stderr
    return int(done.stderr.rsplit("fault-calls ", 1)[1].split()[0])


WORKLOADS = {
    "import": lambda base: ["import", "jsonl", str(base / "transcript.jsonl")],
    "distill": lambda base: ["distill"],
}


def faulted_runs(base: Path, workload: str, code: int, trials: int, seed: int) -> list[str]:
    """`trials` runs of one command, each failing at a random write; the problems found."""
    rng = random.Random(seed)
    write_transcript(base / "transcript.jsonl", 120)
    if workload == "distill":  # sessions to distil, imported without faults
        assert opmem(base / "template", WORKLOADS["import"](base)).returncode == 0
    else:
        (base / "template").mkdir()
    total = count_calls(_copy(base / "template", base / "count"), WORKLOADS[workload](base))
    problems = []
    for trial in range(trials):
        home = _copy(base / "template", base / f"t{trial}")
        after = rng.randrange(total)
        label = f"{workload} {errno.errorcode[code]} after {after}/{total} writes (seed {seed})"
        failed = opmem(home, WORKLOADS[workload](base), code, after)
        out = failed.stdout + failed.stderr
        if "Traceback" in out:
            problems.append(f"{label}: a traceback: {out[-1500:]}")
        elif failed.returncode == 0 and os.strerror(code) not in out:
            problems.append(f"{label}: exit 0 and no word of the failure: {out[-500:]}")
        problems.extend(f"{label}: half-written: {p}" for p in half_written(home))
        again = opmem(home, WORKLOADS[workload](base))
        if again.returncode != 0:
            problems.append(f"{label}: the next run failed: {(again.stdout + again.stderr)[-800:]}")
        problems.extend(f"{label}: after the next run: {p}" for p in reopen_and_fsck(Home(home)))
        if workload == "import":
            nodes = sum(len(list(p.glob("history/*.json"))) for p in (home / "sessions").iterdir() if p.is_dir())
            if nodes != 120:
                problems.append(f"{label}: {nodes} nodes after the next run, the transcript has 120")
    return problems


def _copy(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst, symlinks=True)
    return dst


SHORT = [("import", errno.ENOSPC, 2), ("import", errno.EROFS, 1), ("distill", errno.ENOSPC, 2)]


@pytest.mark.parametrize("workload, code, trials", SHORT)
def test_a_write_that_fails_leaves_nothing_half_written(workload: str, code: int, trials: int, tmp_path: Path) -> None:
    seed = SEED + code
    problems = faulted_runs(tmp_path, workload, code, trials, seed)
    assert not problems, f"replay with OPMEM_RELIABILITY_SEED={SEED}:\n" + "\n".join(problems)


SQLITE_SHORT = [("import", 3), ("distill", 3)]


@pytest.mark.parametrize("workload, trials", SQLITE_SHORT)
def test_a_full_disk_under_the_search_index_and_the_memory_cache(workload: str, trials: int, tmp_path: Path) -> None:
    """SQLite's own writes (the search index, the memory cache) fail with SQLITE_FULL at a
    seeded random size: one clear message naming the database (an error, or the import's
    warning: its sessions are stored), no traceback, nothing half-written; the next run
    completes and the index then equals a rebuilt one, the memory cache the logs' fold."""
    problems = sqlite_full_runs(tmp_path, workload, trials, SEED + 7)
    assert not problems, f"replay with OPMEM_RELIABILITY_SEED={SEED}:\n" + "\n".join(problems)


def sqlite_full_runs(base: Path, workload: str, trials: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    write_transcript(base / "transcript.jsonl", 120)
    template = base / "template"
    if workload == "distill":
        assert opmem(template, WORKLOADS["import"](base)).returncode == 0
    else:
        template.mkdir()
    problems: list[str] = []
    for trial in range(trials):
        home = _copy(template, base / f"t{trial}")
        pages = rng.randrange(0, 40)
        label = f"{workload} with {pages} more SQLite pages (seed {seed})"
        failed = opmem(home, WORKLOADS[workload](base), sqlite_pages=pages)
        out = " ".join((failed.stdout + failed.stderr).split())
        if "Traceback" in out:
            problems.append(f"{label}: a traceback: {out[-1500:]}")
        elif "full" in out and ".sqlite" not in out:
            problems.append(f"{label}: the failure does not name the database: {out[-500:]}")
        problems.extend(f"{label}: half-written: {p}" for p in half_written(home))
        again = opmem(home, WORKLOADS[workload](base))
        if again.returncode != 0:
            problems.append(f"{label}: the next run failed: {(again.stdout + again.stderr)[-800:]}")
        result = TrialResult(0)
        check_index_equals_rebuild(Home(home), result)
        fold_equals_cache(Home(home), result)
        problems.extend(f"{label}: {p}" for p in result.corrupt)
    return problems


# ---------------------------------------------------------------------------- stale git locks


def test_stale_locks_in_a_session_repo(tmp_path: Path) -> None:
    """A lock a killed git (or opmem) left in a session repo: turns are still committed or the
    error names the lock; nodes are never lost, and once the lock is gone the backfill catches up."""
    home = Home(tmp_path / "home")
    home.sessions.append_message("s1", "user", "first")
    home.sessions.commit_turn("s1")
    git_dir = home.sessions.path_for("s1") / ".git"
    for lock in ("index.lock", "HEAD.lock", "refs/heads/main.lock"):
        (git_dir / lock).write_text("stale")
    home = Home(home.path)
    node = home.sessions.append_message("s1", "user", "second")
    try:
        home.sessions.commit_turn("s1")
    except Exception as exc:  # the message must name the lock
        assert ".lock" in str(exc), exc
    home.sessions.flush()
    assert Home(home.path).sessions.get_node("s1", node.id).content == "second"
    for lock in ("index.lock", "HEAD.lock", "refs/heads/main.lock"):
        (git_dir / lock).unlink(missing_ok=True)
    again = Home(home.path)
    assert reopen_and_fsck(again) == []


def test_stale_index_lock_in_the_users_project(tmp_path: Path) -> None:
    """The user's repo has a stale index.lock: the agent's commit is made or skipped with a
    warning naming the lock; the user's files and the lock itself are left alone."""
    project = tmp_path / "project"
    project.mkdir()
    repo = pygit2.init_repository(str(project))
    (project / "README.md").write_text("mine\n")
    repo.index.add("README.md")
    repo.index.write()
    sig = pygit2.Signature("User", "user@example.com")
    repo.create_commit("HEAD", sig, sig, "initial", repo.index.write_tree(), [])
    (project / ".git" / "index.lock").write_text("stale")
    home = Home(tmp_path / "home")
    registry = home.projects
    bound = registry.resolve_project(project)
    watch = registry.begin_turn(bound.id)
    user = home.sessions.append_message("s1", "user", "write a.py")
    reply = home.sessions.append_message("s1", "assistant", "ok")
    (project / "a.py").write_text("x = 1\n")
    tool = home.sessions.append_message(
        "s1", "tool", "ok", called_by=reply.id, name="Write",
        input={"file_path": str(project / "a.py"), "content": "x = 1\n"},
    )  # fmt: skip
    result = registry.commit_agent_turn(watch, [user, reply, tool], session_id="s1", turn_number=1)
    assert result.commit or "lock" in result.warning, result
    if result.commit is not None and result.warning:
        assert "index" in result.warning
    assert (project / ".git" / "index.lock").read_text() == "stale"  # not ours to remove
    assert (project / "README.md").read_text() == "mine\n"
    done = subprocess.run(["git", "-C", str(project), "fsck", "--strict"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
