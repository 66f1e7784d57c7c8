"""A child process that draws the report's heat maps while the report draws its other figures.

`submit()` forks it (where processes can fork, with two CPUs or more, and while this process
runs no other thread) once the judgments are scored and the figures are to be drawn: it starts
at once (matplotlib and the scores are already in the memory it shares with the parent, copied
only where written) and draws the heat maps while the parent draws the others
(`report_figures.draw_all`); where there is no child, the parent draws them all, the same
functions, so the same bytes.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

_pool: ProcessPoolExecutor | None = None


def cpus() -> int:
    """The CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        (os.cpu_count() or 1)


def can_fork() -> bool:
    """Whether a child may be forked here and now (safe: no other thread runs)."""
    return cpus() >= 2 and threading.active_count() == 1 \
        and "fork" in multiprocessing.get_all_start_methods()


def start() -> None:
    """Fork the child, if it can be and none is running."""
    global _pool
    if _pool is None and can_fork():
        _pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork"))


def submit(function: Callable[..., Any], *args: Any) -> Future[Any] | None:
    """`function(*args)` in the child, started now if it was not (None: no child here). The
    objects alive when it forks are frozen out of the garbage collector's reach meanwhile, so
    that the child's collections do not write to, and so copy, the pages it shares with this
    process."""
    if _pool is None and can_fork():
        gc.freeze()
        try:
            start()  # the child is forked on its first job, below
            future = _pool.submit(function, *args) if _pool is not None else None
        finally:
            gc.unfreeze()
        return future
    return _pool.submit(function, *args) if _pool is not None else None


def stop() -> None:
    """Wait for the child's work and let it go."""
    global _pool
    if _pool is not None:
        _pool.shutdown(wait=True)
        _pool = None
