from __future__ import annotations

from pathlib import Path

import pytest

from opmem_tui.backend.home import Home
from opmem_tui.backend.store.sessions import SessionStore


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home(tmp_path / "home")


@pytest.fixture
def store(home: Home) -> SessionStore:
    return home.sessions
