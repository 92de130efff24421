"""Every test runs with HOME and OPMEM_HOME inside tmp_path: the user's home is never touched."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

# No per-example deadline: a wall-clock bound fails under load (2 cores, two workers, other jobs).
settings.register_profile("opmem", deadline=None)
settings.load_profile("opmem")

FIXTURES = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures"


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(fake_home))
    monkeypatch.setenv("OPMEM_HOME", str(fake_home / "opmem"))
    monkeypatch.setenv("XDG_DATA_HOME", str(fake_home / ".local" / "share"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(fake_home / ".config"))
    monkeypatch.delenv("OPENPROGRAM_SESSION_CACHE_CAP", raising=False)
    monkeypatch.delenv("OPMEM_SESSION_CACHE_CAP", raising=False)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
