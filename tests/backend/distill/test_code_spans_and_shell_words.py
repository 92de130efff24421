"""Timeline lines keep the code spans they quote (as plain text), and shell keywords are not
programs (issue 37)."""

from __future__ import annotations

import pytest

from opmem_tui.backend.distill.extract.cues import find_cues, sentences
from opmem_tui.backend.distill.extract.shell import parse_script
from opmem_tui.backend.home import Home

from .conftest import extract_all


def test_a_learning_keeps_the_code_span_it_quotes() -> None:
    [cue] = find_cues("Done. The fix is pushed as `a1b2c3d` on `main.rs`.", from_user=False)
    assert cue.kind == "learning"
    assert cue.sentence == "The fix is pushed as a1b2c3d on main.rs."


def test_a_sentence_lists_the_spans_it_names() -> None:
    text = "The release tool lists both changesets (`brave-owls`, `calm.cats`) as already consumed."
    assert sentences(text) == ["The release tool lists both changesets (brave-owls, calm.cats) as already consumed."]


def test_a_fenced_block_is_still_left_out() -> None:
    text = "Turns out the cache was stale.\n```\nrm -rf cache. then rebuild\n```\nok"
    assert sentences(text) == ["Turns out the cache was stale."]


@pytest.mark.parametrize(
    ("script", "programs"),
    [
        ("for f in *.py; do echo $f; done", ["echo"]),
        ("for i in 1 2 3\ndo\n  pytest -q\ndone", ["pytest"]),
        ("if [ -f x ]; then make build; else npm test; fi", ["make build", "npm test"]),
        ("while read l; do grep foo $l; done < list.txt", ["read", "grep"]),
        ("case $1 in start) ./run.sh;; stop) kill 1;; esac", ["run.sh", "kill"]),
        ("! grep -q x y && { ls; }", ["grep", "ls"]),
        ("ls && cat a.txt", ["ls", "cat"]),
    ],
)
def test_shell_keywords_are_not_programs(script: str, programs: list[str]) -> None:
    assert [c.program for c in parse_script(script)] == programs


def test_a_loop_turn_is_summarised_by_what_it_ran(home: Home) -> None:
    user = home.sessions.append_message("s1", "user", "build every package", created_at=1_700_000_000.0)
    reply = home.sessions.append_message("s1", "assistant", "", parent_id=user.id, created_at=1_700_000_001.0)
    home.sessions.append_message(
        "s1", "tool", "built", parent_id=reply.id, called_by=reply.id, name="Bash",
        input={"command": "for d in api web; do\n  make -C $d\ndone"}, created_at=1_700_000_002.0,
    )  # fmt: skip
    home.sessions.commit_turn("s1")
    [summary] = [e.summary for e in extract_all(home)["s1"].events if e.kind == "work"]
    assert "make" in summary
    assert not {"for", "do", "done"} & set(summary.replace(",", " ").split())


def test_a_version_or_a_file_name_does_not_end_a_sentence() -> None:
    text = "Note: this package recently hit 2.0 with breaking changes. The fix is in main.rs now."
    assert sentences(text) == [
        "Note: this package recently hit 2.0 with breaking changes.",
        "The fix is in main.rs now.",
    ]


def test_markdown_bold_is_not_text() -> None:
    assert sentences("**Note:** This package is alive and well.") == ["Note: This package is alive and well."]


def test_a_line_with_no_stop_is_not_cut_at_a_version() -> None:
    text = "- **Note:** Recently hit 2.0, indicating API stability\n\n### 6. The exporter is fine."
    assert not any(s.endswith("hit 2.") for s in sentences(text))
