"""The registry of answer-key methods: the only list of them.

A method registers itself when its module is imported; `load()` imports every installed
distribution's entry point in the group `nuggetizer.methods` (the built-in methods are this
package's own entry points, setup.cfg), then any module named in $NUGGETIZER_METHODS
(comma-separated import names: a method of your own, one module plus its templates). So the
interface names no method package: the methods sit above it and find it, not the reverse.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from nuggetizer import names
from nuggetizer.errors import ConfigError
from nuggetizer.interface.base import AnswerKeyMethod
from nuggetizer.interface.profile import get_profile

PLUGINS_ENV = "NUGGETIZER_METHODS"
DEFAULT_METHOD = names.DEFAULT_METHOD  # nuggets, the AutoNuggetizer
ENTRY_POINT_GROUP = "nuggetizer.methods"
REGISTRY: dict[str, type[AnswerKeyMethod]] = {}
_loaded = False


def register(cls: type[AnswerKeyMethod]) -> type[AnswerKeyMethod]:
    """Class decorator: make a method available by its name (a name taken twice is an error)."""
    known = REGISTRY.get(cls.name)
    if known is not None and known is not cls:
        raise ConfigError(f"two methods are called {cls.name!r}: {known.__module__} and "
                          f"{cls.__module__}")
    REGISTRY[cls.name] = cls
    return cls


def load() -> None:
    """Import the built-in method modules and the plugins (once)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        entry.load()
    _load_plugins()
    if DEFAULT_METHOD not in REGISTRY:
        raise ConfigError("no built-in method is registered: the package's entry points are "
                          "missing (install it: pip install -e . or pip install trec-nuggetizer)")


def _load_plugins() -> None:
    """Import the modules $NUGGETIZER_METHODS names."""
    for name in filter(None, (n.strip() for n in os.environ.get(PLUGINS_ENV, "").split(","))):
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise ConfigError(f"${PLUGINS_ENV} names {name!r}, which cannot be imported: "
                              f"{exc}") from exc


def _load_named(name: str) -> None:
    """Import the entry points called `name` (a method's entry point is named for it, as
    setup.cfg names the built-in ones) and the plugins: a command that uses one method
    imports it, not the other six (30 ms of CPU here). A method registered under another
    entry point's name is found by `load`, which `method_class` calls when this finds none."""
    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP, name=name):
        entry.load()
    _load_plugins()


def method_names() -> list[str]:
    """The names of every registered method, the default one first."""
    load()
    return sorted(REGISTRY, key=lambda name: (name != DEFAULT_METHOD, name))


def method_class(name: str) -> type[AnswerKeyMethod]:
    """The method called `name`; ConfigError naming the known ones otherwise."""
    if name not in REGISTRY and not _loaded:
        _load_named(name)
    if name not in REGISTRY:
        load()
    if name not in REGISTRY:
        raise ConfigError(f"unknown method {name!r}; known: {', '.join(method_names())}")
    return REGISTRY[name]


def method_holding(paths: Sequence[Path]) -> str | None:
    """The method whose judgments `paths` unmistakably are (its `holds`), if one is."""
    found = [name for name in method_names()
             if paths and all(method_class(name).holds(p) for p in paths)]
    return found[0] if len(found) == 1 else None


def make_method(name: str, settings: Mapping[str, Any] | None = None,
                profile: str | None = None) -> AnswerKeyMethod:
    """The method `name` configured with `settings`, scoring under the profile called
    `profile` (None: the default; see AnswerKeyMethod.configure, interface/profile.py)."""
    return method_class(name).configure(settings, get_profile(profile))
