"""The vocabulary is built by scripts/build_vocabulary.py: its curated rows are what the tsv holds."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from opmem_tui.backend.distill.extract import vocabulary

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "build_vocabulary.py"


def load_script():
    spec = importlib.util.spec_from_file_location("build_vocabulary", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_curated_name_is_in_the_tsv_with_its_category():
    # the parser once read no category with a digit: the e2e-framework names ran into the
    # test frameworks' list (one of them "Robot Framework e2e-framework: Playwright")
    rows = load_script()._curated()
    categories = {category for _, category, _, _ in rows}
    assert {"e2e-framework", "test-framework", "ai", "language"} <= categories
    assert not [name for name, _, _, _ in rows if re.search(r"\s[a-z][a-z0-9-]+:", name)]  # a category in a name
    first: dict[str, str] = {}  # a name curated twice (Bun: a runtime and a package manager) keeps its first
    for name, category, _, implies in rows:
        if not implies:  # a driver: looked up, it names what it implies (psycopg2 -> PostgreSQL)
            first.setdefault(name, category)
    wrong = [
        (name, category, getattr(vocabulary.lookup(name), "category", None))
        for name, category in first.items()
        if getattr(vocabulary.lookup(name), "category", None) != category
    ]
    assert not wrong
