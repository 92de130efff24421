"""scrub.Values: a session's values found again in text cut from it (commit subjects, titles,
memory summaries), and nothing else taken for one."""

from __future__ import annotations

from opmem_tui.backend.privacy import marker_for, redact_text
from opmem_tui.backend.privacy.scrub import Values

from .secret_store import GITHUB, PG_PASSWORD, PG_URL


def values() -> Values:
    v = Values()
    v.collect({"content": f"push with {GITHUB} to {PG_URL}"})
    return v


def test_whole_values_and_cut_off_starts_become_markers() -> None:
    v = values()
    marker = redact_text(GITHUB)
    assert v.scrub(f"turn 1: the value is {GITHUB[:17]}") == f"turn 1: the value is {marker}"
    assert v.scrub(f"my key {GITHUB[:9]}…") == f"my key {marker}…"
    assert v.scrub(f"password {PG_PASSWORD} again") == f"password {marker_for('url-password', PG_PASSWORD)} again"
    assert v.scrub(f"first\n{GITHUB[:12]}\nlast") == f"first\n{marker}\nlast"


def test_ids_and_plain_words_stay() -> None:
    v = values()
    node_id = "9f3e" + PG_PASSWORD[:5]  # ends like the start of the password, inside a word
    assert v.scrub(f"Opmem-Head: {node_id}") == f"Opmem-Head: {node_id}"
    assert v.scrub(f"x{PG_PASSWORD}") == f"x{PG_PASSWORD}"  # not a word of its own: left (the detector decides)
    assert v.scrub("ghp") == "ghp"  # shorter than any cut-off that is replaced
    text = "All 12 tests pass."
    assert v.scrub(text) is text
