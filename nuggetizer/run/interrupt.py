"""Ctrl-C during an LLM step: stop sending, keep the answers already on their way.

The first SIGINT stops new calls (Assessor.stop_new_calls) and waits for the calls in flight,
up to $NUGGETIZER_INTERRUPT_WAIT seconds (default 10): each answer that arrives is stored in
the cache and its unit journalled as usual, so a resumed command pays for none of them twice;
then the step ends (Interrupted), writing what it spent. With nothing in flight, or at a
second Ctrl-C, or once the wait is over, the command is cancelled at once: a call still in
flight then is abandoned (counted in the usage: the server may have charged it).
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager

import click

from nuggetizer.assessors.base import Assessor

WAIT_ENV = "NUGGETIZER_INTERRUPT_WAIT"
DEFAULT_WAIT = 10.0


def interrupt_wait() -> float:
    """Seconds Ctrl-C waits for the calls in flight: $NUGGETIZER_INTERRUPT_WAIT, else 10."""
    try:
        return max(0.0, float(os.environ.get(WAIT_ENV, "") or DEFAULT_WAIT))
    except ValueError:
        return DEFAULT_WAIT


@contextmanager
def drain_on_interrupt(assessor: Assessor) -> Iterator[None]:
    """Inside the running command's main task: Ctrl-C as the module's doc says (where the
    loop cannot take a signal handler, e.g. outside the main thread, Ctrl-C stays as it is)."""
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    wait = interrupt_wait()
    presses = 0

    def cancel(why: str) -> None:
        if main is not None and not main.done():
            if assessor.in_flight:
                click.echo(f"interrupted: {why}: {assessor.in_flight} calls in flight "
                           "abandoned (a rerun sends them again)", err=True)
            main.cancel()

    def on_sigint() -> None:
        nonlocal presses
        presses += 1
        flying = assessor.in_flight
        if presses > 1 or not flying or wait <= 0:
            cancel("stopped at once" if presses > 1 else "stopped")
            return
        assessor.stop_new_calls()
        click.echo(f"interrupted: no new calls; waiting up to {wait:g} s for the {flying} "
                   f"calls in flight, so their answers are kept (Ctrl-C again stops at once; "
                   f"${WAIT_ENV} sets the wait)", err=True)
        loop.call_later(wait, cancel, f"still waiting after {wait:g} s")

    try:
        loop.add_signal_handler(signal.SIGINT, on_sigint)
    except (NotImplementedError, RuntimeError, ValueError):
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)
