"""bench/brief_real.py end to end on one small dev project: real import, distillation, figures in range."""

from __future__ import annotations

import shutil
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


@pytest.mark.skipif(not (PROJECT / "facts.json").exists(), reason="the corpus project is absent")
def test_recall_prints_each_dev_question_its_misses_and_its_snippets() -> None:
    result = brief_real.measure("dev", PROJECT, show=False, show_recall=True)
    assert len(result.questions) == result.brief.questions > 0
    for report in result.questions:
        lines = report.splitlines()
        assert lines[0].startswith("Q: ") and lines[1].startswith("   missed: ")
        assert 1 <= len(lines[2:]) <= brief_real.TOP_K and lines[2].startswith("   1. [")
    assert 0.0 <= result.snippet_recall <= result.brief.questions
    assert not result.blocks  # --recall alone prints no block


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


def _corpus_with_halves(root: Path, *halves: str) -> None:
    """A corpus whose every half holds a copy of the small dev project (real sessions, real labels)."""
    for half in halves:
        shutil.copytree(PROJECT, root / half / PROJECT.name)


@pytest.mark.skipif(not (PROJECT / "facts.json").exists(), reason="the corpus project is absent")
def test_halves_come_from_the_folders_and_both_stays_dev_and_test(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _corpus_with_halves(tmp_path, "dev", "test", "holdout")
    (tmp_path / "empty").mkdir()  # a folder without projects is not a half
    monkeypatch.setattr(brief_real, "CORPUS", tmp_path)
    assert brief_real.halves() == ("dev", "test", "holdout")
    assert [h for h, _ in brief_real.projects("both", None)] == ["dev", "test"]
    assert [h for h, _ in brief_real.projects("holdout", None)] == ["holdout"]


@pytest.mark.skipif(not (PROJECT / "facts.json").exists(), reason="the corpus project is absent")
def test_the_holdout_half_is_measured_and_never_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _corpus_with_halves(tmp_path, "dev", "holdout")
    monkeypatch.setattr(brief_real, "CORPUS", tmp_path)
    assert brief_real.main(["--half", "holdout", "--show", "--recall"]) == 0
    captured = capsys.readouterr()
    assert f"holdout/{PROJECT.name}:" in captured.out and "[holdout]" in captured.out
    assert "--- project block ---" not in captured.out and "--- missed ---" not in captured.out
    assert "--- questions" not in captured.out and "\nQ: " not in captured.out
    assert "the holdout half is only measured" in captured.err


def test_a_half_that_is_not_there_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(brief_real, "CORPUS", tmp_path)
    with pytest.raises(SystemExit):
        brief_real.main(["--half", "holdout"])


CLAUDE = Path(__file__).resolve().parents[3].parent / "shared" / "fixtures" / "transcripts" / "claude-code"


@pytest.mark.skipif(not (CLAUDE / "spotter-short.jsonl").exists(), reason="../shared/fixtures is absent")
def test_a_claude_code_transcript_is_imported_by_claude_alone(tmp_path: Path) -> None:
    # iFlow and Qwen Code write the same record family: their discovery takes any .jsonl too
    shutil.copy(CLAUDE / "spotter-short.jsonl", tmp_path / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl")
    assert brief_real.sources_of(tmp_path) == ["claude"]
    assert brief_real.prompted_sessions("claude", tmp_path) == 1


def test_a_folder_without_sessions_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("nothing here\n", encoding="utf-8")
    with pytest.raises(RuntimeError, match="no session of any importer found"):
        brief_real.sources_of(tmp_path)
