"""`nuggetizer methods`: every registered method (or those named) described from its
declarations: its measures with their descriptions and rules, its settings with their
defaults and help (interface/describe.py)."""

from __future__ import annotations

import json

import click


@click.command("methods")
@click.argument("names", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="one JSON object per method, a line each")
def methods_command(names: tuple[str, ...], as_json: bool) -> None:
    """Describe the registered methods (or those NAMES): measures and settings."""
    from nuggetizer.interface.describe import describe, description
    from nuggetizer.interface.registry import method_class, method_names

    classes = [method_class(name) for name in (names or method_names())]
    if as_json:
        for cls in classes:
            click.echo(json.dumps(description(cls), ensure_ascii=False))
        return
    click.echo("\n".join(describe(cls) for cls in classes), nl=False)
