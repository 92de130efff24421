"""No module of the package over 600 lines (one module, one job: the project guide)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MOST = 600


def test_no_module_is_over_600_lines() -> None:
    sizes = {
        path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for folder in ("backend", "widgets", "opmem_tui")
        for path in (ROOT / folder).rglob("*.py")
    }
    assert len(sizes) > 200  # the tree was read
    over = {name: lines for name, lines in sorted(sizes.items()) if lines > MOST}
    assert over == {}, f"modules over {MOST} lines (split them by job): {over}"
