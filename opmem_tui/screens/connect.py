""" "Connect an agent…": each agent's status (found, connected, what is registered where), and
enter to connect or disconnect the highlighted one (backend/agents/connect.py does the work)."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ..backend.agents.connect import AgentStatus, connect, disconnect, status
from ..backend.home import Home
from ..backend.model import OpmemError


def _line(agent: AgentStatus) -> str:
    mark = "●" if agent.connected else "○"
    state = "connected" if agent.connected else ("found" if agent.found else "not found")
    return f"{mark} {agent.label:<12} {state}"


def _detail(agent: AgentStatus) -> str:
    lines = [f"{agent.label}: {'connected' if agent.connected else 'not connected'}"]
    for part in agent.parts:
        mark = "✓" if part.present else "·"
        lines.append(f"  {mark} {part.what}: {part.path}" + (f" ({part.problem})" if part.problem else ""))
    lines += [f"  ✓ project block: {f}" for f in agent.in_repo]
    lines.append(f"  at session start: {agent.notes}")
    return "\n".join(lines)


class ConnectScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape", "dismiss_screen", "Close", show=False)]

    def __init__(self, home: Home, user_home: Path | None = None) -> None:
        super().__init__()
        self.home = home
        self.user_home = user_home if user_home is not None else Path.home()
        self.agents: list[AgentStatus] = []

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Static(Content("Connect an agent"), classes="dialog-title")
            yield OptionList(id="agents")
            yield Static(Content(""), id="agent-detail", classes="dialog-body")
            yield Static(Content("enter: connect / disconnect · esc: close"), classes="dialog-hint")

    def on_mount(self) -> None:
        self.reload()
        self.query_one("#agents", OptionList).focus()

    def reload(self) -> None:
        options = self.query_one("#agents", OptionList)
        keep = options.highlighted or 0
        try:
            self.agents = status(self.home, self.user_home)
        except OpmemError as exc:
            self.notify(str(exc), severity="error", markup=False)
            return
        options.clear_options()
        options.add_options([Option(Content(_line(a)), id=a.id) for a in self.agents])
        options.highlighted = min(keep, len(self.agents) - 1)
        self._show(options.highlighted)

    def _show(self, index: int | None) -> None:
        text = _detail(self.agents[index]) if index is not None and index < len(self.agents) else ""
        self.query_one("#agent-detail", Static).update(Content(text))

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._show(event.option_index)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        agent = self.agents[event.option_index]
        try:
            if agent.connected:
                change = disconnect(self.home, agent.id, self.user_home)
                verb = "disconnected"
            else:
                change = connect(self.home, agent.id, self.user_home)
                verb = "connected"
        except OpmemError as exc:
            self.notify(str(exc), title=f"{agent.label} not changed", severity="error", markup=False)
            return
        files = ", ".join(str(f.path) for f in change.files if f.action != "unchanged") or "nothing changed"
        self.notify(f"{agent.label} {verb}: {files}", markup=False)
        self.reload()

    def action_dismiss_screen(self) -> None:
        self.dismiss(None)
