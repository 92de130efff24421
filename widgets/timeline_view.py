"""The memory's timeline: events by month, newest first, filtered by kind and entity;
`enter` opens the turn an event came from. Older events load as the cursor nears the end."""

from __future__ import annotations

import time
from collections.abc import Sequence

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Input, Select, Static

from opmem_tui.backend.memory.records import EVENT_KINDS, Event

from .item_lines import ItemLines
from .line_view import Line, wrap_text
from .safe_text import clean, one_line

KIND_WIDTH = max(len(k) for k in EVENT_KINDS)
LOAD_AHEAD = 20  # events from the end at which the next page is asked for


def month_label(ts: float) -> str:
    return time.strftime("%B %Y", time.localtime(ts))


def timeline_lines(events: Sequence[Event], width: int, more: bool) -> list[Line]:
    """Month headers (with their counts so far) and one item per event."""
    lines: list[Line] = []
    counts: dict[str, int] = {}
    for event in events:
        month = month_label(event.event_time)
        counts[month] = counts.get(month, 0) + 1
    current = ""
    for item, event in enumerate(events):
        month = month_label(event.event_time)
        if month != current:
            current = month
            if lines:
                lines.append(Line("", "blank", -1))
            count = counts[month]
            lines.append(Line(f"{month} · {count} event{'s' if count != 1 else ''}", "month", -1))
        stamp = time.strftime("%d %a %H:%M", time.localtime(event.event_time))
        lead = f"{stamp}  {event.kind:<{KIND_WIDTH}}  "
        body = wrap_text(" ".join(clean(event.summary).split()), max(width - len(lead) - 1, 16))
        for index, part in enumerate(body or [""]):
            style = f"kind-{event.kind}" if index == 0 else "event"
            lines.append(Line((lead if index == 0 else " " * len(lead)) + part, style, item, 1))
    if more:
        lines.append(Line("… older events load as you scroll", "dim", -1, 1))
    return lines


class TimelineLines(ItemLines):
    COMPONENT_CLASSES = ItemLines.COMPONENT_CLASSES | {
        "line--month",
        "line--event",
        "line--dim",
        "line--empty",
        *(f"line--kind-{kind}" for kind in EVENT_KINDS),
    }

    DEFAULT_CSS = """
    TimelineLines {
        height: 1fr;
        & > .line--month { color: $accent; text-style: bold; }
        & > .line--event { color: $foreground; }
        & > .line--kind-work { color: $foreground; }
        & > .line--kind-decision { color: $warning; }
        & > .line--kind-learning { color: $success; }
        & > .line--kind-event { color: $secondary; }
        & > .line--dim { color: $text-muted; }
        & > .line--empty { color: $text-muted; }
    }
    """


