from __future__ import annotations

import subprocess
from pathlib import Path

from opmem_tui.backend.demo import build_demo, is_demo


def test_demo_store_is_realistic_and_valid(tmp_path: Path) -> None:
    home = build_demo(tmp_path / "demo", now=1_800_000_000.0)
    assert is_demo(tmp_path / "demo")
    listing = home.sessions.list_sessions()
    assert listing.skipped == 0 and len(listing.sessions) == 13
    sources = {m.source for m in listing.sessions}
    assert {"claude-code", "codex", "gemini", "aider", "opmem"} <= sources
    # A retried turn and a message sent from an older turn: real git branches.
    assert len(home.sessions.branches("cc-fix-forecast-parse")) == 2
    assert len(home.sessions.branches("codex-shop-discounts")) == 2
    # A subagent linked to its parent session and spawning node.
    sub = home.sessions.get_meta("cc-fix-forecast-parse.agent-explore")
    parent_nodes = {n.id for n in home.sessions.get_nodes("cc-fix-forecast-parse")}
    assert sub.extra["parent_session"] == "cc-fix-forecast-parse" and sub.extra["parent_node"] in parent_nodes
    # A turn with many tool calls and a long output.
    turn = home.sessions.get_turns("codex-shop-cart-rounding")[0]
    assert len(turn.tool_nodes) >= 38 and max(len(n.content) for n in turn.nodes) > 50_000
    # Agent commits in real project repositories, the user's tree left clean.
    projects = {p.name: p for p in home.projects.list_projects()}
    assert set(projects) == {"weather-cli", "shop-api", "dotfiles"}
    weather = Path(projects["weather-cli"].workdir)
    authors = subprocess.run(
        ["git", "-C", str(weather), "log", "--format=%an"], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert sum(a.startswith("agent (") for a in authors) == 2
    assert (
        subprocess.run(["git", "-C", str(weather), "status", "--porcelain"], capture_output=True, text=True).stdout
        == ""
    )
    for meta in listing.sessions:
        subprocess.run(["git", "-C", meta.path, "fsck", "--strict"], check=True, capture_output=True)


def test_demo_sessions_go_through_the_ingest_hooks(tmp_path: Path) -> None:
    """Built like an import: its sessions are in the search index before anything searches."""
    home = build_demo(tmp_path / "demo", now=1_800_000_000.0)
    stats = home.search_index.stats()  # reads the index as it is (no build on a first search)
    assert stats.sessions == len(home.sessions.list_sessions().sessions) == 13
    assert {hit.session_id for hit in home.search("walrus")} == {"claude-quick-question-3"}


def test_demo_is_distilled_when_built(tmp_path: Path) -> None:
    """The first screen shows the memory: the demo's coding projects have their brief."""
    home = build_demo(tmp_path / "demo", now=1_800_000_000.0)
    ids = {p.name: p.id for p in home.projects.list_projects()}
    core = {name: (home.memory_dir / "projects" / pid / "core.md").read_text() for name, pid in ids.items()}
    assert "[Project · weather-cli]" in core["weather-cli"] and "test: pytest -q" in core["weather-cli"]
    assert "[Project · shop-api]" in core["shop-api"]
