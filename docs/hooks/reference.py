"""The guide's reference pages, generated from the code at every build (a mkdocs hook):

- reference/cli.md: every command of the `nuggetizer` click group, its usage, arguments and
  options in the groups its --help shows, each option's type, default and environment
  variable (cli/presentation.py, nuggetizer/environment.py);
- reference/methods.md: every registered method, its measures and settings, from their
  declarations (interface/declare.py, interface/describe.py);
- reference/environment.md: every environment variable (nuggetizer/environment.py);
- reference/exit-codes.md: the exit codes (errors.EXIT_CODES) and the errors behind them;
- the extras table of getting-started/install.md (where the page says
  `<!-- extras: setup.cfg -->`): every extra setup.cfg declares, what it brings and, from the
  comment above it there, what it is for.

A command, argument or option without help text, or an extra without its comment, is a
warning, which `mkdocs build --strict` turns into a failure: nothing reaches the reference
undescribed.
"""

from __future__ import annotations

import configparser
import html
import inspect
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from nuggetizer import errors
from nuggetizer.cli import cli
from nuggetizer.cli.presentation import option_groups
from nuggetizer.environment import TOPICS, VARIABLES, by_option
from nuggetizer.interface.declare import settings_of
from nuggetizer.interface.describe import summary
from nuggetizer.interface.registry import method_class, method_names

try:  # click 8.3+: an option given no default holds this sentinel (shown as no default)
    from click._utils import UNSET
except ImportError:  # older click: None
    UNSET = None

log = logging.getLogger("mkdocs.plugins.nuggetizer")
BETTER = {True: "higher", False: "lower", None: "neither (descriptive)"}


def cell(text: Any) -> str:
    """Text for a Markdown table cell, on one line: outside `code spans`, HTML, pipes and the
    characters Markdown would read as markup are escaped; a code span is kept as written (its
    text is shown literally, so an entity there would show as one, `run&#95;batch`)."""
    parts = re.split(r"(`[^`\n]+`)", " ".join(str(text).split()))
    return "".join(part if part.startswith("`") and part.endswith("`") and len(part) > 1
                   else _escaped(part) for part in parts)


def _escaped(text: str) -> str:
    escaped = html.escape(text)
    for char, entity in (("|", "&#124;"), ("*", "&#42;"), ("[", "&#91;"), ("]", "&#93;"),
                         ("_", "&#95;"), ("`", "&#96;")):
        escaped = escaped.replace(char, entity)
    return escaped


def anchor(name: str) -> str:
    """The anchor of a command's section (`cli.md#nuggetize`, `cli.md#workbench-account`)."""
    return name.replace(" ", "-")


def _type(param: click.Parameter, ctx: click.Context) -> str:
    if isinstance(param, click.Option) and param.is_flag:
        return "flag"
    return param.type.get_metavar(param, ctx) or param.type.name.upper()  # type: ignore[call-arg]


def _default(param: click.Parameter) -> str:
    if isinstance(param, click.Option) and (param.is_flag or param.default in (None, (), [])):
        return ""
    if callable(param.default) or param.default is UNSET:
        return ""
    return f"`{param.default}`"


def _option_rows(command: click.Command, ctx: click.Context) -> Iterator[str]:
    variables = by_option()
    for title, params in option_groups(command, ctx).items():
        yield f"\n**{title}**\n"
        yield "| option | value | default | environment | what it does |"
        yield "|---|---|---|---|---|"
        for param in params:
            if getattr(param, "hidden", False):
                continue
            help_text = param.get_help_record(ctx)
            text = help_text[1] if help_text else ""
            if not text and param.name != "help":
                log.warning("nuggetizer %s: option %s has no help text", command.name,
                            "/".join(param.opts))
            env = param.envvar or next((variables[o].name for o in param.opts
                                        if o in variables), "")
            env_cell = f"[`{env}`](environment.md#{str(env).lower()})" if env else ""
            names = ", ".join(f"`{o}`" for o in (*param.opts, *param.secondary_opts))
            yield (f"| {names} | {cell(_type(param, ctx))} | {cell(_default(param))} | "
                   f"{env_cell} | {cell(text)} |")


