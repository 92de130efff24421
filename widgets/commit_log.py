"""A project's commit history, newest first, a page at a time; agent commits are marked and
show the session turn that made them."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from opmem_tui.backend.projects.records import CommitInfo

from .messages import CommitHighlighted, LinkedTurnChosen, MoreCommitsWanted
from .safe_text import one_line
from .secret_marks import SECRET_VARIABLE, mark_text
from .session_table import age_label
from .styling import theme_style


@dataclass(frozen=True)
class TurnLink:
    """Where a commit came from: a session and turn (None when only the session is known)."""

    session_id: str
    turn: int | None
    session_title: str = ""
    head_id: str = ""  # the turn's last node: opens the branch that made the commit


AGENT_PREFIX = re.compile(r"^\[agent [^\]]*\] turn \d+:\s*")  # the Linked turn column says it
BY_WIDTH = 16
LINK_WIDTH = 28


class CommitLog(DataTable):
    """Rows are the project log's CommitInfo records, newest first."""

    BINDINGS = [
        Binding("enter", "open_turn", "Open turn", id="commits.open_turn"),
    ]

    DEFAULT_CSS = """
    CommitLog { height: 1fr; overflow-x: hidden; }
    """

    PREFETCH = 10  # ask for the next page when the cursor is this close to the end

    def __init__(self, *, now: Callable[[], float] = time.time, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", show_cursor=True)
        self.now = now
        self.project_id: str | None = None
        self.commits: list[CommitInfo] = []
        self.links: dict[str, TurnLink] = {}
        self.complete = True
        self._asked_at = -1
        self._announced: str | None = None

    def on_mount(self) -> None:
        self.add_column("Commit", key="oid", width=7)
        self.add_column("Age", key="age", width=4)
        self.add_column("By", key="by", width=BY_WIDTH)
        self.add_column("Linked turn", key="turn", width=LINK_WIDTH)
        self.add_column("Summary", key="summary")
        self.on_mount_theme()

    def on_mount_theme(self) -> None:
        self.watch(self.app, "theme", self._retheme, init=False)

    def _retheme(self) -> None:
        if not self.commits:
            return
        row = self.cursor_row
        commits = self.commits
        self.clear()
        now = self.now()
        self.add_rows([self._row(c, now) for c in commits])
        self.move_cursor(row=row, animate=False)

    def reset(self, project_id: str | None) -> None:
        self.project_id = project_id
        self.commits = []
        self.links = {}
        self.complete = True
        self._asked_at = -1
        self._announced = None
        self.clear()

    def add_page(
        self, project_id: str, commits: Sequence[CommitInfo], links: dict[str, TurnLink], complete: bool
    ) -> None:
        """Append one page; `complete` says there is nothing older to fetch."""
        if project_id != self.project_id:
            return
        self.links.update(links)
        self.complete = complete
        start = len(self.commits)
        self.commits.extend(commits)
        now = self.now()
        self.add_rows([self._row(c, now) for c in commits])
        if start == 0 and self.commits:
            self.move_cursor(row=0, animate=False)
            self._announce()
        self.call_after_refresh(self._maybe_more)  # keep going until the view is full

    def _row(self, commit: CommitInfo, now: float) -> tuple[Text, ...]:
        link = self.link_for(commit)
        if commit.is_agent:
            by = Text(
                "● " + one_line(commit.model or "agent", BY_WIDTH - 2),
                style=theme_style(self, "secondary", bold=True),
            )
        else:
            by = Text(one_line(commit.author_name, BY_WIDTH))
        turn = Text("")
        if link is not None:
            where = f"turn {link.turn}" if link.turn is not None else "session"
            title = one_line(link.session_title or link.session_id, LINK_WIDTH - len(where) - 5)
            turn = Text(f"↪ {where} · {title}", style=theme_style(self, "accent"))
        secret = theme_style(self, SECRET_VARIABLE, bold=True)  # a masked secret (opmem_tui/masking.py)
        return (
            Text(commit.oid[:7], style=theme_style(self, "warning")),
            Text(age_label(commit.time, now), style=theme_style(self, "text-muted")),
            by,
            mark_text(turn, secret),
            mark_text(
                Text(
                    one_line(AGENT_PREFIX.sub("", commit.summary, count=1) if link is not None else commit.summary, 100)
                ),
                secret,
            ),
        )

    def link_for(self, commit: CommitInfo) -> TurnLink | None:
        link = self.links.get(commit.oid)
        if link is not None:
            return link
        if commit.session_id:  # an agent commit names its session in the message
            return TurnLink(commit.session_id, commit.turn)
        return None

    @property
    def current(self) -> CommitInfo | None:
        row = self.cursor_row
        return self.commits[row] if 0 <= row < len(self.commits) else None

    def _announce(self) -> None:
        current = self.current
        if current is None or self.project_id is None:
            return
        if current.oid != self._announced:
            self._announced = current.oid
            self.post_message(CommitHighlighted(self.project_id, current.oid))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._announce()
        self._maybe_more()

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if new >= self.max_scroll_y - 2:
            self._maybe_more()

    def _maybe_more(self) -> None:
        if self.complete or self.project_id is None:
            return
        loaded = len(self.commits)
        near_end = self.cursor_row >= loaded - self.PREFETCH or self.scroll_y >= self.max_scroll_y - 2
        if near_end and self._asked_at != loaded:
            self._asked_at = loaded
            self.post_message(MoreCommitsWanted(self.project_id, loaded))

    def action_open_turn(self) -> None:
        current = self.current
        if current is None:
            return
        link = self.link_for(current)
        if link is None:
            self.notify("This commit is not linked to a session turn.", markup=False)
            return
        self.post_message(LinkedTurnChosen(link.session_id, link.turn, current.oid, link.head_id))
