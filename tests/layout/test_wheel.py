"""The wheel holds every module of the tree and its package data: subpackages are found by the
build (setup.py), never listed by hand, and an editable install (which maps only the top-level
folders) cannot hide one that is missing."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import zipfile
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = {
    "opmem_tui": "opmem_tui",
    "opmem_tui/widgets": "widgets",
    "opmem_tui/backend": "backend",
    "opmem_tui/themes": "themes",
}


def tree_files() -> set[str]:
    """Every .py file and package-data file of the tree, by its path in the wheel."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    out: set[str] = set()
    for inside, folder in FOLDERS.items():
        for path in (ROOT / folder).rglob("*"):
            rel = path.relative_to(ROOT / folder)
            if (
                "__pycache__" in rel.parts
                or not path.is_file()
                or (inside == "opmem_tui" and rel.parts[0] in ("widgets", "backend", "themes"))
            ):
                continue
            package = ".".join([*inside.split("/"), *rel.parts[:-1]])
            if path.suffix == ".py" or any(fnmatch(path.name, p) for p in data.get(package, ())):
                out.add(f"{inside}/{rel.as_posix()}")
    return out


def test_the_wheel_holds_every_module_and_data_file_of_the_tree(tmp_path: Path) -> None:
    source = tmp_path / "source"  # built from a copy: the build's own folders stay out of the tree
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for folder in FOLDERS.values():
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "dist"
    built = subprocess.run(
        [sys.executable, "-c", f"from setuptools import build_meta; print(build_meta.build_wheel({str(out)!r}))"],
        cwd=source,
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    wheel = out / built.stdout.split()[-1]
    with zipfile.ZipFile(wheel) as zf:
        in_wheel = {n for n in zf.namelist() if n.startswith("opmem_tui/")}
    expected = tree_files()
    assert len(expected) > 200  # the tree was read (a wrong root finds nothing and proves nothing)
    assert sorted(expected - in_wheel) == [], "in the tree, missing from the wheel"
    assert sorted(in_wheel - expected) == [], "in the wheel, not in the tree"
