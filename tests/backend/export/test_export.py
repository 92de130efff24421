"""The exports as files: what they hold (branch, turns, redaction) and that no session text can
break out of where it is put (the HTML's data element, Markdown's code blocks and details)."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import re
import stat
from pathlib import Path

import pytest

from opmem_tui.backend.export import ExportError, export_session, parse_turn_range, select, write_export
from opmem_tui.backend.export.html import page_data, render_html, script_json
from opmem_tui.backend.export.markdown import fence, prose, render_markdown
from opmem_tui.backend.home import Home
from opmem_tui.backend.store.sessions import SessionStore

from .sample import HOSTILE, SECRET, hostile_session


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return Home(tmp_path / "home", durable=False).sessions


@pytest.fixture
def sid(store: SessionStore) -> str:
    return hostile_session(store)


def _data_of(page: str) -> dict:
    m = re.search(r'<script type="application/json" id="opmem-data">(.*?)</script>', page, re.S)
    assert m is not None
    return json.loads(m.group(1))


def test_turn_ranges() -> None:
    assert parse_turn_range(None, 5) == (1, 5)
    assert parse_turn_range("2..4", 5) == (2, 4)
    assert parse_turn_range("3..", 5) == (3, 5)
    assert parse_turn_range("..2", 5) == (1, 2)
    assert parse_turn_range("4", 5) == (4, 4)
    assert parse_turn_range("2..99", 5) == (2, 5)
    for bad in ("x", "4..2", "0..1", "..", "9"):
        with pytest.raises(ExportError, match="--turns"):
            parse_turn_range(bad, 5)


def test_branch_and_turns_are_chosen(store: SessionStore, sid: str) -> None:
    whole = select(store, sid)
    assert whole.branch == "main" and [t.number for t in whole.turns] == [1, 2, 3] and whole.total_turns == 3
    part = select(store, sid, turns="2..3")
    assert [t.number for t in part.turns] == [2, 3] and part.total_turns == 3
    retry = next(b.name for b in store.branches(sid) if b.name.startswith("retry-"))
    other = select(store, sid, branch=retry)
    assert other.branch == retry and other.total_turns == 2
    assert other.turns[-1].last.content == "A different take on the job."
    with pytest.raises(ExportError, match=r"no branch 'nope'.*main"):
        select(store, sid, branch="nope")


def test_redacted_unless_raw(store: SessionStore, sid: str) -> None:
    for fmt in ("html", "md", "json"):
        text = export_session(store, sid, fmt)
        assert SECRET not in text, fmt
        assert "[secret:github-token#" in text, fmt
        assert SECRET in export_session(store, sid, fmt, raw=True), fmt


def test_json_holds_the_nodes_as_stored(store: SessionStore, sid: str) -> None:
    text = export_session(store, sid, "json", raw=True)
    assert "\x9b" not in text and "\x1b" not in text  # escaped: a terminal shows the JSON as text
    doc = json.loads(text)
    stored = {n.id: n.to_json() for n in store.get_branch(sid)}
    assert {n["id"]: n for n in doc["nodes"]} == json.loads(json.dumps(stored))
    assert doc["meta"]["id"] == sid and doc["branch"] == "main" and doc["redacted"] is False
    assert [t["number"] for t in doc["turns"]] == [1, 2, 3]
    assert {b["name"] for b in doc["branches"]} == {b.name for b in store.branches(sid)}
    redacted = json.loads(export_session(store, sid, "json"))
    assert redacted["redacted"] is True and len(redacted["nodes"]) == len(doc["nodes"])


def test_html_data_cannot_leave_its_element(store: SessionStore, sid: str) -> None:
    page = export_session(store, sid, "html")
    # only our own two script elements close; no text of the session opens or closes a tag
    assert page.count("</script>") == 2 and page.count("<script") == 2
    for text in HOSTILE[:4]:
        assert text not in page
    assert "\u2028" not in page and "\u2029" not in page and "<!--" not in page
    data = _data_of(page)  # and the data still reads back exactly
    texts = [n.get("text", "") for t in data["turns"] for n in t["nodes"]]
    assert any(HOSTILE[0] in t for t in texts) and any(HOSTILE[3] in t for t in texts)
    assert any(HOSTILE[5] in t for t in texts)


def test_script_json_escapes_what_could_end_a_script() -> None:
    text = script_json({"a": "</script><!-- & \u2028 \u2029 \ud800"})
    assert not set("<>&") & set(text) and "\u2028" not in text and "\u2029" not in text
    text.encode("utf-8")  # a lone surrogate cannot make the file invalid UTF-8
    assert json.loads(text)["a"].startswith("</script><!-- & \u2028 \u2029")


def test_html_csp_forbids_the_network_and_allows_only_its_script(store: SessionStore, sid: str) -> None:
    page = export_session(store, sid, "html")
    csp = html.unescape(re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1))
    assert "default-src 'none'" in csp and "img-src data:" in csp and "connect-src" not in csp
    script = re.search(r"<script>(.*?)</script>", page, re.S).group(1)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in csp
    assert "http://" not in page and "https://" not in page  # nothing to fetch, not even a link
    assert "unsafe-inline" not in csp.split("script-src", 1)[1].split(";")[0]


def test_html_title_and_facts_are_escaped(store: SessionStore) -> None:
    store.append_message("t", "user", "hi")
    store.update_session("t", title="<img src=x onerror=alert(1)> & co")
    page = export_session(store, "t", "html")
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt; &amp; co" in page


def test_html_page_data_folds_nothing_away(store: SessionStore, sid: str) -> None:
    """The page folds long texts when drawn; the data holds them whole (show all shows all)."""
    data = page_data(select(store, sid))
    long = data["turns"][1]["nodes"][2]
    assert long["kind"] == "tool" and long["text"].count("\n") == 2000
    edit = data["turns"][0]["nodes"][3]
    assert edit["edits"][0]["lines"][1:3] == [["-", "x = 1"], ["+", "x = 2"]]
    assert data["turns"][1]["forks"] and data["turns"][1]["forks"][0].startswith("retry-")
    assert data["turns"][0]["nodes"][0]["role"] == "user"
    assert data["turns"][0]["nodes"][1]["thinking"].startswith("thinking about")


def test_terminal_escapes_are_stripped_from_html_and_md(store: SessionStore) -> None:
    store.append_message("esc", "user", "colour \x1b[31mred\x1b[0m and a title \x1b]0;pwned\x07 bell")
    for fmt in ("html", "md"):
        text = export_session(store, "esc", fmt)
        assert "\x1b" not in text and "\x07" not in text and "red" in text


def test_markdown_keeps_session_markup_inert(store: SessionStore, sid: str) -> None:
    md = export_session(store, sid, "md")
    outside_code = re.sub(r"^(`{3,})[^\n]*\n.*?^\1$", "", md, flags=re.S | re.M)
    assert "```" not in outside_code
    for text in (*HOSTILE[:4], HOSTILE[6]):
        assert text not in outside_code  # in a code block it is shown, as code
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in md
    # our <details> open and close in pairs: no message closed one early
    assert md.count("<details>") == md.count("</details>") > 0
    assert md.count("<summary>") == md.count("</summary>")
    assert "```diff" in md and "-x = 1" in md and "+x = 2" in md
    assert "… 1,880 more lines" in md  # the 2,000-line output is cut for a pull request


def test_markdown_fences_and_prose() -> None:
    assert fence("a ``` b") == "````\na ``` b\n````"
    assert prose("see <b>\n```\n<kept>\n```\nafter <i>") == "see &lt;b&gt;\n```\n<kept>\n```\nafter &lt;i&gt;"
    assert prose("```py\nopen fence") == "```py\nopen fence\n```"  # closed where the message ends
    assert prose("~~~~\n```\n</details>\n~~~~\n<x>") == "~~~~\n```\n</details>\n~~~~\n&lt;x&gt;"


def test_markdown_of_a_range(store: SessionStore, sid: str) -> None:
    md = render_markdown(select(store, sid, turns="2"))
    assert "## Turn 2" in md and "## Turn 1" not in md and "turns 2–2 of 3" in md
    assert "Other branches: `retry-" in md


def test_write_export_is_whole_and_names_bad_targets(tmp_path: Path) -> None:
    target = write_export("hello", tmp_path / "out.html")
    assert target.read_text() == "hello" and [p.name for p in tmp_path.iterdir()] == ["out.html"]
    with pytest.raises(ExportError, match="is a folder"):
        write_export("x", tmp_path)
    with pytest.raises(ExportError, match="no such folder"):
        write_export("x", tmp_path / "missing" / "out.html")


@pytest.mark.parametrize(("umask", "shared"), [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_an_export_follows_the_umask_and_a_raw_one_stays_private(tmp_path: Path, umask: int, shared: int) -> None:
    """A redacted export is a file to share: the mode any new file gets (0666 less the umask). A
    raw one holds the session's secrets: 0600, even where the umask would let others read it."""
    old = os.umask(umask)
    try:
        shared_file = write_export("redacted", tmp_path / "shared.html")
        raw_file = write_export("raw", tmp_path / "raw.html", private=True)
        (tmp_path / "over.html").write_text("old")
        (tmp_path / "over.html").chmod(0o600)
        over = write_export("redacted again", tmp_path / "over.html")
    finally:
        os.umask(old)
    assert stat.S_IMODE(shared_file.stat().st_mode) == shared
    assert stat.S_IMODE(raw_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(over.stat().st_mode) == shared and over.read_text() == "redacted again"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["over.html", "raw.html", "shared.html"]  # no temp left


def test_write_export_into_a_folder_it_cannot_write_names_the_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read-only folder (faked: the tests may run as root, which chmod does not stop) or a
    failing rename: one ExportError naming the file asked for, no temp file left, the old file kept."""
    import opmem_tui.backend.export as export

    def denied(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    with monkeypatch.context() as m:
        m.setattr(export, "_temp_beside", denied)
        with pytest.raises(ExportError, match=r"out\.html: cannot write there \(Permission denied\)"):
            write_export("x", tmp_path / "out.html")
    (tmp_path / "kept.html").write_text("old")
    monkeypatch.setattr(export.os, "replace", denied)
    with pytest.raises(ExportError, match=r"kept\.html: not written \(Permission denied\)"):
        write_export("new", tmp_path / "kept.html")
    assert [p.name for p in tmp_path.iterdir()] == ["kept.html"] and (tmp_path / "kept.html").read_text() == "old"


def test_an_empty_branch_and_a_session_without_user_message(store: SessionStore) -> None:
    store.append_message("sys", "system", "preface only")
    page = render_html(select(store, "sys"))
    assert _data_of(page)["turns"][0]["n"] == 0
    assert "preface only" in export_session(store, "sys", "md")


def test_a_lone_surrogate_never_breaks_a_file(store: SessionStore, tmp_path: Path) -> None:
    store.append_message("sur", "user", "broken \udc80 text")
    store.update_session("sur", title="title \ud800")
    for fmt in ("html", "md", "json"):
        write_export(export_session(store, "sur", fmt), tmp_path / f"x.{fmt}")  # valid UTF-8 written
    doc = json.loads((tmp_path / "x.json").read_text())
    assert doc["nodes"][0]["content"] == "broken \udc80 text"
