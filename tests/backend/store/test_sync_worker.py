"""SyncWorker.when_durable: a backlog's sessions go to their git mirror only once the syncs of
their file succeeded; a failed sync keeps them back (the import's last sweep writes them)."""

from __future__ import annotations

import threading

from opmem_tui.backend.store.node_log import SyncWorker


def test_when_durable_runs_after_the_files_syncs_and_not_after_a_failed_one() -> None:
    syncs = SyncWorker()
    order: list[str] = []
    gate = threading.Event()

    def slow_sync() -> None:
        gate.wait(10)
        order.append("sync a")

    def failing_sync() -> None:
        order.append("sync b")
        raise OSError(5, "Input/output error")

    failed: list[OSError] = []
    syncs.submit(slow_sync)
    syncs.then(lambda: order.append("recorded a"), failed.append)
    syncs.when_durable(lambda: order.append("mirror a"))
    syncs.submit(failing_sync)
    syncs.then(lambda: order.append("recorded b"), failed.append)
    syncs.when_durable(lambda: order.append("mirror b"))
    assert order == []  # nothing before its file's sync is done
    gate.set()
    syncs.close()
    assert order == ["sync a", "mirror a", "sync b", "recorded a"]
    assert [exc.errno for exc in failed] == [5]
