"""Prompt templates: Jinja files shipped in `nuggetizer.prompts`, rendered with StrictUndefined.

Two renderings (the variable `render`, a global every template sees): "castorini" (the default)
gives the bytes castorini's nuggetizer sends, the TREC 2024 RAG Track's reference
implementation: lists as Python writes them (`str(list)`: `['a', "b's"]`); "json" gives lists
as JSON (`["a", "b's"]`), this toolkit's earlier rendering, kept so that caches made with it
still hit. A template may also test `render` for castorini's other bytes."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from jinja2 import Environment, StrictUndefined, Template, UndefinedError, pass_context
from jinja2.runtime import Context

from nuggetizer.errors import ConfigError

RENDERINGS = ("castorini", "json")


@pass_context
def _pylist(context: Context, items: Iterable[str]) -> str:
    """A list of strings as the prompt shows it: `str(list)` as castorini's prompts do, or
    JSON under `render="json"`."""
    if context.get("render") == "json":
        return json.dumps(list(items), ensure_ascii=False)
    return str(list(items))


_ENV = Environment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False)
_ENV.filters["pylist"] = _pylist
_ENV.globals["render"] = RENDERINGS[0]


def _template(source: str) -> Template:
    """Compile `source`. Its globals (Jinja's built-ins, a ChainMap over the environment's)
    become a plain dict: every render copies them, and copying a ChainMap costs far more."""
    template = _ENV.from_string(source)
    template.globals = dict(template.globals)
    return template


@dataclass(frozen=True)
class Prompt:
    """A named prompt: an optional system template and a user template."""

    name: str
    system: Template | None
    user: Template
    sha256: str

    def render(self, **variables: object) -> tuple[tuple[str, str], ...]:
        """Render to chat messages; a variable the template needs but was not given is an error."""
        try:
            messages = []
            if self.system is not None:
                messages.append(("system", self.system.render(**variables)))
            messages.append(("user", self.user.render(**variables)))
        except UndefinedError as exc:
            raise ConfigError(f"prompt {self.name!r}: {exc}") from exc
        return tuple(messages)


def available_prompts() -> list[str]:
    """Names of the prompts shipped with the package."""
    root = resources.files("nuggetizer.prompts")
    names = {p.name.split(".")[0] for p in root.iterdir() if p.name.endswith(".user.jinja")}
    return sorted(names)


def _read(name: str, part: str, directory: Path | None) -> str | None:
    filename = f"{name}.{part}.jinja"
    if directory is not None and (directory / filename).is_file():
        return (directory / filename).read_text(encoding="utf-8")
    resource = resources.files("nuggetizer.prompts").joinpath(filename)
    return resource.read_text(encoding="utf-8") if resource.is_file() else None


@cache
def load_prompt(name: str, directory: Path | None = None) -> Prompt:
    """Load prompt `name`; files in `directory` (if given) override the shipped ones."""
    user = _read(name, "user", directory)
    if user is None:
        raise ConfigError(f"no prompt template {name!r} (known: {', '.join(available_prompts())})")
    system = _read(name, "system", directory)
    digest = hashlib.sha256(((system or "") + "\0" + user).encode("utf-8")).hexdigest()
    return Prompt(
        name=name,
        system=_template(system) if system is not None else None,
        user=_template(user),
        sha256=digest,
    )
