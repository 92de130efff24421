"""docs/import-formats.md lists every agent as the importer classes describe it."""

from __future__ import annotations

from pathlib import Path

from opmem_tui.backend.importers import SOURCES
from opmem_tui.backend.importers.formats_doc import BEGIN, END, agents_table, with_table

DOC = Path(__file__).resolve().parents[3] / "docs" / "import-formats.md"


def test_the_doc_holds_the_table_the_importers_make() -> None:
    page = DOC.read_text(encoding="utf-8")
    assert agents_table(SOURCES) in page
    assert with_table(page, SOURCES) == page


def test_every_agent_has_its_row_with_its_locations() -> None:
    table = agents_table(SOURCES)
    assert table.startswith(BEGIN) and table.endswith(END)
    rows = table.splitlines()[3:-1]
    assert len(rows) == len(SOURCES)
    for row, importer in zip(rows, SOURCES.values(), strict=True):
        assert row.startswith(f"| {importer.label} | `{importer.name}`")
        assert all(f"`{where}`" in row for where in importer.locations)
