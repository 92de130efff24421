"""Commit ↔ turn links on a generated history whose right answers are known."""

from pathlib import Path

import pytest

from opmem_tui.backend.model import Turn
from opmem_tui.backend.projects.links import (
    CommitLink,
    LinkStore,
    commits_for_turn,
    link_session,
    turns_for_commit,
)
from opmem_tui.backend.projects.registry import ProjectRegistry
from opmem_tui.backend.projects.repository import ProjectGit

from .project_repo_helpers import TurnBuilder, make_repo, user_commit

T0 = 1_700_000_000.0


@pytest.fixture
def scenario(tmp_path: Path):
    repo = make_repo(tmp_path / "proj", {"README.md": "r\n", "src/a.py": "a\n", "src/b.py": "b\n"})
    root = repo.resolve()
    c1 = user_commit(root, "Add parser", {"src/a.py": "parser\n"}, when=T0 + 103)
    c2 = user_commit(root, "Refactor loader", {"src/b.py": "loader\n"}, when=T0 + 330)
    c3 = user_commit(root, "user: tidy", {"src/c.py": "c\n", "README.md": "r2\n"}, when=T0 + 630)
    c4 = user_commit(root, "docs only", {"docs/other.md": "o\n"}, when=T0 + 930)
    c5 = user_commit(root, "later change to c", {"src/c.py": "c2\n"}, when=T0 + 2000)

    turns = []
    t = TurnBuilder("add a parser", start=T0 + 100, prefix="t1-")
    t.tool("Edit", {"file_path": str(root / "src/a.py")})
    t.tool(
        "Bash",
        {"command": "git add src/a.py && git commit -m 'Add parser'"},
        f"[main {c1[:7]}] Add parser\n 1 file changed, 1 insertion(+)",
    )
    turns.append(Turn(1, tuple(t.nodes)))

    t = TurnBuilder("refactor the loader", start=T0 + 300, prefix="t2-")
    t.tool("Write", {"file_path": "src/b.py"})  # relative to the project
    t.tool("Bash", {"command": 'git commit -am "Refactor loader"'}, "")  # no hash in the result
    turns.append(Turn(2, tuple(t.nodes)))

    t = TurnBuilder("write c", start=T0 + 600, prefix="t3-")
    t.tool("Write", {"file_path": str(root / "src/c.py")})  # the user committed it, in the window
    turns.append(Turn(3, tuple(t.nodes)))

    t = TurnBuilder("write d", start=T0 + 900, prefix="t4-")
    t.tool("Write", {"file_path": str(root / "src/d.py")})  # c4 is in the window but shares no path
    turns.append(Turn(4, tuple(t.nodes)))

    t = TurnBuilder("show me the log", start=T0 + 1500, prefix="t5-")
    t.tool("Bash", {"command": "git log --oneline"}, f"{c1[:7]} Add parser\n{c2[:10]} Refactor loader")
    turns.append(Turn(5, tuple(t.nodes)))

    return {"root": root, "turns": turns, "c": [c1, c2, c3, c4, c5]}


def _commits(root: Path):
    return ProjectGit(root).commits_between(T0, T0 + 5000)


def test_link_session_finds_the_known_answers(scenario):
    root, turns, (c1, c2, c3, c4, c5) = scenario["root"], scenario["turns"], scenario["c"]
    commits = _commits(root)
    assert {c.oid for c in commits} == {c1, c2, c3, c4, c5}
    links = link_session("sess-x", turns, commits, relative=ProjectGit(root).relative, project_id="p")
    got = {item.commit: (item.turn, item.confidence, item.reason) for item in links}
    assert got == {c1: (1, "high", "hash"), c2: (2, "high", "message"), c3: (3, "low", "paths")}
    low = next(item for item in links if item.commit == c3)
    assert low.paths == ("src/c.py",) and low.head_id == "t3-2" and low.project_id == "p"


def test_commits_for_turn_and_turns_for_commit(scenario):
    root, turns, (c1, _c2, c3, _c4, c5) = scenario["root"], scenario["turns"], scenario["c"]
    commits = _commits(root)
    rel = ProjectGit(root).relative
    [only] = commits_for_turn(turns[0], commits, session_id="s", relative=rel)
    assert (only.commit, only.confidence) == (c1, "high")
    assert commits_for_turn(turns[3], commits, session_id="s", relative=rel) == []
    assert commits_for_turn(turns[4], commits, session_id="s", relative=rel) == []  # git log is no commit
    # plain node lists work too; their number is their position
    [link] = turns_for_commit(
        next(c for c in commits if c.oid == c3), [t.nodes for t in turns], session_id="s", relative=rel
    )
    assert (link.turn, link.confidence) == (3, "low")
    assert turns_for_commit(next(c for c in commits if c.oid == c5), turns, session_id="s", relative=rel) == []


def test_short_hashes_and_far_messages_do_not_match(scenario):
    root, (c1, *_rest) = scenario["root"], scenario["c"]
    commits = _commits(root)
    t = TurnBuilder("commit", start=T0 + 100, prefix="x")
    t.tool("Bash", {"command": "git commit -m x"}, f"[main {c1[:6]}] something else")
    assert commits_for_turn(t.nodes, commits, session_id="s") == []
    far = TurnBuilder("commit much later", start=T0 + 50_000, prefix="y")
    far.tool("Bash", {"command": "git commit -m 'Add parser'"}, "nothing to commit")
    assert commits_for_turn(far.nodes, commits, session_id="s") == []


def test_registry_stores_links_once(scenario, tmp_path: Path):
    root, turns, (c1, c2, c3, *_r) = scenario["root"], scenario["turns"], scenario["c"]
    reg = ProjectRegistry(tmp_path / "home")
    project = reg.resolve_project(root)
    links = reg.link_session(project.id, "sess-x", turns)
    assert {item.commit for item in links} == {c1, c2, c3}
    path = tmp_path / "home" / "projects" / "links.jsonl"
    assert len(path.read_text().splitlines()) == 3
    reg.link_session(project.id, "sess-x", turns)  # re-linking appends nothing
    assert len(path.read_text().splitlines()) == 3
    fresh = ProjectRegistry(tmp_path / "home")
    [l3] = fresh.links_for_commit(project.id, c3[:7])
    assert (l3.session_id, l3.turn, l3.confidence) == ("sess-x", 3, "low")
    assert set(fresh.links.by_commit(project.id)) == {c1, c2, c3}
    assert [item.turn for item in fresh.links.for_session("sess-x")] == [1, 2, 3]


def test_link_store_upgrades_and_tolerates_a_torn_line(tmp_path: Path):
    store = LinkStore(tmp_path / "links.jsonl")
    low = CommitLink("a" * 40, "s", 2, "low", "paths", project_id="p", paths=("x",))
    assert store.add([low]) and not store.add([low])
    high = CommitLink("a" * 40, "s", 2, "high", "hash", project_id="p")
    assert store.add([high])
    with open(tmp_path / "links.jsonl", "a") as fh:
        fh.write('{"commit": "bbbb')  # a crash mid-write
    fresh = LinkStore(tmp_path / "links.jsonl")
    [best] = fresh.for_commit("a" * 40)
    assert best.confidence == "high" and best.linked_at > 0
    assert len(fresh.problems) == 1 and "links.jsonl:3" in fresh.problems[0]
