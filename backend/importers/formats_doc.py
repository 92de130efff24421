"""The agents table of docs/import-formats.md, derived from the importers' own declarations.

``python -m opmem_tui.backend.importers.formats_doc`` rewrites the table between its markers; a
test checks the page holds what this makes.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from .base import Importer

BEGIN = "<!-- agents table: made by backend/importers/formats_doc.py from the importer classes -->"
END = "<!-- end of agents table -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def agents_table(sources: Mapping[str, Importer]) -> str:
    """One row per importer: agent, source name, default locations, a session's shape, what is read, module."""
    rows = [
        BEGIN,
        "| agent | source | default location | a session is | what is read | module |",
        "|---|---|---|---|---|---|",
    ]
    for name, importer in sources.items():
        where = ", ".join(f"`{p}`" for p in importer.locations) or "none: give the files or folders"
        module = "backend/importers/" + type(importer).__module__.rsplit(".", 1)[-1] + ".py"
        names = ", ".join(f"`{a}`" for a in (name, *importer.aliases))
        cells = (importer.label, names, where, importer.shape.describe(), importer.reads, f"`{module}`")
        rows.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    rows.append(END)
    return "\n".join(rows)


def with_table(page: str, sources: Mapping[str, Importer]) -> str:
    """`page` with its agents table replaced by the one the importers make."""
    start, end = page.index(BEGIN), page.index(END) + len(END)
    return page[:start] + agents_table(sources) + page[end:]


def main(argv: list[str]) -> int:
    from .registry import SOURCES

    path = Path(argv[0]) if argv else Path("docs/import-formats.md")
    page = path.read_text(encoding="utf-8")
    path.write_text(with_table(page, SOURCES), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
