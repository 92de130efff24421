"""How the app runs backend calls: Textual thread workers, in exclusive groups per node.

A worker's result reaches the UI thread only if the worker was not cancelled meanwhile (a
newer load in the same group replaced it, or its node went away); a worker that fails
becomes an error notification, never a crash.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.worker import Worker, WorkerState, get_current_worker

if TYPE_CHECKING:
    from textual.dom import DOMNode

FOLLOW_GROUP = "follow-store"  # the worker that follows the store runs as long as the app
SEARCH_GROUP = "search"  # the search screen's one search thread runs as long as the screen


def deliver(node: DOMNode, callback: Callable[..., Any], *args: Any) -> bool:
    """From a thread worker: run `callback(*args)` on the UI thread, unless the worker was
    cancelled. True when it ran."""
    if get_current_worker().is_cancelled:
        return False
    node.app.call_from_thread(callback, *args)
    return True


def cancelled() -> bool:
    """Inside a thread worker: has it been cancelled? (Threads cannot be killed; they ask.)"""
    return get_current_worker().is_cancelled


class ReportsWorkerErrors:
    """Mixin for the nodes that run workers: a failed worker becomes an error notification
    saying what was being done (the worker's description)."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if event.state == WorkerState.ERROR and worker.error is not None:
            from .app import OpmemApp

            app = event.worker.node.app
            if isinstance(app, OpmemApp):
                app.report_error(worker.error, worker.description or worker.name or "Background task")
