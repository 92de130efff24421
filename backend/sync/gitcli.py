"""The git command line, for the transport: the user's own ssh agent, credential helper and config.

Nothing here stores a credential; git is run with prompts off so a sync never hangs on a password.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from ..model import OpmemError
from ..privacy import redact_text


class SyncError(OpmemError):
    """A sync that could not run (remote unreachable, git missing, a push refused); one line.
    Redacted: it names the remote, whose URL may hold a password or token, and git's stderr."""

    def __init__(self, message: str) -> None:
        super().__init__(redact_text(message))


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["GIT_TERMINAL_PROMPT"] = "0"  # never ask: the user's agent or credential helper answers
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    return env


def run_git(
    git_dir: Path, args: Sequence[str], *, stdin: str | None = None, timeout: float = 3600.0
) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            ["git", f"--git-dir={git_dir}", *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=_env(),
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError:
        raise SyncError("git is not installed (sync runs the git command line)") from None
    except subprocess.TimeoutExpired:
        raise SyncError(f"git {args[0]} took longer than {timeout:.0f} s; stopped") from None


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    useful = [line for line in lines if line.startswith(("fatal:", "error:", "ERROR"))]
    return (useful or lines or ["no output"])[-1]


def ls_remote(git_dir: Path, remote: str, pattern: str = "refs/opmem/*") -> dict[str, str]:
    """The remote's refs under `pattern` (name -> commit id); SyncError when it cannot be reached."""
    done = run_git(git_dir, ["ls-remote", remote, pattern], timeout=300.0)
    if done.returncode != 0:
        raise SyncError(f"cannot reach the sync remote {remote}: {last_line(done.stderr)}")
    refs: dict[str, str] = {}
    for line in done.stdout.splitlines():
        oid, _, name = line.partition("\t")
        if name and len(oid) == 40:
            refs[name] = oid
    return refs


def fetch(git_dir: Path, remote: str, refspecs: Sequence[str]) -> None:
    if not refspecs:
        return
    done = run_git(
        git_dir, ["fetch", "--no-tags", "--no-write-fetch-head", "--stdin", remote], stdin="\n".join(refspecs) + "\n"
    )
    if done.returncode != 0:
        raise SyncError(f"cannot fetch from the sync remote {remote}: {last_line(done.stderr)}")


def push(git_dir: Path, remote: str, refspecs: Sequence[str]) -> None:
    """Push without force: a ref that is not a fast-forward is refused by git itself."""
    if not refspecs:
        return
    done = run_git(git_dir, ["push", "--porcelain", "--no-verify", remote, *refspecs])
    if done.returncode != 0:
        rejected = [line.split("\t")[1].split(":")[-1] for line in done.stdout.splitlines() if line.startswith("!\t")]
        if rejected:
            raise SyncError(
                f"the sync remote {remote} refused {len(rejected)} ref(s) ({', '.join(rejected[:5])}): "
                f"{last_line(done.stdout + done.stderr)}"
            )
        raise SyncError(f"cannot push to the sync remote {remote}: {last_line(done.stderr)}")


def local_repository(remote: str) -> Path | None:
    """The git directory of a remote that is a bare repository on this filesystem (a path or a
    file:// URL), else None (ssh, https: their host keeps its own refs)."""
    path = remote[len("file://") :] if remote.startswith("file://") else remote
    if "://" in path or (":" in path.split("/", 1)[0] and not Path(path).exists()):
        return None  # a URL, or scp-like host:path
    where = Path(path).expanduser()
    for git_dir in (where, where / ".git"):
        if (git_dir / "HEAD").is_file() and (git_dir / "objects").is_dir():
            return git_dir
    return None


def pack_remote_refs(remote: str) -> bool:
    """`git pack-refs --all` in a remote on this filesystem: each ref a push made is a loose file
    there, and git reads all of them on every ls-remote and push (10,000 sessions' loose refs cost
    ~0.5 s per read, three reads per push); packed, one file. git's own locking makes it safe while
    another machine pushes. False when the remote is not local or git could not."""
    git_dir = local_repository(remote)
    if git_dir is None:
        return False
    return run_git(git_dir, ["pack-refs", "--all"], timeout=300.0).returncode == 0


def write_commit_graph(git_dir: Path) -> bool:
    """`git commit-graph write --reachable`: every push and fetch marks each of the other side's
    10,000 ref tips as had, a commit parse each (on both sides: the remote's connectivity check
    too); with the graph those are lookups (a third less CPU for a one-ref push at 10,000 sessions).
    Commits made afterwards are parsed as before. False when git could not."""
    return run_git(git_dir, ["commit-graph", "write", "--reachable", "--no-progress"], timeout=300.0).returncode == 0


def repack_geometric(git_dir: Path) -> bool:
    """`git repack --geometric=2 -d` in the outbox: each sync adds one small pack, and git opens
    every pack's index on each push. The small packs are rolled into fewer (the first push's big
    pack is left as it is, so this costs what the small ones hold); the new pack is fsynced before
    the ones it replaces are deleted. False when git could not (the sync has still succeeded)."""
    args = ["-c", "core.fsync=objects,derived-metadata", "repack", "--geometric=2", "-d", "-q"]
    return run_git(git_dir, args, timeout=600.0).returncode == 0
