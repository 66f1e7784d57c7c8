"""The guide (docs/, mkdocs.yml) builds strictly and offline, and its generated reference holds
every registered command, option, method, measure, setting, environment variable and exit code;
an undescribed option fails the strict build."""

from __future__ import annotations

import configparser
import html
import importlib.util
import logging
import re
from pathlib import Path
from types import ModuleType

import click
import pytest
from click.testing import CliRunner

from nuggetizer.cli import cli
from nuggetizer.environment import VARIABLES
from nuggetizer.errors import EXIT_CODES
from nuggetizer.interface.declare import settings_of
from nuggetizer.interface.registry import method_class, method_names

pytest.importorskip("mkdocs", reason="the guide's tools (the [docs] extra) are not installed")

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "nuggetizer", ROOT / "assessors"]


def sections(page: Path) -> dict[str, str]:
    """{h2 id: the section's HTML up to the next h2} of a built page."""
    text = page.read_text(encoding="utf-8")
    parts = re.split(r'<h2 id="([^"]+)"', text)
    return {parts[k]: parts[k + 1] for k in range(1, len(parts) - 1, 2)}


def commands(group: click.Group, prefix: str = "") -> dict[str, click.Command]:
    found: dict[str, click.Command] = {}
    for name, command in group.commands.items():
        found[prefix + name] = command
        if isinstance(command, click.Group):
            found |= commands(command, f"{prefix}{name} ")
    return found


def test_every_command_and_option_is_in_the_cli_reference(site: Path) -> None:
    by_id = sections(site / "reference" / "cli.html")
    registered = commands(cli)
    assert len(registered) >= 20
    root = click.Context(cli, info_name="nuggetizer", **cli.context_settings)
    for name, command in registered.items():
        section = by_id.get(name.replace(" ", "-"))  # a subcommand's anchor: workbench-account
        assert section is not None, f"no section for nuggetizer {name}"
        ctx = click.Context(command, info_name=name, parent=root)
        for param in command.get_params(ctx):
            for opt in (*param.opts, *param.secondary_opts):
                shown = f"<code>{opt}</code>" if isinstance(param, click.Option) else \
                    f"<code>{param.human_readable_name}</code>"
                assert shown in section, f"nuggetizer {name}: {opt} is not in its section"
    assert "NUGGETIZER_ASSESSOR" in by_id["assign"]  # the variable beside its option


def test_every_method_measure_and_setting_is_in_the_methods_reference(site: Path) -> None:
    by_id = sections(site / "reference" / "methods.html")
    assert set(method_names()) <= set(by_id)
    for name in method_names():
        cls = method_class(name)
        text = html.unescape(re.sub(r"<[^>]+>", " ", by_id[name]))
        for measure in cls.declared:
            assert f" {measure.name} " in text, f"{name}: measure {measure.name} missing"
        for setting in settings_of(cls.config_type):
            assert f" {setting.name} " in text, f"{name}: setting {setting.name} missing"


def test_every_environment_variable_is_declared_and_in_the_reference(site: Path) -> None:
    used = {name for folder in SOURCES for path in folder.rglob("*.py")
            for name in re.findall(r"\bNUGGETIZER_[A-Z_]+[A-Z]\b",
                                   path.read_text(encoding="utf-8"))}
    declared = {v.name for v in VARIABLES}
    assert len(used) >= 19 and used <= declared, f"not declared: {sorted(used - declared)}"
    page = (site / "reference" / "environment.html").read_text(encoding="utf-8")
    for name in declared:
        assert f'id="{name.lower()}"' in page and f"<code>{name}</code>" in page, name


def test_the_exit_codes_and_the_api_are_in_the_reference(site: Path) -> None:
    page = (site / "reference" / "exit-codes.html").read_text(encoding="utf-8")
    for code in EXIT_CODES:
        assert f"<td>{code}</td>" in page
    api = (site / "reference" / "python-api.html").read_text(encoding="utf-8")
    for function in ("load_topics", "build_keys", "judge", "score", "assessor"):
        assert f'id="nuggetizer.api.{function}"' in api, function


