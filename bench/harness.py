"""Shared bench helpers: time a callable, print a figure beside its baseline and the ratio."""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent
OUT = ROOT / "out"


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true", help="smaller sizes for a fast check")
    return p


def best_of(fn: Callable[[], object], repeat: int = 5) -> float:
    """Best wall time of `repeat` runs, in seconds (the least disturbed run)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def median_of(fn: Callable[[], object], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def fmt(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.0f} µs"


def report(
    name: str, ours: float, baseline: float, baseline_name: str, target: str, ok: bool, unit: str = "time"
) -> None:
    """One line per figure: ours, the baseline, ours/baseline, and the target verdict."""
    ratio = ours / baseline if baseline else float("inf")
    shown = f"{ratio:.2f}" if ratio >= 0.01 or ratio == 0 else f"{ratio:.1e}"  # 0.00 would hide small ones
    if unit == "time":
        line = f"{name}: {fmt(ours)}  vs {baseline_name}: {fmt(baseline)}  ratio {shown}"
    else:
        line = f"{name}: {ours:,.0f} {unit}  vs {baseline_name}: {baseline:,.0f} {unit}  ratio {shown}"
    print(f"{line}  target {target}: {'MET' if ok else 'MISSED'}")
    sys.stdout.flush()


def cpu_now() -> float:
    """CPU seconds used so far by this process and its waited-for children (git, subprocesses):
    on a loaded machine wall time is mostly waiting, CPU time is the work."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def median_wall_cpu(fn: Callable[[], object], repeat: int = 5) -> tuple[float, float]:
    """Median wall time and median CPU time (cpu_now) of `repeat` runs, in seconds."""
    walls, cpus = [], []
    for _ in range(repeat):
        start, cpu = time.perf_counter(), cpu_now()
        fn()
        walls.append(time.perf_counter() - start)
        cpus.append(cpu_now() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def report_cpu(name: str, ours: float, baseline: float, baseline_name: str) -> None:
    """The CPU-time line that goes with a `report` line."""
    ratio = ours / baseline if baseline else float("inf")
    print(f"  CPU, {name}: {fmt(ours)}  vs {baseline_name}: {fmt(baseline)}  ratio {ratio:.2f}")
    sys.stdout.flush()