def command_section(name: str, command: click.Command, parent: click.Context) -> list[str]:
    """One command's section of the CLI reference."""
    ctx = click.Context(command, parent=parent, info_name=name)
    doc = inspect.cleandoc(command.help or "")
    if not doc:
        log.warning("nuggetizer %s has no help text", name)
    lines = [f"## nuggetizer {name} {{#{anchor(name)}}}", "", doc.replace("\b\n", ""), "",
             "```text", f"nuggetizer {name} {' '.join(command.collect_usage_pieces(ctx))}",
             "```", ""]
    arguments = [p for p in command.get_params(ctx) if isinstance(p, click.Argument)]
    if arguments:
        lines += ["**Arguments**: " + ", ".join(
            f"`{p.human_readable_name}`" + (" (one or more)" if p.nargs == -1 else "")
            for p in arguments), ""]
    lines += list(_option_rows(command, ctx))
    if isinstance(command, click.Group):
        for sub_name, sub in sorted(command.commands.items()):
            lines += ["", *command_section(f"{name} {sub_name}", sub, ctx)]
    return [*lines, ""]


def cli_page() -> str:
    root = click.Context(cli, info_name="nuggetizer", **cli.context_settings)
    names = sorted(cli.commands)
    lines = ["# Command line", "",
             "Generated from the `nuggetizer` command itself at every build of this guide: "
             "each command with its options, grouped as its `--help` groups them. Every "
             "command exits with the codes of [Exit codes](exit-codes.md).", "",
             "| command | what it does |", "|---|---|"]
    lines += [f"| [`{n}`](#{anchor(n)}) | {cell(cli.commands[n].get_short_help_str(200))} |"
              for n in names]
    lines += ["", "## nuggetizer {#nuggetizer}", "", "```text",
              "nuggetizer [--version] [-h|--help] COMMAND [ARGS]...", "```", ""]
    for name in names:
        lines += command_section(name, cli.commands[name], root)
    return "\n".join(lines) + "\n"


def methods_page() -> str:
    lines = ["# Methods", "",
             "Generated from each registered method's declarations (its measures and its "
             "settings dataclass) at every build; `nuggetizer methods NAME` prints the same. A "
             "setting is given as `--set NAME=VALUE`, in a track config's table named after "
             "the method, or to `api.method(NAME, **settings)`.", ""]
    for name in method_names():
        cls = method_class(name)
        judging = cls.judging
        reads = (", ".join(sorted(judging.needs)) or "the topics only") if judging.needs_key \
            else "no answer key (judges without one)"
        lines += [f"## {name} {{#{name}}}", "", summary(cls) or "", "",
                  f"- judges: {', '.join(cls.targets)}",
                  f"- key built from: {reads}" + (f"; written as `{judging.key_file}`"
                                                   if judging.needs_key else ""),
                  f"- ranked by: `{cls.primary}`", "", "**Measures**", "",
                  "| measure | what it is | rule | better |", "|---|---|---|---|"]
        for m in cls.declared:
            lines.append(f"| `{m.name}` | {cell(m.description)} | {cell(m.rule())} | "
                         f"{BETTER[m.higher_better]}"
                         f"{' (diagnostic)' if m.diagnostic else ''} |")
        settings = settings_of(cls.config_type)
        lines += ["", "**Settings**", ""]
        if not settings:
            lines += ["none", ""]
            continue
        lines += ["| setting | default | what it sets | own option |", "|---|---|---|---|"]
        for s in settings:
            choices = f" One of: {', '.join(s.choices)}." if s.choices else ""
            flag = f"`{s.flag}` on {', '.join(s.commands)}" if s.flag else ""
            lines.append(f"| `{s.name}` | `{s.default!r}` ({s.kind}) | {cell(s.help)}."
                         f"{cell(choices)} | {flag} |")
        lines.append("")
    return "\n".join(lines) + "\n"


