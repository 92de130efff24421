"""One commit's diff: +/- lines coloured as a diff, their code coloured by the file's language.

Highlighting happens per drawn line (pygments, lexer picked from the file name), so a huge
diff costs only what is on screen.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_for_filename
from pygments.token import Comment, Keyword, Name, Number, Operator, String, Token
from pygments.util import ClassNotFound
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding

from opmem_tui.backend.projects.records import CommitDetail

from .line_view import Line, LineView, wrap_text
from .messages import BlameRequested
from .safe_text import clean, one_line

# Component class per token family, most specific first.
TOKEN_CLASSES = (
    (Comment, "code-comment"),
    (String, "code-string"),
    (Number, "code-number"),
    (Keyword, "code-keyword"),
    (Name.Function, "code-function"),
    (Name.Class, "code-function"),
    (Name.Builtin, "code-builtin"),
    (Name.Decorator, "code-builtin"),
    (Operator, "code-operator"),
)

CODE_STYLES = {"add", "del", "ctx"}


@lru_cache(maxsize=64)
def lexer_for(path: str) -> Lexer | None:
    try:
        return get_lexer_for_filename(path, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None
    except Exception:
        return None


def _token_class(token: Any) -> str | None:
    for family, name in TOKEN_CLASSES:
        if token in family:
            return name
    return None


def diff_lines(detail: CommitDetail, width: int) -> tuple[list[Line], list[str]]:
    """Lines for a CommitDetail and, per item (file), its path; item -1 is the commit header."""
    lines: list[Line] = []
    paths: list[str] = []
    commit = detail.commit
    stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(commit.time)) if commit.time else ""
    lines.append(Line(f"commit {commit.oid}", "commit", -1))
    author = one_line(f"{commit.author_name} <{commit.author_email}>", 120)
    lines.append(Line(f"Author: {author}   {stamp}", "meta", -1))
    lines.append(Line("", "blank", -1))
    for text in wrap_text(clean(commit.message).rstrip(), width - 4):
        lines.append(Line(text, "message", -1, 4))
    lines.append(Line("", "blank", -1))
    if not detail.files:
        lines.append(Line("(no file changes)", "meta", -1))
    for item, fd in enumerate(detail.files):
        path = clean(fd.path)
        paths.append(path)
        moved = f" (from {clean(fd.old_path)})" if fd.old_path and fd.old_path != fd.path else ""
        lines.append(Line(f"{fd.status} {path}{moved}  +{fd.additions} −{fd.deletions}", "file", item))
        if fd.binary:
            lines.append(Line("binary file", "meta", item, 2))
            continue
        for hunk in fd.hunks:
            lines.append(Line(one_line(hunk.header, 400), "hunk", item))
            for dl in hunk.lines:
                origin = dl.origin
                style = "add" if origin == "+" else "del" if origin == "-" else "ctx" if origin == " " else "meta"
                text = clean(dl.content).rstrip("\n")
                marker = origin if origin in "+- " else " "
                for index, part in enumerate(wrap_text(text, width - 2) or [""]):
                    lines.append(Line((marker if index == 0 else " ") + part, style, item))
        if fd.truncated:
            lines.append(Line("… diff truncated", "meta", item, 2))
        lines.append(Line("", "blank", -1))
    return lines, paths


class DiffView(LineView):
    BINDINGS = [Binding("b", "blame", "Blame file", id="diff.blame")]

    COMPONENT_CLASSES = LineView.COMPONENT_CLASSES | {
        "line--commit",
        "line--meta",
        "line--message",
        "line--file",
        "line--hunk",
        "line--add",
        "line--del",
        "line--ctx",
        "line--empty",
        "line--code-comment",
        "line--code-string",
        "line--code-number",
        "line--code-keyword",
        "line--code-function",
        "line--code-builtin",
        "line--code-operator",
    }

    DEFAULT_CSS = """
    DiffView {
        height: 1fr;
        & > .line--commit { color: $warning; text-style: bold; }
        & > .line--meta { color: $text-muted; }
        & > .line--message { color: $foreground; }
        & > .line--file { color: $primary; text-style: bold; background: $boost; }
        & > .line--hunk { color: $secondary; }
        & > .line--add { color: $success; background: $success 12%; }
        & > .line--del { color: $error; background: $error 12%; }
        & > .line--ctx { color: $foreground 80%; }
        & > .line--empty { color: $text-muted; text-style: italic; }
        & > .line--code-comment { color: $text-muted; text-style: italic; }
        & > .line--code-string { color: $success; }
        & > .line--code-number { color: $warning; }
        & > .line--code-keyword { color: $secondary; text-style: bold; }
        & > .line--code-function { color: $primary; }
        & > .line--code-builtin { color: $accent; }
        & > .line--code-operator { color: $accent; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.detail: CommitDetail | None = None
        self._paths: list[str] = []

    def show_detail(self, detail: CommitDetail) -> None:
        self.detail = detail
        width = self.scrollable_content_region.width or 100
        lines, self._paths = diff_lines(detail, width)
        self.set_lines(lines)

    def show_message(self, message: str) -> None:
        self.detail = None
        self._paths = []
        self.set_lines([Line(one_line(message, 300), "empty", -1, 1)])

    def file_on_screen(self) -> str | None:
        """The path of the file whose diff is at the top of the view (else the first file)."""
        detail = self.detail
        if detail is None or not detail.files:
            return None
        item = self.item_at(0)
        if item < 0:  # the commit header or a blank line: the next file down, else the first
            top = round(self.scroll_y)
            item = next((line.item for line in self.lines[top:] if line.item >= 0), 0)
        return detail.files[item].path if 0 <= item < len(detail.files) else detail.files[0].path

    def action_blame(self) -> None:
        path = self.file_on_screen()
        if path is None or self.detail is None:
            self.notify("No file here to blame: pick a commit that changed files.", markup=False)
            return
        self.post_message(BlameRequested(path, self.detail.commit.oid))

    def line_segments(self, line: Line, style: Style, mark: Style) -> list[Segment]:
        if line.style not in CODE_STYLES or not (0 <= line.item < len(self._paths)):
            return [Segment(line.text, style + mark)]
        return code_segments(line.text, self._paths[line.item], style, mark, self._style)


def code_segments(text: str, path: str, style: Style, mark: Style, style_of: Callable[[str], Style]) -> list[Segment]:
    """A diff line (its first cell the +/-/space marker) with its code coloured by the language
    of `path`; `style_of(name)` gives the style of a `code-*` component class."""
    lexer = lexer_for(path)
    if lexer is None or len(text) < 2:
        return [Segment(text, style + mark)]
    segments = [Segment(text[0], style + mark)]
    try:
        tokens = list(lexer.get_tokens(text[1:]))
    except Exception:
        return [Segment(text, style + mark)]
    for token, value in tokens:
        value = value.replace("\n", "")
        if not value:
            continue
        name = _token_class(token) if token is not Token.Text else None
        token_style = style_of(name) if name else Style()
        # Keep the diff's background, take the language's colour.
        segments.append(
            Segment(
                value, style + Style(color=token_style.color, italic=token_style.italic, bold=token_style.bold) + mark
            )
        )
    return segments
