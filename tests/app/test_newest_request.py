"""The hand-off between the search screen and its search thread keeps only the newest request."""

from __future__ import annotations

import threading

from opmem_tui.newest_request import NewestRequest, SearchRequest


def test_a_request_replaced_before_it_is_taken_is_never_taken():
    slot = NewestRequest()
    slot.put(SearchRequest("r", 20))
    slot.put(SearchRequest("re", 20))
    slot.put(SearchRequest("reg", 20))
    assert slot.take(timeout=0) == SearchRequest("reg", 20)
    assert slot.take(timeout=0) is None
    assert slot.is_newest(SearchRequest("reg", 60)) and not slot.is_newest(SearchRequest("re", 20))
    slot.forget()
    assert slot.take(timeout=0) is None and not slot.is_newest(SearchRequest("reg", 20))


def test_a_waiting_thread_wakes_for_a_request_and_on_close():
    slot = NewestRequest()
    taken: list[SearchRequest | None] = []
    waiting = threading.Event()
    first = threading.Event()

    def worker() -> None:
        waiting.set()
        taken.append(slot.take(timeout=60))
        first.set()
        taken.append(slot.take(timeout=60))  # until close

    thread = threading.Thread(target=worker)
    thread.start()
    waiting.wait(60)
    slot.put(SearchRequest("needle", 20))
    assert first.wait(60)
    slot.close()
    thread.join(60)
    assert not thread.is_alive()
    assert taken == [SearchRequest("needle", 20), None] and slot.closed


def test_the_newest_request_is_awaited_until_its_own_answer():
    slot = NewestRequest()
    assert slot.awaited is None
    slot.put(SearchRequest("needle", 20))
    slot.put(SearchRequest("needles", 20))
    assert slot.awaited == SearchRequest("needles", 20)
    assert not slot.answered(SearchRequest("needle", 20))  # an older answer: still awaited
    assert not slot.answered(SearchRequest("needles", 60))
    assert slot.awaited == SearchRequest("needles", 20)
    assert slot.answered(SearchRequest("needles", 20))
    assert slot.awaited is None and slot.query == "needles"  # still the newest query typed
    slot.put(SearchRequest("x", 20))
    slot.forget()
    assert slot.awaited is None
