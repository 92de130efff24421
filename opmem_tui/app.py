"""OpmemApp: the Textual application over one Home (state directory)."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

from opmem_tui.themes import DEFAULT_THEME, register_all

from .backend.model import OpmemError
from .commands import OpmemCommands
from .keymap import default_bindings, effective_bindings, load_overrides

# Importer sources the palette offers, with the label users know them by.
SOURCE_LABELS = {
    "claude": "Claude Code",
    "claude-code": "Claude Code",
    "codex": "Codex",
    "gemini": "Gemini CLI",
    "aider": "Aider",
    "openprogram": "OpenProgram",
    "jsonl": "JSONL",
}


_PREFETCH_POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="opmem-prefetch")


class OpmemApp(App[None]):
    """The opmem browser. `now` is the clock ages are measured against (tests pin it)."""

    CSS_PATH = "app.tcss"
    TITLE = "opmem"
    COMMANDS = {OpmemCommands}  # includes Textual's system commands, after ours
    BINDINGS = [
        Binding("q", "quit", "Quit", id="app.quit"),
        Binding("question_mark", "show_keys", "Keys", id="app.keys"),
    ]

    def __init__(
        self,
        home: Any,
        *,
        now: Callable[[], float] = time.time,
        poll_interval: float = 2.0,
    ) -> None:
        super().__init__()
        self.home = home
        self.now = now
        self.poll_interval = poll_interval
        self.keymap_overrides: dict[str, str] = {}
        self._theme_ready = False
        register_all(self)
        self.theme = self._configured_theme()
        self._prefetch: Future[Any] | None = None

    def prefetch_listing(self) -> None:
        """Start reading the session list now, while Textual builds the screen (first paint)."""
        from .data import load_listing

        self._prefetch = _PREFETCH_POOL.submit(load_listing, self.home)

    def take_prefetched_listing(self) -> Future[Any] | None:
        future, self._prefetch = self._prefetch, None
        return future

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

    def on_load(self) -> None:
        self.prefetch_listing()

    def on_mount(self) -> None:
        self._load_keymap()
        self._theme_ready = True
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
            self._save_theme(name)

    def _save_theme(self, name: str) -> None:
        def save() -> None:
            config = self.home.config
            try:
                current = config.ui.theme
            except OpmemError:
                current = None  # a broken [ui] section: writing a valid theme mends it
            if current != name:
                config.set("ui.theme", name)
                config.save()

        self.run_worker(save, thread=True, group="config", exit_on_error=False, description="Saving the theme")

    # -- actions ---------------------------------------------------------------------------
    def action_show_keys(self) -> None:
        from .screens.keys import KeysScreen

        path = str(self.home.config.path)
        self.push_screen(KeysScreen(effective_bindings(self.keymap_overrides), path))

    # -- importers -------------------------------------------------------------------------
    def import_sources(self) -> list[tuple[str, str]]:
        """(source, label) for every importer this build has."""
        try:
            from opmem_tui.backend import importers
        except ImportError:
            return []
        sources = getattr(importers, "SOURCES", None)
        if sources is None:
            return []
        return [(source, SOURCE_LABELS.get(source, source)) for source in sources]

    def import_needs_path(self, source: str) -> bool:
        """True for a source with no default folder (e.g. the generic JSONL one)."""
        try:
            from opmem_tui.backend.importers import get_importer

            return not get_importer(source).default_paths()
        except Exception:
            return False

    def run_import(
        self,
        source: str,
        paths: list[Any] | None = None,
        *,
        progress: Callable[..., None],
        cancel: Callable[[], bool],
    ) -> Any:
        """Run one importer over `paths` (None: the agent's default folder); from a worker thread."""
        from opmem_tui.backend.importers import run_import

        return run_import(self.home, source, paths, progress=progress, cancel=cancel)
