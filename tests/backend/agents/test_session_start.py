"""The SessionStart hook's light path, unit by unit: the project's core file name without
memory/slugs, the cut at a line boundary."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from opmem_tui.backend.agents.session_start import fit


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,12}", fullmatch=True),
        st.sampled_from(["con", "com1.x", "lpt9", "nul.d", "a..b", "x.", "Proj", "a" * 101, "clock$"]),
    )
)
def test_the_hooks_core_file_name_is_safe_name(project_id: str) -> None:
    """session_start's light file name for a project id is memory/slugs.safe_name's."""
    from opmem_tui.backend.agents.session_start import _file_name
    from opmem_tui.backend.memory.slugs import safe_name

    assert _file_name(project_id) == safe_name(project_id)


def test_fit_cuts_at_a_line_boundary_under_the_limit() -> None:
    text = "".join(f"line {i}\n" for i in range(100))
    assert fit(text, 10_000) == text
    cut = fit(text, 50)
    assert len(cut) <= 50 and cut.endswith("\n") and text.startswith(cut)
    assert fit("x" * 100, 50) == ""  # one line too long for the limit: nothing rather than half a line
