"""Named points where a test has the process killed (SIGKILL) at an exact moment, so that a
kill test does not depend on timing: `NUGGETIZER_KILL_AT=NAME` kills the process the first
time it reaches the point NAME, `NAME:N` the Nth time. Unset (always, outside tests), a point
costs one dictionary look-up.

The points (each is where a real kill could land and leave state behind):
  batch.created  a batch was created and its id is not yet recorded (found again by its upload)
  batch.poll     a batch's id is recorded and it is being polled (each poll)
  batch.fold     one answer of a batch was folded into the cache (each answer)
  batch.folded   a batch's answers are all folded, its state records it, before the next round
  batch.step     a batched step has ended (its outputs and usage written), before the next one
  call.sent      a live call is journalled as sent and about to go out (each call)
"""

from __future__ import annotations

import os
import signal

KILL_ENV = "NUGGETIZER_KILL_AT"
_reached: dict[str, int] = {}


def kill_point(name: str) -> None:
    """SIGKILL this process when $NUGGETIZER_KILL_AT names this point (and its count)."""
    wanted = os.environ.get(KILL_ENV)
    if not wanted:
        return
    target, _, nth = wanted.partition(":")
    if target != name:
        return
    _reached[name] = _reached.get(name, 0) + 1
    if _reached[name] >= int(nth or 1):
        os.kill(os.getpid(), signal.SIGKILL)
