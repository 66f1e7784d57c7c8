"""Progress bars on a terminal, and the one-line summary every command ends with."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import click

from nuggetizer.assessors.base import Stats

INTERVAL_ENV = "NUGGETIZER_PROGRESS_INTERVAL"
DEFAULT_INTERVAL = 5.0  # seconds between progress lines when stderr is not a terminal


class Progress(Protocol):
    """What `progress_bar` yields (a click bar, or ProgressLines): told the units done since."""

    def update(self, n_steps: int, /) -> None: ...


def _interval() -> float:
    """Seconds between progress lines: $NUGGETIZER_PROGRESS_INTERVAL, else 5 (0: none)."""
    try:
        return max(0.0, float(os.environ.get(INTERVAL_ENV, "") or DEFAULT_INTERVAL))
    except ValueError:
        return DEFAULT_INTERVAL


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


class ProgressLines:
    """Progress for logs (CI, nohup): a line on stderr every `interval` seconds, from a
    background thread, so a step that finishes no unit for minutes still shows life:
    `assign: 120/903 answers (13%), 2.1/min, ETA 6 h 12 min, 57 min 03 s elapsed`."""

    def __init__(self, total: int, label: str, unit: str, interval: float) -> None:
        self.total, self.label, self.unit, self.interval = total, label, unit, interval
        self.done = 0
        self.started = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="progress", daemon=True)

    def update(self, steps: int) -> None:
        """Count `steps` more finished units."""
        self.done += steps

    def line(self) -> str:
        """The current progress line."""
        elapsed = time.monotonic() - self.started
        share = f" ({100 * self.done // self.total}%)" if self.total else ""
        parts = [f"{self.label}: {self.done}/{self.total} {self.unit}{share}"]
        if self.done:
            rate = self.done / max(elapsed, 1e-9)
            parts.append(f"{rate:.2f}/s" if rate >= 1 else f"{rate * 60:.1f}/min")
            parts.append(f"ETA {_duration((self.total - self.done) / rate)}")
        parts.append(f"{_duration(elapsed)} elapsed")
        return ", ".join(parts)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            click.echo(self.line(), err=True)

    def __enter__(self) -> ProgressLines:
        if self.interval > 0:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()


@contextmanager
def progress_bar(total: int, label: str, *, unit: str = "units", resumed: int = 0
                 ) -> Iterator[Progress]:
    """Progress of `total` units still to do: a click bar on a terminal, else a line every few
    seconds (ProgressLines). `resumed` units already done in an earlier run are said first."""
    if resumed:
        click.echo(f"{label}: resuming: {resumed} of {resumed + total} {unit} already done; "
                   f"{total} to go", err=True)
    if total == 0:
        yield ProgressLines(0, label, unit, 0)
    elif sys.stderr.isatty():
        with click.progressbar(length=total, label=label, file=sys.stderr,
                               show_pos=True) as bar:
            yield bar
    else:
        with ProgressLines(total, label, unit, _interval()) as lines:
            yield lines


SKIPS_NAMED = 5  # what a summary line names of the units skipped for one reason


@dataclass
class Summary:
    """What a step did, printed as one line at its end."""

    step: str
    unit: str = "topics"
    done: int = 0
    resumed: int = 0
    skipped: int = 0
    skipped_why: str = ""
    also_skipped: Counter[str] = field(default_factory=Counter)  # skipped for other reasons
    skipped_names: dict[str, list[str]] = field(default_factory=dict)  # why -> what (`skip`)
    unjudged: int = 0
    unjudged_what: str = ""  # what the unjudged items are, when not the units' items
    empty: int = 0  # units of which nothing was judged (e.g. battles without a result)
    started: float = field(default_factory=time.monotonic)
    tokens: dict[str, int] | None = None  # this invocation's usage (see `usage_of`)
    prices: Any = None  # the assessor's prices (flow/dryrun.Prices), when it was given some
    voted: int = 0  # items an ensemble voted on (run/votes.py)
    disagreements: int = 0  # of those, the items whose votes differ
    disagreement_list: Any = None  # where they are listed
    votes: dict[str, tuple[int, int]] = field(default_factory=dict)  # judge: (missing, asked)
    total: dict[str, Any] | None = None  # the usage of every invocation of the step so far
    invocations: int = 1  # invocations of the step whose usage `total` sums (run/usage.py)

    @property
    def cost(self) -> float | None:
        """What the tokens spent cost at the prices given; None without prices or usage."""
        if self.prices is None or self.tokens is None:
            return None
        return self.prices.spent(self.tokens)

    def skip(self, why: str, name: str) -> None:
        """Count one unit skipped for `why` (the summary's `skipped_why`, or another reason),
        naming what was skipped (a topic id) in the line."""
        if why == self.skipped_why:
            self.skipped += 1
        else:
            self.also_skipped[why] += 1
        self.skipped_names.setdefault(why, []).append(name)

    def _why(self, why: str) -> str:
        """`why: a, b, c and 4 more`: the reason and what it skipped, when named."""
        names = list(dict.fromkeys(self.skipped_names.get(why, ())))
        if not names:
            return why
        more = f" and {len(names) - SKIPS_NAMED} more" if len(names) > SKIPS_NAMED else ""
        return f"{why}: {', '.join(names[:SKIPS_NAMED])}{more}"

    def missing_votes_text(self) -> str:
        """`M of V votes missing (J: m of v never parsed or refused; ...)`: per judge of an
        ensemble, the votes it never gave (the items were aggregated over the others)."""
        missing = sum(m for m, _ in self.votes.values())
        asked = sum(a for _, a in self.votes.values())
        text = f"{missing} of {asked} votes missing"
        short = [f"{judge}: {m} of {a} never parsed or refused"
                 for judge, (m, a) in self.votes.items() if m]
        return text + (f" ({'; '.join(short)})" if short else "")

    def line(self, stats: Stats | None = None) -> str:
        """`step: N topics (M resumed), K skipped (why), C calls, H cache hits, U unjudged,
        P prompt + C completion tokens, T s`."""
        parts = [f"{self.done + self.resumed} {self.unit}"]
        if self.resumed:
            parts[0] += f" ({self.resumed} resumed)"
        if self.skipped:
            parts.append(f"{self.skipped} skipped ({self._why(self.skipped_why)})")
        parts += [f"{n} skipped ({self._why(why)})" for why, n in
                  sorted(self.also_skipped.items())]
        if stats is not None:
            parts.append(f"{stats.calls} calls")
            parts.append(f"{stats.cache_hits} cache hits")
            if stats.retries:
                parts.append(f"{stats.retries} retries")
            if stats.adaptations:
                parts.append(f"{stats.adaptations} request parameters adapted to the server")
            if stats.budget_raises:
                parts.append(f"{stats.budget_raises} token budgets raised (reasoning)")
            if stats.refused:
                reasons = "; ".join(stats.refusal_reasons)
                parts.append(f"{stats.refused} refused by the server ({reasons})")
        parts.append(f"{self.unjudged} unjudged" + (f" {self.unjudged_what}"
                                                    if self.unjudged_what else ""))
        if self.empty:
            parts.append(f"{self.empty} {self.unit} with nothing judged")
        if self.voted:
            parts.append(f"the judges disagree on {self.disagreements} of {self.voted} items "
                         f"(listed in {self.disagreement_list})")
            parts.append(self.missing_votes_text())
        if self.tokens is not None:
            parts.append(token_text(self.tokens))
        cost = self.cost
        if cost is not None:
            parts.append(f"cost {cost:.4f}")
        parts.append(f"{time.monotonic() - self.started:.1f} s")
        line = f"{self.step}: " + ", ".join(parts)
        if self.invocations > 1 and self.total is not None:
            line += (f"; usage: this run {spend_text(self.tokens or {}, cost)}, added to "
                     f"{self.invocations - 1} earlier: all runs "
                     f"{spend_text(self.total, self.total.get('cost'))} over "
                     f"{self.invocations} invocations")
        return line


TOKEN_FIELDS = ("calls", "cache_hits", "prompt_tokens", "completion_tokens",
                "cached_prompt_tokens", "cached_completion_tokens", "reasoning_tokens",
                "cached_reasoning_tokens")


def usage_of(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    """What one step spent: the difference of every counter of the assessor (Stats.as_dict)
    taken before and after it (an assessor may serve several steps of one command)."""
    return {name: int(after.get(name, 0)) - int(before.get(name, 0)) for name in after}


def token_text(tokens: dict[str, int]) -> str:
    """`P prompt + C completion tokens (of which R reasoning) (replayed from the cache:
    P' + C'); batch: B answers, P'' + C'' tokens`: reasoning tokens are part of the completion
    tokens, as the servers count (and bill) them."""
    text = (f"{tokens.get('prompt_tokens', 0)} prompt + "
            f"{tokens.get('completion_tokens', 0)} completion tokens")
    if tokens.get("reasoning_tokens", 0):
        text += f" (of which {tokens['reasoning_tokens']} reasoning)"
    cached = (tokens.get("cached_prompt_tokens", 0), tokens.get("cached_completion_tokens", 0))
    if any(cached):
        text += f" (replayed from the cache: {cached[0]} + {cached[1]})"
    if tokens.get("batch_calls"):
        text += (f"; batch: {tokens['batch_calls']} answers, "
                 f"{tokens.get('batch_prompt_tokens', 0)} + "
                 f"{tokens.get('batch_completion_tokens', 0)} tokens at the batch price")
    if tokens.get("abandoned"):
        text += (f"; {tokens['abandoned']} calls abandoned in flight (may be charged, tokens "
                 "unknown)")
    return text


def spend_text(tokens: dict[str, Any], cost: float | None) -> str:
    """`N calls, P prompt + C completion tokens[, B batch answers][, cost X]`: what was paid
    for (the cache's replays left out)."""
    text = (f"{tokens.get('calls', 0)} calls, {tokens.get('prompt_tokens', 0)} prompt + "
            f"{tokens.get('completion_tokens', 0)} completion tokens")
    if tokens.get("batch_calls"):
        text += (f", {tokens['batch_calls']} batch answers ({tokens.get('batch_prompt_tokens', 0)}"
                 f" + {tokens.get('batch_completion_tokens', 0)} tokens)")
    return text + ("" if cost is None else f", cost {float(cost):.4f}")


def say_recovered(label: str, entries: Sequence[dict[str, Any]], usage: Path) -> None:
    """One line per killed invocation whose spend was recovered from its journal."""
    for entry in entries:
        spent = entry.get("usage") or {}
        lost = (f"; {spent['lost']} calls sent, answers lost: the provider may bill them"
                if spent.get("lost") else "")
        click.echo(f"{label}: the invocation started {entry.get('started')} was killed; it had "
                   f"spent {spend_text(spent, spent.get('cost'))} (from its spend journal), "
                   f"now counted in {usage}{lost}", err=True)
