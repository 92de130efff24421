"""Run an `opmem` command and send it SIGTERM from inside, at a chosen point of its own code.

`python signal_at.py FILE_SUFFIX FUNCTION NTH [THREADS] -- opmem-args...`: when the NTH call to
FUNCTION (defined in a file whose path ends with FILE_SUFFIX) starts, the process sends itself
SIGTERM, once. The code runs unchanged; only the moment of the signal is chosen (the main
thread, or every thread when THREADS is "all"). Python runs the handler at the next bytecode of
the main thread: inside that call, whatever it is (an import step, a finalizer).
"""

from __future__ import annotations

import os
import signal
import sys
import threading


def arm(suffix: str, function: str, nth: int, all_threads: bool) -> None:
    calls = 0
    fired = threading.Event()

    def profile(frame: object, event: str, arg: object) -> None:
        nonlocal calls
        if event != "call" or fired.is_set():
            return
        code = frame.f_code  # type: ignore[attr-defined]
        if code.co_name == function and code.co_filename.endswith(suffix):
            calls += 1
            if calls == nth:
                fired.set()
                print(f"signal_at: SIGTERM at call {nth} of {function}", file=sys.stderr, flush=True)
                os.kill(os.getpid(), signal.SIGTERM)

    sys.setprofile(profile)
    if all_threads:
        threading.setprofile(profile)


if __name__ == "__main__":
    split = sys.argv.index("--")
    suffix, function, nth, *threads = sys.argv[1:split]
    arm(suffix, function, int(nth), threads == ["all"])
    from opmem_tui.cli import main

    sys.argv = ["opmem", *sys.argv[split + 1 :]]
    main()
