"""Activity: sessions, turns, tokens or cost per day as a calendar heatmap (weeks across, weekdays
down) and a sparkline per project and per agent source. The counts come from the backend
(backend/activity.py) through the app; this widget only draws. Names are untrusted: plain text.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Static

from opmem_tui.backend.activity import METRICS, Activity, ActivitySeries

from .cost_text import money, short_number
from .safe_text import one_line
from .styling import theme_style

WEEKS = 26  # columns of the heatmap: half a year
SPARK_DAYS = 56  # days of each sparkline: eight weeks
SHADES = " ░▒▓█"  # nothing, then four levels up to the busiest day shown
BARS = "▁▂▃▄▅▆▇█"
WEEKDAYS = ("Mon", "", "Wed", "", "Fri", "", "Sun")
LABEL = 22  # cells for a project or source name


def level(value: int, top: int, levels: int) -> int:
    """0 for nothing, else 1..levels-1 by the share of the busiest value (ceil: a little shows)."""
    if value <= 0 or top <= 0:
        return 0
    return max(1, min(levels - 1, -(-value * (levels - 1) // top)))


def sparkline(values: Sequence[int]) -> str:
    top = max(values, default=0)
    if top <= 0:
        return BARS[0] * len(values)
    return "".join(BARS[min(len(BARS) - 1, v * (len(BARS) - 1) // top)] if v > 0 else " " for v in values)


def plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def heatmap(series: ActivitySeries, metric: str, last: date, weeks: int, hot: Style, muted: Style) -> Text:
    """Seven rows (Mon..Sun), one column per week ending with `last`'s week; month names above."""
    end = last + timedelta(days=6 - last.weekday())  # the Sunday of the last week
    start = end - timedelta(days=7 * weeks - 1)  # a Monday
    values = series.values(metric, start, end)
    top = max(values, default=0)
    text = Text(" " * 5, style=muted)
    month = ""
    heading = []
    for week in range(weeks):
        monday = start + timedelta(days=7 * week)
        name = monday.strftime("%b")
        heading.append(name[:2] if name != month else "  ")
        month = name
    text.append("".join(h if h.strip() else "  " for h in heading)[: weeks * 2], style=muted)
    for weekday in range(7):
        text.append("\n")
        text.append(f"{WEEKDAYS[weekday]:<4} ", style=muted)
        for week in range(weeks):
            day = start + timedelta(days=7 * week + weekday)
            if day > last:
                text.append("  ")
                continue
            shade = SHADES[level(values[7 * week + weekday], top, len(SHADES))]
            text.append((shade if shade != " " else "·") * 2, style=hot if shade != " " else muted)
    return text


def series_rows(title: str, rows: Sequence[ActivitySeries], metric: str, last: date, hot: Style, muted: Style) -> Text:
    text = Text(title, style="bold")
    first = last - timedelta(days=SPARK_DAYS - 1)
    if not rows:
        text.append("\n  none", style=muted)
    for series in rows:
        values = series.values(metric, first, last)
        text.append("\n  ")
        text.append(f"{one_line(series.label, LABEL):<{LABEL}} ")
        text.append(sparkline(values), style=hot)
        total = series.total
        counts = f"{plural(total.sessions, 'session')} · {plural(total.turns, 'turn')} · " if total.sessions else ""
        if total.tokens:
            cost = money(total.cost, not total.unpriced, unknown=total.unpriced >= total.tokens)
            spent = f"{short_number(total.tokens)} tokens · {cost}"
        else:
            spent = "no tokens recorded"  # the agent writes none: nothing to price (not $0)
        text.append(f"  {counts}{spent}", style=muted)
    return text


class ActivityView(Vertical):
    BINDINGS = [Binding("m", "cycle_metric", "Sessions/turns/tokens/cost", id="activity.metric")]

    DEFAULT_CSS = """
    ActivityView { height: 1fr; }
    ActivityView > #activity-header { height: 1; background: $boost; padding: 0 1; }
    ActivityView #activity-heatmap { height: auto; padding: 1 1 0 1; }
    ActivityView #activity-series { height: auto; padding: 1 1 0 1; }
    ActivityView #activity-empty { padding: 1; color: $text-muted; }
    """

    can_focus = True

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.metric = "turns"
        self.activity: Activity | None = None
        self.today: date | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="activity-header")
        with VerticalScroll(id="activity-body"):
            yield Static(id="activity-heatmap")
            yield Static(id="activity-series")
            yield Static(id="activity-empty")

    def on_mount(self) -> None:
        self.watch(self.app, "theme", lambda _theme: self._draw(), init=False)  # colours follow the theme

    def show(self, activity: Activity, today: date) -> None:
        self.activity, self.today = activity, today
        self._draw()

    def progress(self, done: int, total: int) -> None:
        """The usage index is being built: say how far (the counts follow when it is done)."""
        if total > 1:
            self.query_one("#activity-header", Static).update(
                Content(f"Building the usage index: {done:,} of {total:,} sessions read")
            )

    def action_cycle_metric(self) -> None:
        self.metric = METRICS[(METRICS.index(self.metric) + 1) % len(METRICS)]
        self._draw()

    def _draw(self) -> None:
        activity, today = self.activity, self.today
        if activity is None or today is None:
            return
        empty = self.query_one("#activity-empty", Static)
        heat = self.query_one("#activity-heatmap", Static)
        rows = self.query_one("#activity-series", Static)
        if activity.empty:
            self.query_one("#activity-header", Static).update(Content("Activity"))
            empty.update(Content("No sessions yet: import some (ctrl+p → Import) and their days show here."))
            empty.display, heat.display, rows.display = True, False, False
            return
        empty.display, heat.display, rows.display = False, True, True
        hot, muted = theme_style(self, "success"), theme_style(self, "text-muted")
        total = activity.total.total
        usage = activity.usage
        if usage.total:
            cost = money(usage.cost or 0.0, usage.cost_complete, unknown=usage.cost is None)
            spent = f"{short_number(total.tokens)} tokens, {cost} · {usage.cache_share:.0%} of input from cache"
        else:
            spent = "no tokens recorded"
        self.query_one("#activity-header", Static).update(
            Content(
                f"{self.metric} per day · {plural(total.sessions, 'session')}, {plural(total.turns, 'turn')}, "
                f"{spent} · m: sessions / turns / tokens / cost"
            )
        )
        heat.update(heatmap(activity.total, self.metric, today, WEEKS, hot, muted))
        text = series_rows(f"By project · last {SPARK_DAYS} days", activity.by_project, self.metric, today, hot, muted)
        text.append("\n\n")
        text.append(series_rows("By agent", activity.by_source, self.metric, today, hot, muted))
        text.append("\n\n")
        model_metric = self.metric if self.metric in ("tokens", "cost") else "cost"  # a model has no sessions
        text.append(series_rows("By model", activity.by_model, model_metric, today, hot, muted))
        if activity.unpriced_models:
            names = ", ".join(one_line(m, LABEL) for m in activity.unpriced_models)
            text.append(f"\n  +: no price known for {names}; their tokens count, their cost does not", style=muted)
        rows.update(text)
