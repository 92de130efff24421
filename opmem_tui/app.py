"""OpmemApp: the Textual application over one Home (state directory)."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

from opmem_tui.themes import DEFAULT_THEME, register_all

from .backend.home import Home
from .backend.model import OpmemError
from .commands import OpmemCommands
from .data import StoreData
from .gc_tuning import quiet_gc
from .keymap import default_bindings, effective_bindings, load_overrides
from .workers import ReportsWorkerErrors


def home_relative(text: str) -> str:
    """The user's home folder as ~ in a message."""
    home = str(Path.home())
    return text.replace(home + "/", "~/") if home not in ("", "/") else text


class OpmemApp(ReportsWorkerErrors, App[None]):
    """The opmem browser. `now` is the clock ages are measured against (tests pin it).

    The session list follows the store by itself: `watch` (file-change notifications) or,
    where those cannot run, a poll every `poll_interval` seconds (0: never). Every `idle_distil`
    seconds (0: never) the store's Distiller distils the sessions idle long enough."""

    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute: subclasses elsewhere find it too
    TITLE = "opmem"
    COMMANDS = {OpmemCommands}  # includes Textual's system commands, after ours
    BINDINGS = [
        Binding("q", "quit", "Quit", id="app.quit"),
        Binding("question_mark", "show_keys", "Keys", id="app.keys"),
    ]

    def __init__(
        self,
        home: Home,
        *,
        now: Callable[[], float] = time.time,
        watch: bool = True,
        poll_interval: float = 2.0,
        idle_distil: float = 30.0,
        offer_import: bool = True,
        start_tab: str = "sessions",
    ) -> None:
        super().__init__()
        self.home = home
        self.data = StoreData(home)
        self.now = now
        self.watch_store = watch
        self.poll_interval = poll_interval
        self.idle_distil = idle_distil  # seconds between asks to distil idle sessions (0: never)
        self.offer_import = offer_import  # on an empty store, offer to import the agents' sessions found
        self.start_tab = start_tab  # the demo opens on the memory (a project's brief)
        self.keymap_overrides: dict[str, str] = {}
        self._theme_ready = False
        register_all(self)
        self.theme = self._configured_theme()

    def run(self, *args: Any, **kwargs: Any) -> None:
        quiet_gc()  # the terminal app only: tests run many apps in one process
        return super().run(*args, **kwargs)

    # -- setup -----------------------------------------------------------------------------
    def _configured_theme(self) -> str:
        try:
            name = self.home.config.ui.theme
        except OpmemError:
            return DEFAULT_THEME
        if name not in self.available_themes:
            return DEFAULT_THEME
        return name

    def get_default_screen(self) -> Screen:
        from .screens.main import MainScreen

        return MainScreen()

    def on_mount(self) -> None:
        for problem in self.home.config.problems():  # what could not be read keeps its default
            self.notify(problem, title="config.toml", severity="warning", markup=False, timeout=30)
        self._load_keymap()
        self._theme_ready = True
        self.data.start_mirrors(self._mirror_problems)  # what an interrupted import left: in the background
        try:
            name = self.home.config.ui.theme
        except OpmemError as exc:
            self.notify(str(exc), title="config.toml", severity="error", markup=False)
            return
        if name and name not in self.available_themes:
            self.notify(
                f"Unknown theme {name!r} in config.toml [ui] theme; using {DEFAULT_THEME}.",
                severity="warning",
                markup=False,
            )

    def _mirror_problems(self, problems: list[str]) -> None:
        """From the git-mirror thread: what it could not do (the node files stay whole; the next
        start writes a mirror that failed), said once a run."""
        try:
            self.call_from_thread(self._say_mirror_problems, problems)
        except RuntimeError:  # the app has stopped meanwhile
            pass

    def _say_mirror_problems(self, problems: list[str]) -> None:
        shown = [self.in_store(problem) for problem in problems[:3]]
        if len(problems) > 3:
            shown.append(f"… and {len(problems) - 3} more")
        self.notify("\n".join(shown), title="git mirror", severity="warning", markup=False, timeout=15)

    def on_unmount(self) -> None:
        self.data.stop_mirrors()  # after the session under way; the rest is written at the next start

    def _load_keymap(self) -> None:
        try:
            raw = self.home.config.keys
        except OpmemError as exc:
            self.notify(str(exc), title="config.toml", severity="error", markup=False)
            return
        overrides, problems = load_overrides(raw, default_bindings())
        self.keymap_overrides = overrides
        if overrides:
            self.set_keymap(overrides)
        for problem in problems:
            self.notify(problem, title="config.toml", severity="warning", markup=False)

    def watch_theme(self, name: str) -> None:
        if self._theme_ready:
            self.run_worker(
                partial(self.data.save_theme, name),
                thread=True,
                group="config",
                exclusive=True,
                exit_on_error=False,
                description="Saving the theme",
            )

    # -- errors ----------------------------------------------------------------------------
    def in_store(self, text: str) -> str:
        """Paths in a message relative to the store (`sessions/<id>/...`), home as ~."""
        root = str(self.home.sessions_dir) + "/"
        return home_relative(text.replace(root, "sessions/"))

    def report_error(self, error: BaseException, doing: str) -> None:
        """An error notification: what was being done, and the error (paths shortened)."""
        self.notify(f"{doing}: {self.in_store(str(error))}", title="opmem", severity="error", markup=False, timeout=8)

    # -- actions ---------------------------------------------------------------------------
    def action_show_keys(self) -> None:
        from .screens.keys import KeysScreen

        self.push_screen(KeysScreen(effective_bindings(self.keymap_overrides), str(self.data.config_path)))
