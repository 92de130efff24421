"""The packages of the wheel, found under the folders pyproject's names map (ARCHITECTURE.md §1):
a new subpackage is in the wheel without being listed (tests/test_wheel.py builds it and checks)."""

from setuptools import find_packages, setup

# import name -> folder; a subpackage's folder follows from its parent's
PACKAGE_DIRS = {
    "opmem_tui": "opmem_tui",
    "opmem_tui.widgets": "widgets",
    "opmem_tui.backend": "backend",
    "opmem_tui.themes": "themes",
}

setup(
    package_dir=PACKAGE_DIRS,
    packages=[
        name
        for prefix, folder in PACKAGE_DIRS.items()
        for name in [prefix, *(f"{prefix}.{sub}" for sub in find_packages(folder))]
    ],
)
