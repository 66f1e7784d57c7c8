"""A registered method described from its declarations alone (interface/declare.py): what it
judges and reads, its measures with their descriptions and rules, its settings with their
defaults, help, choices and flags. `nuggetizer methods` prints it."""

from __future__ import annotations

import inspect
import textwrap
from typing import Any

from nuggetizer.interface.base import AnswerKeyMethod
from nuggetizer.interface.declare import Setting, settings_of

WIDTH = 100
INDENT = " " * 6


def summary(cls: type[AnswerKeyMethod]) -> str:
    """The first paragraph of the method class's docstring, on one line."""
    doc = inspect.getdoc(cls) or ""
    return " ".join(doc.split("\n\n", 1)[0].split())


def _reads(cls: type[AnswerKeyMethod]) -> str:
    if not cls.judging.needs_key:
        return "no answer key (judges without one)"
    needs = ", ".join(sorted(cls.judging.needs)) or "the topics only"
    optional = cls.judging.optional
    extra = f" (optional: {', '.join(sorted(optional))})" if optional else ""
    return f"key built from {needs}{extra}, written as {cls.judging.key_file}"


def _flag(setting: Setting) -> str:
    if not setting.flag:
        return ""
    return f" [{setting.flag} on {', '.join(setting.commands) or 'no command'}]"


def _item(head: str, text: str) -> list[str]:
    """`head` then `text` wrapped under it, indented."""
    return [f"    {head}", *textwrap.wrap(text, WIDTH, initial_indent=INDENT,
                                          subsequent_indent=INDENT, break_on_hyphens=False)]


def describe(cls: type[AnswerKeyMethod]) -> str:
    """The method as `nuggetizer methods NAME` prints it."""
    lines = [f"{cls.name}: {summary(cls)}",
             f"  judges: {', '.join(cls.targets)}; {_reads(cls)}; ranked by {cls.primary}",
             "  measures:"]
    for m in cls.declared:
        lines += _item(m.name, f"{m.description}. Rule: {m.rule()}.")
    settings = settings_of(cls.config_type)
    lines.append("  settings (--set NAME=VALUE):" if settings else "  settings: none")
    for s in settings:
        choices = f" One of: {', '.join(s.choices)}." if s.choices else ""
        lines += _item(f"{s.name}={s.default!r} ({s.kind})", f"{s.help}.{choices}{_flag(s)}")
    return "\n".join(lines) + "\n"


def description(cls: type[AnswerKeyMethod]) -> dict[str, Any]:
    """The same as data (`nuggetizer methods --json`)."""
    return {
        "name": cls.name, "summary": summary(cls), "targets": list(cls.targets),
        "needs_key": cls.judging.needs_key, "key_needs": sorted(cls.judging.needs),
        "key_reads": sorted(cls.judging.optional), "primary": cls.primary,
        "measures": [{"name": m.name, "description": m.description, "missing": m.missing,
                      "answered_only": m.answered_only, "diagnostic": m.diagnostic,
                      "higher_better": m.higher_better} for m in cls.declared],
        "settings": [{"name": s.name, "default": s.default, "type": s.kind, "help": s.help,
                      "choices": list(s.choices) if s.choices else None, "flag": s.flag,
                      "commands": list(s.commands)} for s in settings_of(cls.config_type)],
    }