def test_the_site_loads_nothing_from_the_network(site: Path) -> None:
    pages = list(site.rglob("*.html")) + list(site.rglob("*.css"))
    assert len([p for p in site.rglob("*.html") if p.name != "404.html"]) >= 30
    remote = re.compile(r"<script[^>]+src=\"https?://|<link[^>]+rel=\"stylesheet\"[^>]+"
                        r"href=\"https?://|@import url\(\"?https?://|fonts\.googleapis")
    offenders = [str(p) for p in pages if remote.search(p.read_text(encoding="utf-8"))]
    assert not offenders


def _hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("reference", ROOT / "docs/hooks/reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_option_without_help_is_a_warning_that_fails_the_strict_build(
        caplog: pytest.LogCaptureFixture) -> None:
    @click.command("bare")
    @click.option("--quiet-one", is_flag=True)
    def bare(quiet_one: bool) -> None:
        """A command whose option says nothing."""

    hook = _hook()
    with caplog.at_level(logging.WARNING, logger="mkdocs.plugins.nuggetizer"):
        text = "\n".join(hook.command_section("bare", bare, click.Context(cli)))
    assert "<code>" not in text and "`--quiet-one`" in text
    assert [r.getMessage() for r in caplog.records] == [
        "nuggetizer bare: option --quiet-one has no help text"]


def test_the_install_page_lists_every_extra_setup_cfg_declares_and_no_other(site: Path
                                                                            ) -> None:
    parser = configparser.ConfigParser()
    parser.read(ROOT / "setup.cfg", encoding="utf-8")
    declared = parser["options.extras_require"]
    assert {"local", "server", "serve", "workbench", "tokens"} <= set(declared)
    page = (site / "getting-started" / "install.html").read_text(encoding="utf-8")
    table = next(t for t in re.findall(r"<table>.*?</table>", page, re.S) if ">extra<" in t)
    rows = {m.group(1): m.group(2) for m in re.finditer(
        r"<tr>\s*<td><code>([^<]+)</code></td>(.*?)</tr>", table, re.S)}
    assert set(rows) == set(declared)
    for name, row in rows.items():
        brings, what = re.findall(r"<td>(.*?)</td>", row, re.S)
        text = html.unescape(re.sub(r"<[^>]+>", "", brings))
        for requirement in declared[name].split("\n"):
            if requirement.strip():
                assert re.split(r"[<>=!~; ]", requirement.strip())[0] in text, (name, text)
        assert len(what) > 20, name
    server = re.sub(r"<[^>]+>", "", rows["server"])
    assert "llama_cpp.server" in server and "OpenAI-compatible" in server


def test_an_extra_without_its_comment_is_a_warning(tmp_path: Path,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    setup = tmp_path / "setup.cfg"
    setup.write_text("[metadata]\nname = x\n\n[options.extras_require]\n"
                     "# what it is for\nsaid =\n    a>=1\nunsaid =\n    b[c]>=2\n\n"
                     "[options.entry_points]\n", encoding="utf-8")
    hook = _hook()
    assert hook.extras(setup) == {"said": (["a"], "what it is for"), "unsaid": (["b[c]"], "")}
    hook.SETUP_CFG = setup
    with caplog.at_level(logging.WARNING, logger="mkdocs.plugins.nuggetizer"):
        table = hook.extras_table()
    assert "| `unsaid` | b&#91;c&#93; |  |" in table
    assert [r.getMessage() for r in caplog.records] == [
        "setup.cfg: the extra unsaid has no comment above it saying what it is for"]


def test_the_first_evaluations_leaderboard_is_what_the_sample_track_gives(tmp_path: Path
                                                                          ) -> None:
    """The figure the getting-started page shows is the mock assessor's leaderboard of the
    sample track as it is today (mock's answers are a hash of the prompt: deterministic)."""
    page = (ROOT / "docs/getting-started/first-evaluation.md").read_text(encoding="utf-8")
    shown = re.search(r"```text\n(run_id .*?)\n\.\.\.\n```", page, re.S)
    assert shown is not None
    done = CliRunner().invoke(cli, ["evaluate", "--track", "sample", "--assessor", "mock",
                                    "-o", str(tmp_path / "first"), "--no-cache"])
    assert done.exit_code == 0, done.output
    board = (tmp_path / "first" / "leaderboard.tsv").read_text(encoding="utf-8").splitlines()
    rows = [re.split(r"\s+", line.strip()) for line in shown.group(1).splitlines()]
    assert rows == [line.split("\t") for line in board[:len(rows)]]
