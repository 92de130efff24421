"""Real git repositories for the project tests: the user acts through the git CLI."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path
from typing import Any

from opmem_tui.backend.model import Node

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Uma User",
    "GIT_AUTHOR_EMAIL": "uma@example.com",
    "GIT_COMMITTER_NAME": "Uma User",
    "GIT_COMMITTER_EMAIL": "uma@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str, env: dict[str, str] | None = None, check: bool = True) -> str:
    full_env = {**os.environ, **GIT_ENV, **(env or {})}
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=full_env, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout


def make_repo(path: Path, files: dict[str, str] | None = None) -> Path:
    """A user repository with one commit of `files`."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    for rel, text in (files or {"README.md": "hello\n"}).items():
        write(path / rel, text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def user_commit(repo: Path, message: str, files: dict[str, str | None], when: float | None = None) -> str:
    for rel, text in files.items():
        if text is None:
            git(repo, "rm", "-q", rel)
        else:
            write(repo / rel, text)
            git(repo, "add", rel)
    env = {}
    if when is not None:
        stamp = f"@{int(when)} +0000"
        env = {"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    git(repo, "commit", "-q", "-m", message, env=env)
    return git(repo, "rev-parse", "HEAD").strip()


def status(repo: Path) -> list[str]:
    """`git status --porcelain` lines (untracked files listed one by one)."""
    return [item for item in git(repo, "status", "--porcelain", "--untracked-files=all").splitlines() if item]


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def changed_in(repo: Path, rev: str) -> set[str]:
    out = git(repo, "show", "--name-only", "--format=", rev)
    return {item for item in out.splitlines() if item}


def fsck(repo: Path) -> str:
    done = subprocess.run(["git", "-C", str(repo), "fsck", "--strict", "--no-dangling"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def tree_hashes(folder: Path) -> dict[str, str]:
    """sha256 of every file under `folder`, to prove nothing changed."""
    out = {}
    for root, _dirs, files in os.walk(folder):
        for name in files:
            full = Path(root) / name
            out[str(full.relative_to(folder))] = hashlib.sha256(full.read_bytes()).hexdigest()
    return out


class TurnBuilder:
    """Builds the nodes of one turn: a user node, an assistant node and its tool nodes."""

    def __init__(
        self, text: str, *, start: float = 1_700_000_000.0, model: str = "test-model", prefix: str = "n"
    ) -> None:
        self.t = start
        self.prefix = prefix
        self.seq = 0
        self.nodes: list[Node] = []
        self.user = self._add("user", content=text)
        self.assistant = self._add(
            "assistant", content="working on it", parent_id=self.user.id, name=model, metadata={"model": model}
        )

    def _add(self, role: str, **fields: Any) -> Node:
        self.seq += 1
        self.t += 1.0
        node = Node(id=f"{self.prefix}{self.seq}", seq=self.seq, role=role, created_at=self.t, **fields)
        self.nodes.append(node)
        return node

    def tool(self, name: str, input: Any, content: str = "ok") -> Node:
        return self._add(
            "tool", name=name, input=input, content=content, parent_id=self.assistant.id, called_by=self.assistant.id
        )
