"""Progress bars on a terminal, and the one-line summary every command ends with."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import click

from nuggetizer.assessors.base import Stats


class _Silent:
    def update(self, steps: int) -> None:
        """Nothing to draw off a terminal."""


@contextmanager
def progress_bar(total: int, label: str) -> Iterator[object]:
    """A click progress bar on stderr when it is a terminal, else a silent stand-in."""
    if not sys.stderr.isatty() or total == 0:
        yield _Silent()
        return
    with click.progressbar(length=total, label=label, file=sys.stderr, show_pos=True) as bar:
        yield bar


@dataclass
class Summary:
    """What a step did, printed as one line at its end."""

    step: str
    unit: str = "topics"
    done: int = 0
    resumed: int = 0
    skipped: int = 0
    skipped_why: str = ""
    unjudged: int = 0
    started: float = field(default_factory=time.monotonic)

    def line(self, stats: Stats | None = None) -> str:
        """`step: N topics (M resumed), K skipped (why), C calls, H cache hits, U unjudged, T s`."""
        parts = [f"{self.done + self.resumed} {self.unit}"]
        if self.resumed:
            parts[0] += f" ({self.resumed} resumed)"
        if self.skipped:
            parts.append(f"{self.skipped} skipped ({self.skipped_why})")
        if stats is not None:
            parts.append(f"{stats.calls} calls")
            parts.append(f"{stats.cache_hits} cache hits")
            if stats.retries:
                parts.append(f"{stats.retries} retries")
        parts.append(f"{self.unjudged} unjudged")
        parts.append(f"{time.monotonic() - self.started:.1f} s")
        return f"{self.step}: " + ", ".join(parts)
