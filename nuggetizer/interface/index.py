"""What the registered methods declare, for a command line that has not loaded them: each
method's name and settings (`Setting`, interface/declare.py), which make `--method`'s choices,
the `--set` help and the flags a method gives a command (cli/flags.py).

Loading the methods (`registry.load`) imports every one of them, their pydantic models and
prompts: most of what a command costs to start. So what they declare is kept in a file of the
user's cache folder (places.py: `$XDG_CACHE_HOME/nuggetizer/`, else `~/.cache/nuggetizer/`)
and read instead while it holds: the same Python, nuggetizer and $NUGGETIZER_METHODS, the same
distributions installed, and every file of the modules that loading the methods imported
unchanged (its size and modification time). Otherwise, or when the file cannot be read or
written, the methods are loaded, as they always were; once loaded in a process, they are
asked directly.
"""
from __future__ import annotations

import json
import os
import sys
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from nuggetizer import __version__
from nuggetizer.interface.declare import Setting
from nuggetizer.places import cache_folder

PLUGINS_ENV = "NUGGETIZER_METHODS"
REGISTRY = "nuggetizer.interface.registry"
FORMAT = 1
_KEPT = (bool, int, float, str, type(None))  # defaults that a JSON file gives back as they were
_read: dict[str, dict[str, tuple[Setting, ...]]] = {}  # this process's, by $NUGGETIZER_METHODS

Declared = dict[str, tuple[Setting, ...]]


def declared() -> Declared:
    """{method name: its settings} of every registered method, the default method first (the
    registry's order)."""
    registry = sys.modules.get(REGISTRY)
    if registry is not None and getattr(registry, "_loaded", False):
        return _from_registry()
    plugins = os.environ.get(PLUGINS_ENV, "")
    if plugins in _read:
        return _read[plugins]
    path = index_path()
    found = _valid(path)
    if found is None:
        found = _from_registry()
        _write(path, found)
    _read[plugins] = found
    return found


def index_path() -> Path:
    """Where this Python, nuggetizer and $NUGGETIZER_METHODS keep what the methods declare."""
    said = f"{sys.executable}\0{__version__}\0{os.environ.get(PLUGINS_ENV, '')}"
    return cache_folder() / f"declared-{zlib.crc32(said.encode()):08x}.json"


def _from_registry() -> Declared:
    from nuggetizer.interface.declare import settings_of
    from nuggetizer.interface.registry import method_class, method_names

    return {name: tuple(settings_of(method_class(name).config_type))
            for name in method_names()}


def _installed() -> list[str]:
    """The distributions and .pth files of every folder on the path: what an install or an
    uninstall changes."""
    found = []
    for folder in sys.path:
        try:
            names = os.listdir(folder or ".")
        except OSError:
            continue
        found += sorted(n for n in names if n.endswith((".dist-info", ".egg-info", ".pth")))
    return found


def _sources() -> dict[str, list[int]]:
    """{file: [size, mtime_ns]} of every module loaded so far, the standard library's aside."""
    import sysconfig

    stdlib = tuple({sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib")})
    found = {}
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if not file or file.startswith(stdlib):
            continue
        try:
            stat = os.stat(file)
        except OSError:
            continue
        found[file] = [stat.st_size, stat.st_mtime_ns]
    return found


def _unchanged(files: dict[str, list[int]]) -> bool:
    for file, (size, mtime) in files.items():
        try:
            stat = os.stat(file)
        except OSError:
            return False
        if stat.st_size != size or stat.st_mtime_ns != mtime:
            return False
    return True


def _valid(path: Path) -> Declared | None:
    """What the file says the methods declare, when it still holds; None otherwise."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        if record["format"] != FORMAT or record["installed"] != _installed() or \
                not _unchanged(record["files"]):
            return None
        return {name: tuple(Setting(s["name"], s["default"], s["help"],
                                    tuple(s["choices"]) if s["choices"] is not None else None,
                                    s["flag"], tuple(s["commands"]), s["flag_help"])
                            for s in settings)
                for name, settings in record["methods"]}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write(path: Path, found: Declared) -> None:
    """Keep what the methods declare, with what it was read from (nothing when a default
    would not come back from JSON as it is, or the folder cannot be written)."""
    settings: Iterable[Setting] = (s for group in found.values() for s in group)
    if not all(type(s.default) in _KEPT for s in settings):
        return
    record: dict[str, Any] = {
        "format": FORMAT, "installed": _installed(), "files": _sources(),
        "methods": [[name, [{"name": s.name, "default": s.default, "help": s.help,
                             "choices": list(s.choices) if s.choices is not None else None,
                             "flag": s.flag, "commands": list(s.commands),
                             "flag_help": s.flag_help} for s in group]]
                    for name, group in found.items()]}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
        partial.write_text(json.dumps(record), encoding="utf-8")
        os.replace(partial, path)
    except OSError:
        return
