"""No fact takes a session as its subject, and no fact points to itself: the gate before writing."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmem_tui.backend.distill.fact_gate import gate
from opmem_tui.backend.distill.model import Extraction
from opmem_tui.backend.distill.pipeline import RunOptions, run
from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import run_import
from opmem_tui.backend.memory.records import Edge, Entity
from opmem_tui.backend.model import Provenance

from .conftest import fixtures_dir

PROV = Provenance(project_id="", session_id="s1", node_ids=("n1",), commit=None, event_time=1.0, ingestion_time=2.0)


def edge(source: str, relation: str, target: str) -> Edge:
    return Edge(id=f"ed-{source}-{relation}-{target}", from_id=source, to_id=target, relation=relation, provenance=PROV)


SESSION = Entity("session.s1", "session", "for the messages of the copilot:")
PROJECT = Entity("project.app", "project", "app")
ANGULAR = Entity("tech.angular", "tech", "Angular")
CONVENTION = Entity("convention.dark", "convention", "by default the dark mode settings is off.")
TITLED = Entity("session.s2", "session", "by default the dark mode settings is of…")
FILE = Entity("file.a", "file", "src/a.ts")


def test_the_gate_refuses_session_subjects_and_self_pointers_only() -> None:
    edges = (
        edge("session.s1", "frontend-framework", "tech.angular"),
        edge("session.s2", "convention", "convention.dark"),
        edge("project.app", "uses", "project.app"),
        edge("project.app", "frontend-framework", "tech.angular"),
        edge("session.s1", "read", "file.a"),
        edge("session.s1", "part-of", "project.app"),
    )
    extraction = Extraction(entities=(SESSION, PROJECT, ANGULAR, CONVENTION, TITLED, FILE), edges=edges)
    kept, refused = gate(extraction)
    assert [(e.from_id, e.relation) for e in kept.edges] == [
        ("project.app", "frontend-framework"),
        ("session.s1", "read"),
        ("session.s1", "part-of"),
    ]
    assert len(refused) == 3 and all(r.reason for r in refused)
    assert "convention.dark" not in {e.id for e in kept.entities}  # only a refused fact named it
    assert "tech.angular" in {e.id for e in kept.entities}


def test_a_convention_pointing_to_the_session_named_like_it_is_refused_whatever_the_subject() -> None:
    extraction = Extraction(entities=(PROJECT, CONVENTION), edges=(edge("project.app", "convention", "project.app"),))
    assert not gate(extraction)[0].edges


def test_the_global_block_of_the_cursor_fixture_holds_no_session_title_facts(tmp_path: Path) -> None:
    db = fixtures_dir() / "agents" / "cursor" / "slevin48+cursor-history" / "state.vscdb"
    if not db.is_file():
        pytest.skip("the real fixtures (../shared/fixtures) are absent")
    home = Home(tmp_path / "home", durable=False)
    run_import(home, "cursor", [db], bind=False)
    home.sessions.flush()
    run(home, RunOptions())
    block = (home.memory_dir / "core.md").read_text(encoding="utf-8")
    titles = {m.title.rstrip("…")[:30] for m in home.sessions.list_sessions().sessions if m.title}
    for line in block.splitlines():
        if "──" in line:
            subject = line.lstrip("· ").split(" ──", 1)[0].rstrip("…")
            assert not any(subject.startswith(t) or t.startswith(subject) for t in titles), line
            target = line.split("──► ", 1)[1].split("  ↪", 1)[0]
            assert subject.casefold() != target.rstrip("…").casefold(), line
    graph = home.memory_readonly()
    assert not [e for e in graph.current_edges() if e.from_id.startswith("session.") and e.relation == "convention"]


def test_the_tool_or_model_a_session_used_is_activity_and_passes() -> None:
    tool, model = Entity("tool.bash", "tool", "Bash"), Entity("model.sonnet", "model", "claude-sonnet-4")
    edges = (edge("session.s1", "uses", "tool.bash"), edge("session.s1", "uses", "model.sonnet"))
    kept, refused = gate(Extraction(entities=(SESSION, tool, model), edges=edges))
    assert kept.edges == edges and not refused
