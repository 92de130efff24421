"""safe_text and wrap_text: what reaches the screen is plain, visible text of the right width."""

from __future__ import annotations

from rich.cells import cell_len

from opmem_tui.widgets.line_view import wrap_text
from opmem_tui.widgets.safe_text import clean, one_line, plain


def test_clean_strips_escape_sequences_and_controls_but_keeps_newline_and_tab():
    raw = "a\x1b]52;c;SGVsbG8=\x07b\x1b[2Jc\x9b31md\x00e\r\nf\tg\x7f"
    assert clean(raw) == "abcde\nf\tg"
    assert clean("[bold red]x[/]") == "[bold red]x[/]"  # markup is text, untouched
    assert clean(None) == "" and clean(42) == "42"


def test_one_line_flattens_and_truncates():
    assert one_line("a\n b\t c", 20) == "a b c"
    assert one_line("x" * 50, 10) == "x" * 9 + "…"
    assert one_line("\x1b[31mred\x1b[0m", 10) == "red"


def test_plain_text_is_not_markup():
    text = plain("[bold]x[/bold]")
    assert text.plain == "[bold]x[/bold]" and not text.spans


def test_wrap_ascii_words_and_long_words():
    assert wrap_text("one two three four", 9) == ["one two", "three", "four"]
    assert wrap_text("x" * 25, 10) == ["x" * 10, "x" * 10, "x" * 5]
    assert wrap_text("a\n\nb", 10) == ["a", "", "b"]
    assert wrap_text("\tindent", 20) == ["    indent"]


def test_wrap_wide_characters_by_cells():
    lines = wrap_text("日本語のテキストをここで折り返す", 10)
    assert all(cell_len(line) <= 10 for line in lines)
    assert "".join(lines) == "日本語のテキストをここで折り返す"


def test_wrap_huge_non_ascii_line_stays_within_width_and_is_fast():
    line = "é" * 50_000 + "日" * 10_000
    lines = wrap_text(line, 80)
    assert "".join(lines) == line
    assert all(cell_len(part) <= 80 for part in lines)


def test_wrap_five_megabytes_keeps_every_word_within_width():
    # Its speed is in bench/tui_replay_step.py (expanding 5 MB of tool output), not asserted here.
    text = ("word " * 2_000 + "\n") * 500  # 5 MB, long lines
    lines = wrap_text(text, 100)
    assert all(len(line) <= 100 for line in lines)
    assert sum(line.count("word") for line in lines) == 1_000_000


def test_wrap_non_ascii_breaks_between_words_not_inside_them():
    text = "press ctrl+p and pick “Import sessions: Claude Code” (or Codex, Gemini CLI, Aider…), or quit"
    lines = wrap_text(text, 30)
    assert lines == [
        "press ctrl+p and pick “Import",
        "sessions: Claude Code” (or",
        "Codex, Gemini CLI, Aider…), or",
        "quit",
    ]
    assert " ".join(lines) == text
    wide = wrap_text("日本語のテキストはここにあります、とても長い行です。 and more", 20)
    assert all(cell_len(line) <= 20 for line in wide) and wide[-1] == "more"
    assert wrap_text("    indented “x” code that wraps here", 20)[0] == "    indented “x”"  # indentation kept
