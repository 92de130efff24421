from __future__ import annotations

import dataclasses
from pathlib import Path

from opmem_tui.backend.recall.context import Recall, recall_for

from .conftest import ask
from .stores import T0, Built, build_store, git


def test_log_marks_agent_commits_with_session_and_turn(recall: Recall, built: Built) -> None:
    reply = ask(recall, "memory_git_log")
    assert reply["project"] == {"id": built.project_id, "name": "shop"}
    commits = reply["commits"]
    assert [c["summary"] for c in commits] == [
        "docs: describe the shop",
        "[agent cc-shop-session] turn 1: Add a greeting module",
        "initial commit",
    ]
    agent = commits[1]
    assert agent["commit"] == built.agent_commit[:12]
    assert agent["agent"] == {"model": "claude-test", "session": built.session_id, "turn": 1}
    assert agent["turn"]["session"] == built.session_id and agent["turn"]["confidence"] == "high"
    assert "agent" not in commits[0] and "agent" not in commits[2]
    assert "more" not in reply


def test_log_since_takes_iso_and_relative_dates(recall: Recall, built: Built) -> None:
    iso = ask(recall, "memory_git_log", since="2025-06-15T14:30:00+00:00")
    assert [c["summary"] for c in iso["commits"]][-1] != "initial commit"
    relative = ask(recall, "memory_git_log", since="10 minutes ago")  # recall.now is T0 + 400
    assert [c["summary"] for c in relative["commits"]] == [c["summary"] for c in iso["commits"]]
    bad = ask(recall, "memory_git_log", since="the day after never")
    assert bad["error"]["code"] == "bad_argument" and "since" in bad["error"]["message"]


def test_log_pages_with_after(recall: Recall, built: Built) -> None:
    for i in range(25):
        (built.workdir / "n.txt").write_text(f"{i}\n")
        git(built.workdir, "add", "n.txt")
        git(built.workdir, "commit", "-q", "-m", f"note {i}", when=T0 + 1000 + i)
    first = ask(recall, "memory_git_log", limit=10)
    assert len(first["commits"]) == 10 and first["more"]["project_id"] == built.project_id
    second = ask(recall, "memory_git_log", limit=10, after=first["more"]["after"])
    third = ask(recall, "memory_git_log", limit=10, after=second["more"]["after"])
    summaries = [c["summary"] for r in (first, second, third) for c in r["commits"]]
    assert summaries[:25] == [f"note {i}" for i in reversed(range(25))]
    assert summaries[-1] == "initial commit" and len(summaries) == 28
    assert "more" not in third


def test_project_by_name_and_errors(recall: Recall, built: Built) -> None:
    assert ask(recall, "memory_git_log", project_id="shop")["project"]["id"] == built.project_id
    wrong = ask(recall, "memory_git_log", project_id="shp")
    assert wrong["error"]["code"] == "unknown_project"
    assert wrong["error"]["did_you_mean"] == [built.project_id]
    outside = recall_for(built.home, cwd=built.workdir.parent)
    assert ask(outside, "memory_git_log")["error"]["code"] == "no_project"
    assert ask(recall, "memory_git_log", limit=0)["error"]["code"] == "bad_argument"


def test_show_gives_the_diff_and_the_turn(recall: Recall, built: Built) -> None:
    reply = ask(recall, "memory_git_show", commit=built.agent_commit[:8])
    assert reply["commit"]["oid"] == built.agent_commit
    assert reply["commit"]["agent"]["session"] == built.session_id
    assert reply["turns"][0] == {"session": built.session_id, "turn": 1, "confidence": "high", "reason": "opmem"}
    assert reply["changed"] == {"files": 1, "additions": 2, "deletions": 0}
    (entry,) = reply["files"]
    assert entry["path"] == "greet.py" and entry["status"] == "A"
    assert entry["diff"] == "@@ -0,0 +1,2 @@\n+def greet():\n+    return 'hi'\n"
    user = ask(recall, "memory_git_show", commit="HEAD")
    assert user["commit"]["oid"] == built.user_commit and "agent" not in user["commit"]
    assert "-shop\n" not in user["files"][0]["diff"] and "+A small shop.\n" in user["files"][0]["diff"]


def test_show_unknown_commit_suggests_close_ones(recall: Recall, built: Built) -> None:
    typo = built.agent_commit[:11] + ("0" if built.agent_commit[11] != "0" else "1")
    reply = ask(recall, "memory_git_show", commit=typo)
    assert reply["error"]["code"] == "unknown_commit"
    assert built.agent_commit[:12] in reply["error"]["did_you_mean"]
    for bad in ("--all", " "):
        assert ask(recall, "memory_git_show", commit=bad)["error"]["code"] == "bad_argument"
    path = ask(recall, "memory_git_show", commit="HEAD", path="READM.md")
    assert path["error"]["code"] == "unknown_path" and path["error"]["did_you_mean"] == ["README.md"]


def test_big_commits_stay_bounded_and_read_whole_by_path(tmp_path: Path) -> None:
    built = build_store(tmp_path)
    lines = [f"value_{i} = {i} * 2  # a long line of generated code\n" for i in range(3000)]
    (built.workdir / "big.py").write_text("".join(lines))
    for i in range(300):
        (built.workdir / "many" / f"f{i}.txt").parent.mkdir(exist_ok=True)
        (built.workdir / "many" / f"f{i}.txt").write_text(f"file {i}\n")
    git(built.workdir, "add", "-A")
    git(built.workdir, "commit", "-q", "-m", "a big commit", when=T0 + 500)
    recall = dataclasses.replace(recall_for(built.home, cwd=built.workdir), max_reply_bytes=4096)
    first = ask(recall, "memory_git_show", commit="HEAD")
    assert first["changed"]["files"] == 301 and first["pages"] > 2
    paths = [f["path"] for f in first["files"]]
    page = first["next_page"]
    while page is not None:
        reply = ask(recall, "memory_git_show", commit="HEAD", page=page)
        paths += [f["path"] for f in reply["files"]]
        page = reply["next_page"]
    assert len(paths) == 301 and "big.py" in paths
    big = next(f for f in first["files"] if f["path"] == "big.py")
    assert "more lines)" in big["diff"]
    offset, text = 0, ""
    while offset is not None:
        part = ask(recall, "memory_git_show", commit="HEAD", path="big.py", offset=offset)
        text += part["diff"]
        offset = part["next_offset"]
    assert text.splitlines()[0] == "@@ -0,0 +1,3000 @@"
    assert text.splitlines()[1:] == ["+" + line.rstrip("\n") for line in lines]
    assert big["diff"].startswith(text[: big["more"]["offset"]])