def environment_page() -> str:
    lines = ["# Environment variables", "",
             "Every variable the toolkit reads, generated from `nuggetizer/environment.py`. An "
             "option given on the command line wins over its variable; `nuggetizer doctor` "
             "lists the ones set.", ""]
    for topic, title in TOPICS.items():
        lines += [f"## {title}", "", "| variable | what it sets | default | option |",
                  "|---|---|---|---|"]
        for v in (v for v in VARIABLES if v.topic == topic):
            lines.append(f"| <span id=\"{v.name.lower()}\"></span>`{v.name}` | {cell(v.help)} "
                         f"| {cell(v.default)} | {f'`{v.option}`' if v.option else ''} |")
        lines.append("")
    return "\n".join(lines) + "\n"


def exit_codes_page() -> str:
    lines = ["# Exit codes", "",
             "One table for every command (generated from `nuggetizer/errors.py`). Warnings "
             "never change the exit code, unless the command is given `--strict` (`validate`, "
             "`doctor`).", "", "| code | meaning |", "|---|---|"]
    lines += [f"| {code} | {cell(meaning)} |" for code, meaning in errors.EXIT_CODES.items()]
    lines += ["", "## The errors behind them", "", "| error | exit code | when |",
              "|---|---|---|"]
    for name, kind in sorted(vars(errors).items()):
        if isinstance(kind, type) and issubclass(kind, errors.NuggetizerError):
            doc = " ".join((inspect.getdoc(kind) or "").split("\n\n")[0].split())
            lines.append(f"| `{name}` | {kind.exit_code} | {cell(doc)} |")
    lines += ["", "A click usage error (an unknown option, a missing argument) also exits 2.",
              ""]
    return "\n".join(lines) + "\n"


PAGES = {"reference/cli.md": cli_page, "reference/methods.md": methods_page,
         "reference/environment.md": environment_page,
         "reference/exit-codes.md": exit_codes_page}


SETUP_CFG = Path(__file__).resolve().parents[2] / "setup.cfg"
EXTRAS_MARK = "<!-- extras: setup.cfg -->"


def extras(setup_cfg: Path | None = None) -> dict[str, tuple[list[str], str]]:
    """{extra: (the distributions it brings, what it is for)} of setup.cfg's
    [options.extras_require], in its order; what it is for is the comment above it."""
    setup_cfg = setup_cfg or SETUP_CFG
    parser = configparser.ConfigParser()
    parser.read(setup_cfg, encoding="utf-8")
    declared = {name: [re.split(r"[<>=!~; ]", line.strip(), maxsplit=1)[0]
                       for line in value.splitlines() if line.strip()]
                for name, value in parser["options.extras_require"].items()}
    comments: dict[str, str] = {}
    section, comment = False, []
    for line in setup_cfg.read_text(encoding="utf-8").splitlines():
        if line.startswith("["):
            section = line.strip() == "[options.extras_require]"
            comment = []
        elif section and line.startswith("#"):
            comment.append(line.lstrip("#").strip())
        elif section and (found := re.match(r"([A-Za-z0-9_-]+)\s*=", line)):
            comments[found.group(1)] = " ".join(comment)
            comment = []
        elif section and not line.startswith((" ", "\t")):
            comment = []
    return {name: (brings, comments.get(name, "")) for name, brings in declared.items()}


def extras_table() -> str:
    """The install page's table of the extras."""
    lines = ["| extra | brings | for |", "|---|---|---|"]
    for name, (brings, what) in extras().items():
        if not what:
            log.warning("setup.cfg: the extra %s has no comment above it saying what it is "
                        "for", name)
        lines.append(f"| `{name}` | {cell(', '.join(brings))} | {cell(what)} |")
    return "\n".join(lines)


def on_page_markdown(markdown: str, page: Page, **_: Any) -> str:
    """The install page's extras table, generated where the page marks it."""
    if EXTRAS_MARK in markdown:
        return markdown.replace(EXTRAS_MARK, extras_table())
    return markdown


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the generated pages to the site."""
    for path, make in PAGES.items():
        files.append(File.generated(config, path, content=make()))
    return files
