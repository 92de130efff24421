"""bench/brief_real.py end to end on one small dev project: real import, distillation, figures in range."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench"
sys.path.insert(0, str(BENCH))

import brief_real  # noqa: E402

PROJECT = BENCH / "real_corpus" / "dev" / "zen-mcp-server"


@pytest.mark.skipif(not (PROJECT / "facts.json").exists(), reason="the corpus project is absent")
def test_one_dev_project_runs_end_to_end() -> None:
    result = brief_real.measure("dev", PROJECT, show=True)
    assert result.sessions >= 1
    for figures in (result.brief, result.before, result.off):
        assert figures.facts > 0 and 0 <= figures.shown <= figures.facts
        assert 0.0 <= figures.coverage <= 1.0
        assert 0.0 <= figures.recall <= 1.0
        assert figures.questions > 0
        assert figures.largest > 0
    assert "opmem memory · project: zen-mcp-server" in result.blocks["project"]
    # distilled again with the knowledge rules off (RunOptions(knowledge=False)): no brief, so fewer facts
    assert result.off.shown < result.brief.shown


def test_the_test_half_is_never_shown(capsys: pytest.CaptureFixture[str]) -> None:
    if not brief_real.projects("test", None):
        pytest.skip("no test-half project yet")
    name = brief_real.projects("test", None)[0][1].name
    assert brief_real.main(["--half", "test", "--project", name, "--show"]) == 0
    out = capsys.readouterr().out
    assert "--- project block ---" not in out and "--- missed ---" not in out
    assert f"test/{name}:" in out


def test_unknown_project_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert brief_real.main(["--project", "no-such-project"]) == 2
    assert "no corpus project matches" in capsys.readouterr().err
