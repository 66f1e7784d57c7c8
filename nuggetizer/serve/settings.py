"""What `nuggetizer serve` was started with: where it listens, its token and limits, the
assessor options (the CLI's) and where jobs keep their state."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nuggetizer.errors import ConfigError

DEFAULT_PORT = 8085  # castorini's nuggetizer serve
DEFAULT_MAX_BODY = 8 * 1024 * 1024  # bytes
DEFAULT_MAX_ITEMS = 1000  # answers, passages, nuggets or records in one request


def is_loopback(host: str) -> bool:
    """Whether `host` only takes connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Settings:
    """The server's settings; `options`: the assessor options as the CLI's assessor options
    give them (run/factories.py reads them)."""

    options: dict[str, Any]
    state: Path  # jobs and scratch folders live here
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    token: str | None = None
    max_body: int = DEFAULT_MAX_BODY
    max_items: int = DEFAULT_MAX_ITEMS
    tracks: dict[str, str] = field(default_factory=dict)  # name -> builtin name or track.toml
    workbench: str | None = None  # the assessors' workbench's database, served under /workbench
    lenient: bool = False  # requests' default `lenient` (off-menu key labels kept unjudged)

    def check(self) -> None:
        """ConfigError when the server would be open to the network without a token."""
        if not is_loopback(self.host) and not self.token:
            raise ConfigError(f"--host {self.host} takes connections from other machines: give "
                              "a bearer token (--token or $NUGGETIZER_SERVE_TOKEN), or bind "
                              "127.0.0.1")
        specs = self.options.get("assessor_spec") or ()
        if len(specs) > 1 or (self.options.get("samples") or 1) > 1:
            raise ConfigError("serve takes one --assessor, asked once (no ensemble, no "
                              "--samples): every request shares its cache and limit")
        for option in ("dry_run", "batch_api"):
            if self.options.get(option):
                raise ConfigError(f"--{option.replace('_', '-')} is for the commands; serve "
                                  "answers every request live")
        if self.token is not None and len(self.token) < 16:
            raise ConfigError("--token: at least 16 characters")
