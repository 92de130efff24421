"""The relation table (memory/relations.py) is the one list of what a relation is: every relation
the rules write from a project is in it, and the layers read their sets from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmem_tui.backend.distill import sleep
from opmem_tui.backend.distill.extract import llm, vocabulary
from opmem_tui.backend.distill.extract.builder import RecordBuilder
from opmem_tui.backend.distill.extract.knowledge import Knowledge
from opmem_tui.backend.memory import brief, relations
from opmem_tui.backend.memory.records import entity_id

from .history import Call, Session, Turn, distil_history, package_json


def _rich_history() -> list[Session]:
    pkg = package_json({"next": "14", "react": "18"}, {"vitest": "1", "eslint": "9"}, scripts={"test": "vitest"})
    return [
        Session(
            "s-one",
            [
                Turn(
                    "We use Postgres and Redis. Always use named exports. The API is in services/api. "
                    "Set DATABASE_URL in .env. It exposes GET /api/items.\nTODO: document the API",
                    [
                        Call("write", path="/work/demo/package.json", content=pkg),
                        Call("bash", command="pnpm install", output="ok"),
                        Call("bash", command="pnpm test", output="Tests 3 passed", exit_code=0),
                        Call("bash", command="npx eslint .", output="1 error", exit_code=1),
                        Call("bash", command="npx tsc --noEmit", output="ok", exit_code=0),
                        Call("write", path="/work/demo/src/db.ts", content="const u = process.env.REDIS_URL;\n"),
                    ],
                ),
                Turn("Let's move from Jest to Vitest, and drop Redux. We're on Node 20.", reply="Done."),
                Turn("The dev server doesn't start.", reply="Use `pnpm dev` to start it; run `pnpm build` first."),
                Turn("In every project I want pnpm, not npm.", reply="Noted."),
            ],
        )
    ]


def test_every_relation_the_rules_write_from_a_project_is_in_the_table(tmp_path: Path):
    memory = distil_history(tmp_path / "memory", _rich_history())
    subjects = {entity_id("project", "demo"), entity_id("person", "user")}
    written = {g.relation for g in memory.edges(include_superseded=True, limit=None) if g.edge.from_id in subjects}
    assert {"uses", "convention", "env-var", "test-command", "node-js-version", "dropped", "task-pending"} <= written
    missing = {r for r in written if relations.relation(r) is None}
    assert not missing, missing


def test_a_relation_outside_the_table_is_refused(tmp_path: Path):
    from opmem_tui.backend.model import Provenance

    b = RecordBuilder(None, ingestion_time=0.0)
    k = Knowledge(b, entity_id("project", "demo"))
    prov = Provenance("demo", "s", ("n",), None, 0.0, 0.0)
    k.fact("uses", "tech.x", prov, 0.9)
    with pytest.raises(ValueError, match="relation table"):
        k.fact("likes-a-lot", "tech.x", prov, 0.9)


def test_the_layers_read_their_sets_from_the_table():
    assert set(vocabulary.SLOTS.values()) | set(vocabulary.SWITCH_SLOTS.values()) == relations.SLOT_RELATIONS
    assert llm.COMMAND_KINDS == relations.COMMAND_KINDS
    assert set(sleep.KNOWLEDGE_SLOTS) == relations.names(single=True)
    assert brief.BRIEF_RELATIONS == relations.BRIEF_RELATIONS
    for name in ("python-version", "node-js-version"):
        row = relations.relation(name)
        assert row is not None and row.single_valued and row.in_brief
    assert relations.relation("uses-version") is None  # the config's own relation, not a version slot
    assert relations.version_relation("Node.js") == "node-js-version"
    for row in relations.TABLE.values():
        assert row.label and 0 <= row.importance <= 1 and row.role
