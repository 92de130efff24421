"""The layer contract (ARCHITECTURE.md §1), checked by import-linter (`lint-imports`, contracts in
pyproject.toml's [tool.importlinter]): opmem_tui -> widgets -> backend; widgets never import the
app shell, git, SQLite or subprocess; backend never imports widgets, the app shell, textual or
rich; privacy never imports distill. lint-imports reads the package from its folders, so it runs on the tree assembled as
installed (backend/ and widgets/ inside opmem_tui/, as pyproject's package-dir maps them)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).with_name("lint-imports")


def assembled(dest: Path) -> Path:
    """The package as installed: opmem_tui/ with backend/, widgets/ and themes/ inside."""
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "opmem_tui", dest / "opmem_tui", ignore=ignore)
    for folder in ("backend", "widgets", "themes"):
        shutil.copytree(ROOT / folder, dest / "opmem_tui" / folder, ignore=ignore)
    return dest


def lint(where: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(where)}
    return subprocess.run(
        [str(LINT), str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_layer_contracts_hold(tmp_path: Path) -> None:
    result = lint(assembled(tmp_path))
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "Contracts: 4 kept, 0 broken" in result.stdout


def test_a_widget_importing_the_app_shell_breaks_them(tmp_path: Path) -> None:
    where = assembled(tmp_path)
    with (where / "opmem_tui" / "widgets" / "messages.py").open("a") as fh:
        fh.write("\nfrom opmem_tui.tabs import sessions  # noqa\n")
    with (where / "opmem_tui" / "backend" / "model.py").open("a") as fh:
        fh.write("\nimport textual  # noqa\n")
    result = lint(where)
    assert result.returncode != 0
    assert "widgets never import the app shell" in result.stdout and "textual" in result.stdout
