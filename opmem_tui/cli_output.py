"""Output that fits where it goes: a table on a terminal, plain lines when piped.

Rich's own terminal detection decides (`Console.is_terminal`, which honours FORCE_COLOR and
TTY_COMPATIBLE). Piped, a table is its header and one line per row, cells joined by two spaces,
never wrapped into narrow columns (a script cuts and greps them; `--json` is the exact form).
"""

from __future__ import annotations

from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

SEPARATOR = "  "


def _cell(value: RenderableType) -> str:
    text = value.plain if isinstance(value, Text) else str(value)
    return " ".join(text.split())  # a cell is one line: newlines and runs of spaces folded


def plain_rows(table: Table) -> list[str]:
    """The table as plain lines: its title, its header, one line per row."""
    columns = table.columns
    lines = [_cell(table.title)] if table.title else []
    if table.show_header:
        lines.append(SEPARATOR.join(_cell(column.header) for column in columns))
    cells = [list(column.cells) for column in columns]
    for row in range(table.row_count):
        lines.append(SEPARATOR.join(_cell(column[row]) if row < len(column) else "" for column in cells).rstrip())
    return lines


def print_table(console: Console, table: Table) -> None:
    """`table` on a terminal; its plain lines when the output is a pipe or a file."""
    if console.is_terminal:
        console.print(table)
        return
    for line in plain_rows(table):
        console.print(Text(line), soft_wrap=True, highlight=False)


_C1_ESCAPES = {code: f"\\u{code:04x}" for code in range(0x7F, 0xA0)}


def json_text(value: object, *, indent: int | None = None) -> str:
    """JSON for a terminal or a pipe: non-ASCII kept readable, but C1 control characters
    (which json leaves raw) escaped, so session text cannot drive the terminal."""
    import json

    return json.dumps(value, ensure_ascii=False, indent=indent, default=str).translate(_C1_ESCAPES)
