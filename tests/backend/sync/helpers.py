"""Two stores and a bare remote for the sync tests: machines are Homes in tmp_path."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from opmem_tui.backend.home import Home
from opmem_tui.backend.memory.records import GLOBAL, Event
from opmem_tui.backend.model import Provenance
from opmem_tui.backend.store.files import dump_json, write_atomic

SECRET = "ghp_" + "Z8xq4Lm2Np7Rs1Tv9Wy3Ab5Cd6Ef0Gh2Ij4K"  # a GitHub token's shape (made up)
T0 = 1_780_000_000.0


def bare_remote(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)
    return path


def machine_home(path: Path, machine_id: str, remote: str) -> Home:
    home = Home(path, durable=False)
    home.ensure()
    write_atomic(path / "machine.json", dump_json({"id": machine_id, "name": machine_id, "created_at": T0}))
    home.config.set("sync.remote", remote)
    home.config.save()
    return Home(path, durable=False)


def add_turn(home: Home, sid: str, prompt: str, reply: str, *, at: float = T0, parent: str | None = None) -> str:
    store = home.sessions
    kwargs = {} if parent is None else {"parent_id": parent}
    user = store.append_message(sid, "user", prompt, created_at=at, **kwargs)
    answer = store.append_message(sid, "assistant", reply, parent_id=user.id, created_at=at + 1)
    store.commit_turn(sid, answer.id)
    return answer.id


def add_event(home: Home, summary: str, sid: str, at: float = T0) -> Event:
    p = Provenance("", sid, ("n1",), None, at, at + 5)
    event = Event(Event.make_id(summary, "learning", p), summary, "learning", 0.8, p, (), GLOBAL)
    home.memory.append([event])
    return event


def git(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def refs_of(git_dir: Path) -> dict[str, str]:
    out = git(f"--git-dir={git_dir}", "for-each-ref", "--format=%(objectname) %(refname)")
    return {name: oid for oid, name in (line.split(" ", 1) for line in out.splitlines())}


def all_objects(git_dir: Path) -> bytes:
    done = subprocess.run(
        ["git", f"--git-dir={git_dir}", "cat-file", "--batch-all-objects", "--batch"], capture_output=True, check=True
    )
    return done.stdout


def turns(home: Home, sid: str) -> list[tuple[str, ...]]:
    return [tuple(n.content for n in t.nodes) for t in home.sessions.get_turns(sid)]


def meta(home: Home, sid: str) -> dict:
    return json.loads((home.sessions.path_for(sid) / "meta.json").read_bytes())
