"""A memory distilled by an opmem that did not redact is re-redacted on first run, once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from opmem_tui.backend.distill import collect
from opmem_tui.backend.distill.pipeline import run
from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import run_import
from opmem_tui.backend.memory import index_update
from opmem_tui.backend.memory.redaction_upgrade import STAMP_NAME, stamped
from opmem_tui.backend.orchestration import ensure_redacted
from opmem_tui.cli import main
from tests.app.secret_sessions import SESSION_ID, leaks, write_transcript


def _ids(memory: Path) -> list[str]:
    out = []
    for log in sorted(memory.rglob("*.jsonl")):
        out += [json.loads(line).get("id", "") for line in log.read_text().splitlines() if line.strip()]
    return out


@pytest.fixture
def old_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Home:
    """A store distilled and indexed as an opmem before the privacy gate did it: values everywhere."""
    home = Home(tmp_path / "home")
    transcript = write_transcript(tmp_path / "t", str(tmp_path))
    assert not run_import(home, "claude", [transcript], bind=False).warnings
    with monkeypatch.context() as m:
        m.setattr(collect, "redact_value", lambda value: value)  # as_shown masks through these two
        m.setattr(collect, "redact_text", lambda text: text)
        m.setattr(index_update, "redact_text", lambda text: text)
        run(home)
    (home.memory_dir / STAMP_NAME).unlink()
    files = [p for p in home.memory_dir.rglob("*") if p.is_file()]
    assert any(leaks(p.read_bytes()) for p in files), "the fixture should hold values like an old memory"
    return home


def test_first_run_masks_every_value_and_keeps_the_record_ids(old_home: Home) -> None:
    memory = old_home.memory_dir
    before = _ids(memory)
    result = CliRunner(env={"OPMEM_HOME": str(old_home.path)}).invoke(main, ["distill"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "re-redacted" in result.output
    files = [p for p in memory.rglob("*") if p.is_file()]
    assert {str(p.relative_to(memory)): leaks(p.read_bytes()) for p in files if leaks(p.read_bytes())} == {}
    assert _ids(memory) == before  # every patch and pointer still points at its record
    assert (memory / "core.md").is_file() and stamped(memory)
    cores = "\n".join(p.read_text() for p in memory.rglob("core.md"))  # the global one and each project's
    assert "session:" in cores
    # the memory still answers (the index rebuilt from the redacted sessions)
    hits = old_home.search("billing staging", k=5)
    assert hits and all(not leaks(h.snippet) for h in hits)
    assert {h.session_id for h in hits} == {f"cc-{SESSION_ID}"}  # the imported session (claude ids: cc-)


def test_it_happens_once_and_a_new_memory_is_only_stamped(old_home: Home, tmp_path: Path) -> None:
    first = ensure_redacted(old_home)
    assert first is not None and first.lines_rewritten > 0 and "re-redacted" in first.message
    stamp_time = (old_home.memory_dir / STAMP_NAME).stat().st_mtime_ns
    assert ensure_redacted(old_home) is None
    assert (old_home.memory_dir / STAMP_NAME).stat().st_mtime_ns == stamp_time
    fresh = Home(tmp_path / "fresh")
    assert ensure_redacted(fresh) is None and not fresh.memory_dir.exists()  # nothing created for nothing


def test_a_torn_line_with_a_value_is_masked_and_still_skipped(old_home: Home) -> None:
    log = old_home.memory_dir / "graph" / "entities.jsonl"
    from tests.app.secret_sessions import GITHUB

    with log.open("a") as f:
        f.write('{"id": "tool.x", "name": "GITHUB_TOKEN=' + GITHUB)  # a crash mid-write, no newline
    assert ensure_redacted(old_home) is not None
    assert not leaks(log.read_bytes())
    torn = [p for p in old_home.memory.problems() if p.path == str(log)]  # still reported, not fatal
    assert [p.message for p in torn] == ["incomplete last line (an interrupted write); skipped"]
