"""The Sessions tab's edits of the session under the cursor: rename, make private or public,
delete, export; and their palette commands (a part of SessionsTab, sessions.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual import work

from opmem_tui.backend.model import OpmemError
from opmem_tui.backend.privacy.exclusions import is_private
from opmem_tui.widgets.safe_text import one_line
from opmem_tui.widgets.session_list import SessionList

from ..commands import PaletteCommand
from ..data import StoreData
from ..screens.ask_text import AskTextScreen
from ..screens.confirm import ConfirmScreen
from ..screens.rename import RenameScreen
from ..workers import deliver

if TYPE_CHECKING:
    from ..app import OpmemApp


class SessionEdits:
    """A part of SessionsTab: what the palette and the keys do to the session under the cursor."""

    if TYPE_CHECKING:  # SessionsTab's (sessions.py)
        app: OpmemApp
        data: StoreData
        session_list: SessionList
        _deleting: set[str]

        def refresh_listing(self, rescan: bool = False) -> None: ...

    # -- rename, delete --------------------------------------------------------------------
    def palette_commands(self) -> list[PaletteCommand]:
        current = self.session_list.current
        if current is None:
            return []
        title = one_line(current.display_title, 40)
        if is_private(current):
            privacy = PaletteCommand(
                "Make this session public again",
                f"Let the memory distil and index “{title}” again",
                lambda: self.set_private_current(False),
            )
        else:
            privacy = PaletteCommand(
                "Make this session private",
                f"Keep “{title}” out of the memory, search and recall (it stays here)",
                lambda: self.set_private_current(True),
            )
        return [
            PaletteCommand("Rename session…", f"Give “{title}” a new title", self.rename_current),
            privacy,
            PaletteCommand("Delete session…", f"Delete “{title}” and its git history", self.delete_current),
            PaletteCommand(
                "Export this session…", f"“{title}” as one HTML file to share (or .md, .json)", self.export_current
            ),
        ]

    def export_current(self) -> None:
        """Ask where, then write the session there (redacted; HTML unless the name ends .md or .json)."""
        meta = self.session_list.current
        if meta is None:
            return

        def done(raw: str | None) -> None:
            if raw:
                self._export(meta.id, Path(raw).expanduser())

        default = str(Path.cwd() / f"{meta.id}.html")
        self.app.push_screen(
            AskTextScreen(
                f"Export “{one_line(meta.display_title, 50)}”",
                default,
                hint="enter writes it · .html: an offline replay · .md: a transcript · .json: the nodes · esc cancels",
            ),
            done,
        )

    @work(thread=True, group="edits", exit_on_error=False, description="Exporting the session")
    def _export(self, session_id: str, path: Path) -> None:
        try:
            written = self.data.export_session(session_id, path)
        except (OpmemError, OSError) as exc:  # OSError: a folder it may not write in, a name too long
            reason = f"{path}: {exc.strerror}" if isinstance(exc, OSError) and exc.strerror else str(exc)
            self.app.notify(f"Export failed: {reason}", severity="error", markup=False)
            return
        self.app.notify(f"Exported to {written} (secrets redacted)", markup=False)

    def set_private_current(self, private: bool) -> None:
        meta = self.session_list.current
        if meta is not None:
            self._set_private(meta.id, private)

    @work(thread=True, group="edits", exit_on_error=False, description="Changing the session's privacy")
    def _set_private(self, session_id: str, private: bool) -> None:
        change = self.data.set_private(session_id, private)
        if private:
            text = "Private: kept out of the memory, search and recall; what it gave is withdrawn."
        elif change.reason:
            text = f"Public again, but still kept out: {change.reason}"
        else:
            text = "Public again: the next distillation takes it from its first turn."
        self.app.notify(text, title="Session", markup=False)
        deliver(self, self.refresh_listing)

    def rename_current(self) -> None:
        meta = self.session_list.current
        if meta is None:
            return

        def done(title: str | None) -> None:
            if title:
                self._rename(meta.id, title)

        self.app.push_screen(RenameScreen(meta.display_title), done)

    @work(thread=True, group="edits", exit_on_error=False, description="Renaming the session")
    def _rename(self, session_id: str, title: str) -> None:
        self.data.rename(session_id, title)
        self.app.notify(f"Renamed to “{one_line(title, 60)}”", markup=False)
        deliver(self, self.refresh_listing)

    def delete_current(self) -> None:
        meta = self.session_list.current
        if meta is None:
            return
        question = (
            f"Delete the session “{one_line(meta.display_title, 60)}” ({meta.id})?\n"
            "Its folder and git history are removed; this cannot be undone."
        )

        def done(yes: bool | None) -> None:
            if yes:
                self._deleting.add(meta.id)
                self._delete(meta.id)

        self.app.push_screen(ConfirmScreen(question), done)

    @work(thread=True, group="edits", exit_on_error=False, description="Deleting the session")
    def _delete(self, session_id: str) -> None:
        try:
            self.data.delete(session_id)
        except Exception:
            self._deleting.discard(session_id)
            raise
        self.app.notify(f"Deleted session {session_id}", markup=False)
        deliver(self, self.refresh_listing)
