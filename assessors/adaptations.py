"""The request adaptations an Assessor's backend learned from its server, remembered.

A backend that adapts its requests to what its server refuses (openai_compat.py: `adapted`,
`learn`, and `options` that say what is sent) learns it at run time; the Assessor keeps what
was learned in the cache, under a key of its own per assessor spec, and hands it back to the
backend before the first cache key of a later run is made, so that a rerun's requests and keys
are those of the run that learned it (and it replays without a call).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from nuggetizer.cache import cache_key

from .stats import Stats

if TYPE_CHECKING:
    from nuggetizer.cache import Cache

log = logging.getLogger("nuggetizer.assessors.base")
MEMORY_FORMAT = 1


class Adaptations:
    """The Assessor's part that remembers its backend's adaptations (see the module's doc)."""

    backend: Any
    cache: Cache | None
    spec: str
    stats: Stats
    _recalled: bool = False
    _known: dict[str, Any] | None = None  # the backend's adaptations already counted

    @property
    def options(self) -> dict[str, Any]:
        return dict(getattr(self.backend, "options", None) or {})

    @property
    def endpoint(self) -> str:
        return str(getattr(self.backend, "endpoint", None) or self.spec)

    def _memory_key(self) -> str:
        return cache_key({"format": MEMORY_FORMAT, "adaptations": self.spec})

    def recall(self) -> None:
        """Once: take the adaptations an earlier run learned from this model's server (kept in
        the cache), so that this run's requests, and their cache keys, are adapted from the
        start."""
        if self._recalled:
            return
        self._recalled = True
        learn = getattr(self.backend, "learn", None)
        if self.cache is not None and learn is not None:
            remembered = self.cache.get(self._memory_key())
            if remembered:
                learn(remembered)
                self._known = dict(remembered)

    def learned(self, before: dict[str, Any]) -> bool:
        """After a call: whether the backend's options changed since `before` (it adapted its
        requests to what the server takes). What it newly learned is counted, said, and kept
        in the cache for later runs."""
        adapted = dict(getattr(self.backend, "adapted", None) or {})
        new = {k: v for k, v in adapted.items() if (self._known or {}).get(k) != v}
        if new:
            self._known = adapted
            self.stats.adaptations += len(new)
            log.warning("%s at %s refused a request parameter; from now on requests are sent "
                        "adapted: %s", self.spec, self.endpoint, new)
            if self.cache is not None:
                self.cache.put(self._memory_key(), adapted)
        return self.options != before

