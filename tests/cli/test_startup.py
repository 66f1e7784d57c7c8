"""A command starts at once (issue 41): `--version`, `--help` and every command's `--help`
import no pydantic model, prompt, HTTP client or method, only the command modules, whose
work is imported when they run; the methods' declarations their help shows are kept between
runs (interface/index.py) and read again only while what they came from is unchanged, and the
help read from them is the help that loading the methods gives. Times are the benchmark's
(benchmarks/bench_startup.py); here, what is imported."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import click

from nuggetizer.cli import COMMANDS, cli

ROOT = Path(__file__).resolve().parents[2]
PLUGINS = ROOT / "tests" / "plugins"
# what a command's start must not import: each costs tens of milliseconds or more
HEAVY = ("pydantic._internal._model_construction", "jinja2", "aiohttp", "msgspec", "numpy",
         "orjson", "openai", "scipy", "matplotlib", "sqlite3", "tenacity",
         "nuggetizer.interface.registry", "nuggetizer.interface.base", "nuggetizer.types",
         "nuggetizer.formats.records", "nuggetizer.templates", "nuggetizer.assessors.base")
SHOW = """
import sys
from nuggetizer.cli import main
sys.argv = ["nuggetizer", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print("MODULES", " ".join(sorted(sys.modules)), file=sys.stderr)
"""


def started(*args: str, cache: Path, env: dict[str, str] | None = None
            ) -> tuple[str, set[str]]:
    """`nuggetizer ARGS` in a fresh process (the installed package, -P): its stdout and the
    modules it had imported when it ended."""
    done = subprocess.run([sys.executable, "-P", "-c", SHOW, *args], capture_output=True,
                          text=True, check=True, timeout=120,
                          env={**os.environ, "XDG_CACHE_HOME": str(cache), "COLUMNS": "80",
                               **(env or {})})
    line = next(x for x in done.stderr.splitlines() if x.startswith("MODULES "))
    return done.stdout, set(line.split()[1:])


def test_every_command_module_is_an_entry_and_every_entry_a_command() -> None:
    defined = set()
    for path in (ROOT / "nuggetizer" / "cli").glob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and any(
                    isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute)
                    and d.func.attr in ("command", "group")
                    and isinstance(d.func.value, ast.Name) and d.func.value.id == "click"
                    for d in node.decorator_list):
                defined.add(f"nuggetizer.cli.{path.stem}:{node.name}")
    defined.discard("nuggetizer.cli.__init__:cli")
    assert set(COMMANDS.values()) == defined
    for name in COMMANDS:
        assert isinstance(cli.commands[name], click.Command) and cli.commands[name].name == name


def test_version_and_every_help_import_nothing_heavy(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    started("score", "--help", cache=cache)  # the first help keeps the declarations
    assert list(cache.glob("nuggetizer/declared-*.json"))
    # a workbench subcommand's help where its extra is installed (else the group says what to
    # install: make test-min's environment)
    sub = [["workbench", "account", "--help"]] if importlib.util.find_spec("sqlalchemy") else []
    for args in (["--version"], ["--help"], *([name, "--help"] for name in COMMANDS), *sub):
        out, modules = started(*args, cache=cache)
        assert out, args
        assert not modules & set(HEAVY), (args, sorted(modules & set(HEAVY)))


def flat(text: str) -> str:
    return " ".join(text.split())


def test_help_from_kept_declarations_is_the_help_of_the_loaded_methods(tmp_path: Path) -> None:
    for name in ("nuggetize", "assign", "score", "report", "agreement"):
        cold, modules = started(name, "--help", cache=tmp_path / name)
        assert "nuggetizer.interface.registry" in modules  # nothing kept yet: loaded
        warm, modules = started(name, "--help", cache=tmp_path / name)
        assert "nuggetizer.interface.registry" not in modules
        assert warm == cold
        assert "The settings: nuggets: min_grade, window, max_nuggets" in flat(warm)
        if name == "nuggetize":
            assert "--window INTEGER" in warm  # a flag the nuggets method declares


def test_kept_declarations_follow_a_plugin_and_its_edits(tmp_path: Path) -> None:
    """A plugin named in $NUGGETIZER_METHODS has declarations of its own; an edit of its file
    is seen at the next start (its size and modification time changed)."""
    plugins = tmp_path / "plugins"
    shutil.copytree(PLUGINS, plugins)
    env = {"NUGGETIZER_METHODS": "checklist_method", "PYTHONPATH": str(plugins)}
    cache = tmp_path / "cache"
    plain, _ = started("assign", "--help", cache=cache)
    first, _ = started("assign", "--help", cache=cache, env=env)
    assert "checklist: items, pass_share" in flat(first)
    assert "checklist" not in plain
    again, modules = started("assign", "--help", cache=cache, env=env)
    assert again == first and "nuggetizer.interface.registry" not in modules
    source = plugins / "checklist_method.py"
    text = source.read_text(encoding="utf-8")
    anchor = '    items: int = nuggetizer.setting(2, "points on each topic\'s checklist")\n'
    assert anchor in text
    source.write_text(text.replace(anchor, anchor + '    knob: int = nuggetizer.setting('
                                   '1, "a setting added since")\n'), encoding="utf-8")
    edited, modules = started("assign", "--help", cache=cache, env=env)
    assert "nuggetizer.interface.registry" in modules  # the edit was seen: loaded again
    assert "checklist: items, knob, pass_share" in flat(edited)
    kept = [json.loads(p.read_text()) for p in cache.glob("nuggetizer/declared-*.json")]
    assert len(kept) == 2  # one for the built-in methods, one with the plugin
