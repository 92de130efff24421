"""The replay pane: one turn of a session at a time, drawn through the line API.

`build_turn_lines` (turn_lines.py) turns a Turn into plain Lines; `TurnView` draws them;
`ReplayPane` holds the session's turns, the header and the keys.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from opmem_tui.backend.model import Node, SessionMeta, Turn
from opmem_tui.backend.usage.reports import Usage

from .cost_text import short_number, usage_cost
from .diff_view import CODE_STYLES, TOKEN_CLASSES, code_segments
from .line_view import Line, LineView, wrap_text
from .messages import BranchPickRequested, HistoryRequested, TurnShown
from .safe_text import clean, one_line
from .secret_marks import marked_content
from .tool_edits import tool_edits
from .turn_lines import TurnRender, abbreviate_path, build_turn_lines, node_text, thinking_text


class TurnView(LineView):
    """The scrolling body of the replay pane."""

    BINDINGS = [
        Binding("up", "scroll_up", "Scroll up", show=False, id="replay.scroll_up"),
        Binding("down", "scroll_down", "Scroll down", show=False, id="replay.scroll_down"),
        Binding("pageup", "page_up", "Page up", show=False, id="replay.page_up"),
        Binding("pagedown,space", "page_down", "Page down", show=False, id="replay.page_down"),
        Binding("home", "scroll_top", "Top of turn", show=False, id="replay.scroll_top"),
        Binding("end", "scroll_bottom", "End of turn", show=False, id="replay.scroll_bottom"),
    ]

    COMPONENT_CLASSES = LineView.COMPONENT_CLASSES | {
        "line--user-header",
        "line--assistant-header",
        "line--system-header",
        "line--user",
        "line--assistant",
        "line--system",
        "line--tool",
        "line--args",
        "line--output",
        "line--thinking",
        "line--dim",
        "line--empty",
        "line--file",
        "line--hunk",
        "line--add",
        "line--del",
        "line--ctx",
        *(f"line--{name}" for _, name in TOKEN_CLASSES),
    }

    DEFAULT_CSS = """
    TurnView {
        & > .line--user-header { color: $accent; text-style: bold; }
        & > .line--assistant-header { color: $primary; text-style: bold; }
        & > .line--system-header { color: $warning; text-style: bold; }
        & > .line--user { color: $foreground; }
        & > .line--assistant { color: $foreground; }
        & > .line--system { color: $text-muted; }
        & > .line--tool { color: $secondary; }
        & > .line--args { color: $text-muted; }
        & > .line--output { color: $foreground 85%; }
        & > .line--thinking { color: $text-muted; text-style: italic; }
        & > .line--dim { color: $text-muted; }
        & > .line--empty { color: $text-muted; }
        & > .line--file { color: $primary; text-style: bold; }
        & > .line--hunk { color: $secondary; }
        & > .line--add { color: $success; background: $success 12%; }
        & > .line--del { color: $error; background: $error 12%; }
        & > .line--ctx { color: $foreground 80%; }
        & > .line--code-comment { color: $text-muted; text-style: italic; }
        & > .line--code-string { color: $success; }
        & > .line--code-number { color: $warning; }
        & > .line--code-keyword { color: $secondary; text-style: bold; }
        & > .line--code-function { color: $primary; }
        & > .line--code-builtin { color: $accent; }
        & > .line--code-operator { color: $accent; }
    }
    """

    code_paths: dict[int, str] = {}  # id(line) -> the file that colours it (set with the lines)

    def line_segments(self, line: Line, style: Style, mark: Style) -> list[Segment]:
        path = self.code_paths.get(id(line)) if line.style in CODE_STYLES else None
        if path is None:
            return [Segment(line.text, style + mark)]
        return code_segments(line.text, path, style, mark, self._style)

    def select_item(self, item: int) -> None:
        moved = item != self.selected_item
        super().select_item(item)
        if moved:
            pane = self._pane()
            if pane is not None:
                pane.cursor_moved()  # a message whose secrets were shown is masked again

    def on_click(self, event: events.Click) -> None:
        item = self.item_at(event.y)
        if item >= 0:
            pane = self._pane()
            if pane is not None:
                pane.select(item, scroll=False)
                if event.chain == 2:
                    pane.action_toggle_item()

    def _pane(self) -> ReplayPane | None:
        node = self.parent
        while node is not None and not isinstance(node, ReplayPane):
            node = node.parent
        return node

    def on_resize(self, event: events.Resize) -> None:
        super().on_resize(event)
        pane = self._pane()
        if pane is not None:
            pane.width_changed(self.scrollable_content_region.width)

    def action_scroll_up(self) -> None:
        self.scroll_relative(y=-1, animate=False)

    def action_scroll_down(self) -> None:
        self.scroll_relative(y=1, animate=False)

    def action_page_up(self) -> None:
        self.scroll_relative(y=-max(self.size.height - 1, 1), animate=False)

    def action_page_down(self) -> None:
        self.scroll_relative(y=max(self.size.height - 1, 1), animate=False)

    def action_scroll_top(self) -> None:
        self.scroll_to(y=0, animate=False)

    def action_scroll_bottom(self) -> None:
        self.scroll_to(y=self.max_scroll_y, animate=False)


class ProjectLabel(NamedTuple):
    """The bound project as the replay header shows it."""

    name: str
    workdir: str = ""
    missing: bool = False  # the folder is gone (moved or deleted)


class ReplayHeader(Static):
    """Three lines: `[← prev turn]  Turn 7 / 12  [next turn →]` with branch notes, the
    session title, then source · project and folder · time, separated so they never run on."""

    DEFAULT_CSS = """
    ReplayHeader {
        height: 3;
        padding: 0 1;
        background: $boost;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    PREV = "[← prev turn]"
    NEXT = "[next turn →]"
    GAP = "  "

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("", **kwargs)
        self._next_span = (0, 0)

    def show(
        self,
        number: int,
        total: int,
        title: str,
        details: Sequence[Sequence[tuple[str, str]]],
        notes: Sequence[tuple[str, str]] = (),
    ) -> None:
        """`details`: groups of (text, style) parts for the third line, joined with a dim " · "."""
        counter = f"Turn {number} / {total}" if total else "no turns"
        prev_style = "bold $accent" if number > 1 else "$text-disabled"
        next_style = "bold $accent" if number < total else "$text-disabled"
        parts: list[tuple[str, str] | str] = [
            (self.PREV, prev_style),
            self.GAP,
            (counter, "bold"),
            self.GAP,
            (self.NEXT, next_style),
        ]
        for text, style in notes:
            parts += [self.GAP + "  ", (text, style)]
        start = len(self.PREV) + 2 * len(self.GAP) + len(counter)
        self._next_span = (start, start + len(self.NEXT))
        third: list[tuple[str, str] | str] = []
        for group in details:
            if third:
                third.append((" · ", "$text-muted"))
            third.extend(group)
        lines = [Content.assemble(*parts), marked_content(title, "bold"), Content.assemble(*third)]
        self.update(Content("\n").join(lines))

    def on_click(self, event: events.Click) -> None:
        if event.y != 0:
            return
        x = event.x - 1  # left padding
        if 0 <= x < len(self.PREV):
            self.post_message(ReplayHeader.Step(-1))
        elif self._next_span[0] <= x < self._next_span[1]:
            self.post_message(ReplayHeader.Step(1))

    class Step(Message):
        def __init__(self, delta: int) -> None:
            super().__init__()
            self.delta = delta


class ReplayPane(Vertical):
    """Turn-by-turn replay of one session; owns the turn cursor and the display toggles."""

    # Turn stepping, branches, history and thinking are bound on the main screen, so they
    # also work while the session list has the focus.
    BINDINGS = [
        Binding("j", "next_message", "Next msg", id="replay.next_message"),
        Binding("k", "prev_message", "Prev msg", show=False, id="replay.prev_message"),
        Binding("enter", "toggle_item", "Expand", id="replay.toggle"),
        Binding("e", "expand_all", "Expand all", show=False, id="replay.expand_all"),
        Binding("y", "copy", "Copy", id="replay.copy"),
        Binding("J", "toggle_raw", "Diff/JSON", show=False, id="replay.raw_args"),
        Binding("v", "reveal", "Reveal secrets", show=False, id="replay.reveal"),
    ]

    DEFAULT_CSS = """
    ReplayPane { height: 1fr; }
    ReplayPane > TurnView { height: 1fr; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.meta: SessionMeta | None = None
        self.turns: list[Turn] = []  # the turns loaded so far: the last ones while a session fills in
        self.total = 0  # turns the branch has; turns[0] is turn number total - len(turns) + 1
        self.index = 0  # of the turn on screen, 0-based over all `total` turns
        self.head_id: str | None = None
        self.view_label = ""
        self.project: ProjectLabel | None = None
        self.cost: Usage | None = None
        self.expanded: set[str] = set()
        self.raw: set[str] = set()  # file edits shown as their JSON arguments
        self.show_thinking = False
        # Secrets come masked (opmem_tui/masking.py); `originals` holds, by node id, the messages
        # that had one, as written. `v` shows one of them (`revealed`) until the cursor moves on.
        self.originals: Mapping[str, Node] = {}
        self.revealed: str | None = None
        self._turn_render: TurnRender = TurnRender([])
        self._width = 0
        self._empty = "Select a session on the left to replay it."

    def compose(self) -> ComposeResult:
        yield ReplayHeader(id="replay-header")
        yield TurnView(id="turn-view")

    @property
    def view(self) -> TurnView:
        return self.query_one(TurnView)

    @property
    def header(self) -> ReplayHeader:
        return self.query_one(ReplayHeader)

    @property
    def turn(self) -> Turn | None:
        loaded = self.index - self.first_loaded
        return self.turns[loaded] if 0 <= loaded < len(self.turns) else None

    @property
    def first_loaded(self) -> int:
        """Index of the earliest loaded turn (0 once the whole session is in)."""
        return self.total - len(self.turns)

    @property
    def complete(self) -> bool:
        return len(self.turns) == self.total

    @property
    def session_id(self) -> str | None:
        return self.meta.id if self.meta else None

    @property
    def selected_node(self) -> Node | None:
        item = self.view.selected_item
        nodes = self._turn_render.nodes
        return nodes[item] if 0 <= item < len(nodes) else None

    def select_node(self, node_id: str) -> bool:
        """Put the cursor on a message of the turn shown (a search hit, a memory record's
        source); False when the turn has no such message."""
        nodes = self._turn_render.nodes
        index = next((i for i, node in enumerate(nodes) if node.id == node_id), -1)
        if index < 0:
            return False
        self.view.select_item(index)
        self.view.scroll_to_item(index)
        return True

    # -- data in ---------------------------------------------------------------------------
    def show_session(
        self,
        meta: SessionMeta,
        turns: Sequence[Turn],
        *,
        project: ProjectLabel | None = None,
        head_id: str | None = None,
        turn_number: int | None = None,
        view_label: str = "",
        total: int | None = None,
        originals: Mapping[str, Node] | None = None,
        cost: Usage | None = None,
    ) -> None:
        """Show a session; turn_number None keeps the turn when it is the same session.

        `total`: the branch's turn count when `turns` are only its last ones (the rest is on
        its way: the pane says so on a turn not loaded yet). `originals`: the messages that had
        a secret, as written (by node id), for `v`."""
        same = self.meta is not None and self.meta.id == meta.id
        previous = self.index if same else 0
        self.meta = meta
        self.turns = list(turns)
        self.total = max(total if total is not None else 0, len(self.turns))
        self.head_id = head_id
        self.view_label = view_label
        self.project = project
        self.cost = cost  # the session's tokens and cost, shown in the header
        self.originals = originals or {}
        if not same:
            self.expanded.clear()
            self.raw.clear()
        if not same or self.revealed not in self.originals:
            self.revealed = None
        target = turn_number - 1 if turn_number is not None else previous
        self.index = max(0, min(target, self.total - 1))
        self._show_turn(keep_scroll=same and turn_number is None)

    def show_empty(self, message: str) -> None:
        self.meta = None
        self.originals = {}
        self.revealed = None
        self.turns = []
        self.total = 0
        self.index = 0
        self._empty = message
        self._show_turn()

    # -- drawing ---------------------------------------------------------------------------
    def width_changed(self, width: int) -> None:
        if width and width != self._width:
            self._width = width
            self._rebuild(keep_scroll=True)

    def _rebuild(self, keep_scroll: bool = False) -> None:
        turn = self.turn
        view = self.view
        width = self._width or view.scrollable_content_region.width or 80
        if turn is None:
            self._turn_render = TurnRender([])
            loading = self.meta is not None and self.total > 0  # a turn of a session still filling in
            message = f"Loading turn {self.index + 1}…" if loading else self._empty
            view.set_lines([Line(text, "empty", -1, 1) for text in wrap_text(clean(message), width - 2)])
            return
        if self.revealed is not None and self.revealed in self.originals:
            original = self.originals[self.revealed]
            nodes = tuple(original if n.id == original.id else n for n in turn.nodes)
            turn = replace(turn, nodes=nodes)
        self._turn_render = build_turn_lines(
            turn, width, expanded=self.expanded, show_thinking=self.show_thinking, raw=self.raw
        )
        view.code_paths = self._turn_render.code_paths
        view.set_lines(self._turn_render.lines, keep_scroll=keep_scroll)

    def _show_turn(self, keep_scroll: bool = False) -> None:
        selected = self.view.selected_item if keep_scroll else 0
        self._rebuild(keep_scroll=keep_scroll)
        self._update_header()
        nodes = self._turn_render.nodes
        self.view.select_item(min(selected, len(nodes) - 1) if nodes else -1)
        self.cursor_moved()
        if self.meta is not None and self.turn is not None:
            self.post_message(TurnShown(self.meta.id, self.turn.number, self.total))

    def _update_header(self) -> None:
        meta = self.meta
        turn = self.turn
        header = self.header
        header.display = meta is not None
        if meta is None:
            return
        details: list[list[tuple[str, str]]] = [[(one_line(meta.source, 30) or "unknown source", "$secondary")]]
        if self.project:
            name, workdir, missing = self.project
            group = [(f"◆ {one_line(name, 40)}", "$accent")]
            if missing:
                group.append((f"  folder missing: {abbreviate_path(clean(workdir))}", "$warning"))
            elif workdir:
                group.append((f"  {abbreviate_path(clean(workdir))}", "$text-muted"))
            details.append(group)
        if self.cost is not None and self.cost.total:
            details.append([(f"{short_number(self.cost.total)} tokens {usage_cost(self.cost)}", "$success")])
        parent = meta.extra.get("parent_session") if meta.extra else None
        if isinstance(parent, str) and parent:
            details.append([(f"subagent of {one_line(parent, 60)}", "$text-muted")])
        if turn is not None and turn.user is not None and turn.user.created_at:
            stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(turn.user.created_at))
            details.append([(stamp, "$text-muted")])
        notes: list[tuple[str, str]] = []
        if turn is not None and turn.fork_heads:
            count = len(turn.fork_heads)
            notes.append((f"↳ {count} other branch{'es' if count != 1 else ''} (b)", "$warning"))
        if self.view_label:
            notes.append((self.view_label, "$warning"))
        # A branch with no user message yet (a system preface alone) is one turn numbered 0.
        preface_only = bool(self.turns) and self.turns[0].number == 0
        count = 0 if preface_only else self.total
        number = self.index + 1 if count else 0
        header.show(number, count, one_line(meta.display_title, 300), details, notes)

    # -- navigation ------------------------------------------------------------------------
    def go_to(self, index: int) -> None:
        if not self.total:
            return
        index = max(0, min(index, self.total - 1))
        if index != self.index:
            self.index = index
            self.revealed = None  # another turn: its messages masked again
            self._show_turn()

    def step(self, delta: int) -> None:
        self.go_to(self.index + delta)

    def select(self, item: int, scroll: bool = True) -> None:
        if not self._turn_render.nodes:
            return
        item = max(0, min(item, len(self._turn_render.nodes) - 1))
        self.view.select_item(item)
        if scroll:
            self.view.scroll_to_item(item)

    def on_replay_header_step(self, message: ReplayHeader.Step) -> None:
        message.stop()
        self.step(message.delta)

    def action_prev_turn(self) -> None:
        self.step(-1)

    def action_next_turn(self) -> None:
        self.step(1)

    def action_first_turn(self) -> None:
        self.go_to(0)

    def action_last_turn(self) -> None:
        self.go_to(self.total - 1)

    def action_next_message(self) -> None:
        self.select(self.view.selected_item + 1)

    def action_prev_message(self) -> None:
        self.select(self.view.selected_item - 1)

    def action_toggle_item(self) -> None:
        node = self.selected_node
        if node is None:
            return
        if node.is_tool or node.role == "system":
            self.expanded.symmetric_difference_update({node.id})
        elif thinking_text(node):
            self.show_thinking = not self.show_thinking
        else:
            return
        item = self.view.selected_item
        self._rebuild(keep_scroll=True)
        self.view.scroll_to_item(item)

    def action_expand_all(self) -> None:
        turn = self.turn
        if turn is None:
            return
        tools = {n.id for n in turn.nodes if n.is_tool or n.role == "system"}
        if tools <= self.expanded:
            self.expanded -= tools
        else:
            self.expanded |= tools
        self._rebuild(keep_scroll=True)

    def action_toggle_raw(self) -> None:
        """A file edit: its diff or its arguments as JSON."""
        node = self.selected_node
        if node is None or not node.is_tool or not tool_edits(node):
            return
        self.raw.symmetric_difference_update({node.id})
        self.expanded.add(node.id)
        item = self.view.selected_item
        self._rebuild(keep_scroll=True)
        self.view.scroll_to_item(item)

    def action_toggle_thinking(self) -> None:
        self.show_thinking = not self.show_thinking
        self._rebuild(keep_scroll=True)

    # -- secrets -----------------------------------------------------------------------------
    def cursor_moved(self) -> None:
        """The cursor is on another message (TurnView.select_item): a revealed one is masked again."""
        if self.revealed is None:
            return
        node = self.selected_node
        if node is None or node.id != self.revealed:
            self.revealed = None
            self._rebuild(keep_scroll=True)

    def action_reveal(self) -> None:
        """`v`: the values of the message under the cursor, until the cursor moves on (again: masked)."""
        node = self.selected_node
        if node is None:
            return
        if node.id not in self.originals:
            self.notify("No secret in this message: nothing is masked.", markup=False)
            return
        item = self.view.selected_item
        if self.revealed == node.id:
            self.revealed = None
            self.notify("Secrets masked again.", markup=False)
        else:
            self.revealed = node.id
            self.notify(
                f"Secrets shown for this {node.role} message, until the cursor moves on (v masks them).",
                title="Secrets",
                severity="warning",
                markup=False,
            )
        self._rebuild(keep_scroll=True)
        self.view.scroll_to_item(item)

    def action_copy(self) -> None:
        node = self.selected_node
        if node is None:
            return
        text = clean(node_text(node))  # never put escape sequences on the user's clipboard
        self.app.copy_to_clipboard(text)  # as shown: masked, unless `v` revealed it
        masked = node.id in self.originals and node.id != self.revealed
        note = ", secrets masked: v reveals them" if masked else ""
        self.notify(f"Copied the {node.role} message ({len(text)} chars{note})", markup=False)

    def action_pick_branch(self) -> None:
        turn = self.turn
        if self.meta is None or turn is None:
            return
        if not turn.fork_heads:
            self.notify("This turn has no other branch.", markup=False)
            return
        self.post_message(BranchPickRequested(self.meta.id, turn.number, tuple(turn.fork_heads)))

    def action_history(self) -> None:
        if self.meta is not None:
            self.post_message(HistoryRequested(self.meta.id))
