from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opmem_tui.backend.recall.injection import BEGIN, END, InjectionError, splice, write_block

BLOCK = "═══\nopmem memory · project: shop, last consolidated 2025-06-15\n═══\n· a fact   ↪ session:cc-1\n═══\n"


def test_a_missing_file_is_created_with_the_block(tmp_path: Path) -> None:
    path = tmp_path / "CLAUDE.md"
    assert write_block(path, BLOCK)
    assert path.read_text(encoding="utf-8") == f"{BEGIN}\n{BLOCK}{END}\n"


def test_user_text_around_the_block_stays_byte_identical_twice(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    before = "# My agent rules\n\nUse tabs.  \n\n"
    after = "\n## More rules\nNo emoji. ünïcödé ✓\n\ttrailing tab\t"
    path.write_bytes((before + f"{BEGIN}\nold block\n{END}" + after).encode())
    assert write_block(path, BLOCK)
    first = path.read_bytes()
    assert not write_block(path, BLOCK)  # the same block again: nothing to write
    assert path.read_bytes() == first
    text = first.decode()
    assert text.startswith(before) and text.endswith(after)
    assert text[len(before) : len(text) - len(after)] == f"{BEGIN}\n{BLOCK}{END}"
    assert write_block(path, BLOCK.replace("a fact", "another fact"))
    again = path.read_text()
    assert again.startswith(before) and again.endswith(after) and "another fact" in again


def test_appended_to_a_file_without_markers_and_replaced_after(tmp_path: Path) -> None:
    path = tmp_path / "GEMINI.md"
    path.write_bytes(b"Be brief.")  # no final newline
    write_block(path, BLOCK)
    first = path.read_bytes()
    assert first.startswith(b"Be brief.\n\n" + BEGIN.encode())
    write_block(path, BLOCK)
    assert path.read_bytes() == first


def test_crlf_files_keep_crlf(tmp_path: Path) -> None:
    path = tmp_path / "CLAUDE.md"
    path.write_bytes(b"rules\r\n")
    write_block(path, BLOCK)
    data = path.read_bytes()
    assert data.startswith(b"rules\r\n\r\n") and b"\n" not in data.replace(b"\r\n", b"")


def test_mode_is_kept_and_a_symlink_is_written_through(tmp_path: Path) -> None:
    real = tmp_path / "shared-rules.md"
    real.write_text("mine\n")
    os.chmod(real, 0o600)
    link = tmp_path / "CLAUDE.md"
    link.symlink_to(real)
    write_block(link, BLOCK)
    assert link.is_symlink() and "mine\n" in real.read_text() and BEGIN in real.read_text()
    assert stat.S_IMODE(real.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    "text",
    [
        f"{BEGIN}\nno end\n",
        f"{END}\n{BEGIN}\n",
        f"{BEGIN}\n{END}\n{BEGIN}\n{END}\n",
        f"x\n{END}\n",
    ],
)
def test_broken_markers_are_refused_and_nothing_is_written(tmp_path: Path, text: str) -> None:
    path = tmp_path / "CLAUDE.md"
    path.write_text(text)
    with pytest.raises(InjectionError, match=r"CLAUDE\.md"):
        write_block(path, BLOCK)
    assert path.read_text() == text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["CLAUDE.md"]


def test_non_utf8_files_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "CLAUDE.md"
    path.write_bytes(b"\xff\xfe rules")
    with pytest.raises(InjectionError, match="not UTF-8"):
        write_block(path, BLOCK)
    assert path.read_bytes() == b"\xff\xfe rules"


user_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=200).filter(
    lambda t: "opmem:core" not in t and "\r" not in t
)


@settings(max_examples=60, deadline=None)
@given(user_text, user_text)
def test_text_around_the_block_is_kept_for_any_user_text(before: str, after: str) -> None:
    start = before + ("\n" if before and not before.endswith("\n") else "")
    text = f"{start}{BEGIN}\nold\n{END}{after}"
    once = splice(text, BLOCK, Path("CLAUDE.md"))
    twice = splice(once, BLOCK, Path("CLAUDE.md"))
    assert once == twice
    assert once.startswith(start) and once.endswith(after)