class TimelineView(Vertical):
    BINDINGS = [
        Binding("slash,f", "focus_filter", "Filter", id="timeline.filter"),
        Binding("escape", "leave_filter", "Back to the timeline", show=False, id="timeline.leave_filter"),
    ]

    DEFAULT_CSS = """
    TimelineView { height: 1fr; }
    TimelineView > #timeline-filters { height: 1; background: $boost; }
    TimelineView #timeline-kind { width: 22; }
    TimelineView #timeline-entity { width: 1fr; }
    TimelineView > #timeline-status {
        height: 1; color: $text-muted; background: $boost; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis;
    }
    """

    class FilterChanged(Message):
        def __init__(self, kinds: tuple[str, ...], entity: str) -> None:
            super().__init__()
            self.kinds = kinds
            self.entity = entity

    class MoreWanted(Message):
        def __init__(self, until: float, skip: frozenset[str]) -> None:
            super().__init__()
            self.until = until
            self.skip = skip

    class EventChosen(Message):
        def __init__(self, event: Event) -> None:
            super().__init__()
            self.event = event

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.events: list[Event] = []
        self.more = False
        self._asked = False  # a page is on its way

    def compose(self) -> ComposeResult:
        with Horizontal(id="timeline-filters"):
            kinds = [(kind, kind) for kind in EVENT_KINDS]
            yield Select(kinds, prompt="All kinds", compact=True, id="timeline-kind")
            yield Input(placeholder="Entity (name or alias), enter applies…", compact=True, id="timeline-entity")
        yield TimelineLines(id="timeline-lines")
        yield Static("", id="timeline-status", markup=False)

    @property
    def lines(self) -> TimelineLines:
        return self.query_one(TimelineLines)

    @property
    def kinds(self) -> tuple[str, ...]:
        value = self.query_one("#timeline-kind", Select).value
        return (str(value),) if isinstance(value, str) else ()

    @property
    def entity(self) -> str:
        return self.query_one("#timeline-entity", Input).value.strip()

    def action_focus_filter(self) -> None:
        self.screen.set_focus(self.query_one("#timeline-entity", Input))  # now: the keys typed next are text

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "leave_filter":  # else escape goes on to the screen
            return self.query_one("#timeline-entity", Input).has_focus
        return True

    def action_leave_filter(self) -> None:
        self.lines.focus()

    @on(Select.Changed, "#timeline-kind")
    def _kind_changed(self, event: Select.Changed) -> None:
        event.stop()
        self.post_message(TimelineView.FilterChanged(self.kinds, self.entity))

    @on(Input.Submitted, "#timeline-entity")
    def _entity_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(TimelineView.FilterChanged(self.kinds, self.entity))
        self.lines.focus()

    def show_events(self, events: Sequence[Event], more: bool, *, append: bool = False, label: str = "") -> None:
        self._asked = False
        self.events = [*self.events, *events] if append else list(events)
        self.more = more
        view = self.lines
        width = view.scrollable_content_region.width or 80
        keep = view.selected_item if append else -1
        view.set_lines(timeline_lines(self.events, width, more), keep_scroll=append)
        if keep >= 0:
            view.move_to(keep, announce=False)
        if not self.events:
            what = f" for {label}" if label else ""
            self.show_message(f"No events{what}.")
            return
        count = len(self.events)
        status = [f"{count} event{'s' if count != 1 else ''}{' for ' + label if label else ''}"]
        if more:
            status.append("older ones load as you scroll")
        status.append("enter opens the turn")
        self.query_one("#timeline-status", Static).update(Content(" · ".join(status)))

    def on_resize(self) -> None:
        if self.events:
            width = self.lines.scrollable_content_region.width or 80
            keep = self.lines.selected_item
            self.lines.set_lines(timeline_lines(self.events, width, self.more), keep_scroll=True)
            self.lines.move_to(keep, announce=False)

    def show_message(self, message: str) -> None:
        width = self.lines.scrollable_content_region.width or 80
        self.lines.set_lines([Line(text, "empty", -1, 1) for text in wrap_text(message, max(width - 2, 10))])
        self.query_one("#timeline-status", Static).update(Content(""))

    def show_empty(self, message: str) -> None:
        self.events = []
        self.more = False
        self.show_message(message)

    def on_item_lines_highlighted(self, message: ItemLines.Highlighted) -> None:
        message.stop()
        if 0 <= message.item < len(self.events):
            prov = self.events[message.item].provenance
            where = f"session {one_line(prov.session_id, 50)}" if prov.session_id else "a project commit"
            turn = f", turn {prov.turn}" if prov.turn else ""
            self.query_one("#timeline-status", Static).update(
                Content(f"{len(self.events)} events loaded · {where}{turn} · enter opens it")
            )
        if self.more and not self._asked and message.item >= len(self.events) - LOAD_AHEAD and self.events:
            self._asked = True
            oldest = self.events[-1].event_time
            skip = frozenset(e.id for e in self.events if e.event_time == oldest)
            self.post_message(TimelineView.MoreWanted(oldest, skip))

    def on_item_lines_chosen(self, message: ItemLines.Chosen) -> None:
        message.stop()
        if 0 <= message.item < len(self.events):
            self.post_message(TimelineView.EventChosen(self.events[message.item]))
