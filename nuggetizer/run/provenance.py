"""Provenance blocks recorded with every output: who judged, with which prompts, when."""

from __future__ import annotations

import functools
import json
import platform
import threading
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from nuggetizer import __version__
from nuggetizer.formats.digests import INPUT_HASH, digest_file, known
from nuggetizer.formats.writing import write_text_atomic
from nuggetizer.templates import load_prompt

# Keys that must match for a journal written earlier to be resumed.
IDENTITY_KEYS = ("assessor", "model", "temperature", "templates", "config")


@functools.cache  # read once per process: provenance is stamped on every unit and request
def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def provenance(
    assessor_info: dict | None, prompts: tuple[str, ...], *, config: dict | None = None,
    track: str | None = None, prompt_dir: Path | None = None,
) -> dict:
    """A provenance block for an output made with `prompts` (from `prompt_dir` when given,
    else the shipped ones) by the given assessor."""
    block: dict = dict(assessor_info or {})
    block["templates"] = {name: load_prompt(name, prompt_dir).sha256 for name in prompts}
    if config is not None:
        block["config"] = config
    if track is not None:
        block["track"] = track
    block["versions"] = {
        "nuggetizer": __version__,
        "python": platform.python_version(),
        "openai": _version("openai"),
        "llama_cpp_python": _version("llama_cpp_python"),
    }
    block["created"] = datetime.now(UTC).isoformat(timespec="seconds")
    return block


def same_identity(old: dict | None, new: dict) -> bool:
    """Whether a journal record was made the same way as the work about to resume it."""
    old = old or {}
    return all(old.get(k) == new.get(k) for k in IDENTITY_KEYS)


@functools.lru_cache(maxsize=4096)
def _hashed(path: str, mtime_ns: int, size: int) -> tuple[str, bytes]:
    """(digest, first line) of an input file read here (cached while the file is unchanged:
    the tables of one command list the same inputs)."""
    return digest_file(path)


def input_entry(path: Path) -> dict:
    """A sidecar's entry for an input: its path, BLAKE3 digest (of the bytes a reader just
    read, formats/digests.py, else read here) and the provenance of its first line."""
    stat = path.stat()
    digest, first = known(path, stat) or _hashed(str(path), stat.st_mtime_ns, stat.st_size)
    try:
        head = json.loads(first) if first.strip() else None
    except ValueError:
        head = None
    # a file of one JSON array (a narratives file) or of other values has no provenance line
    made_with = head.get("provenance") if isinstance(head, dict) else None
    return {"path": str(path), INPUT_HASH: digest, "provenance": made_with}


def hash_ahead(inputs: Sequence[Path]) -> threading.Thread:
    """Hash the inputs a sidecar will list in a thread of their own while the caller works
    (reading and hashing release the GIL: on a second core this is free), so that
    `write_sidecar` finds them done; a file that changes or cannot be read meanwhile is
    simply hashed again (or refused) there."""

    def run() -> None:
        for path in inputs:
            try:
                stat = path.stat()
                if known(path, stat) is None:
                    _hashed(str(path), stat.st_mtime_ns, stat.st_size)
            except (OSError, ValueError):
                continue

    thread = threading.Thread(target=run, name="hash-inputs", daemon=True)
    thread.start()
    return thread


def beside(output: Path, name: str, folder: bool | None = None) -> Path:
    """`OUTPUT.NAME` beside an output file, `NAME` inside an output folder. `folder`: whether
    the output is a folder (None: a folder that exists, or a name without a suffix)."""
    if folder is None:
        folder = output.is_dir() or not output.suffix
    if folder:
        return output / name
    return output.with_name(f"{output.name}.{name}")


def usage_path(output: Path, folder: bool | None = None) -> Path:
    """Where a step's token usage is kept: `OUTPUT.usage.json` beside an output file,
    `usage.json` inside an output folder (one judgment file per run)."""
    return beside(output, "usage.json", folder)


def usage_of_input(path: Path) -> dict | None:
    """The usage recorded for the step that made the input `path`, if any (beside it, else
    the `usage.json` of its folder, for a judgment file)."""
    for candidate in (path.with_name(path.name + ".usage.json"), path.parent / "usage.json"):
        if candidate.is_file():
            return read_json_object(candidate)
    return None


def read_json_object(path: Path) -> dict | None:
    """The JSON object in `path`; None when there is none or it cannot be read."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def usage_steps(record: dict) -> dict[str, dict]:
    """step -> usage of a usage record (run/usage.py): its own step's, then those of the
    steps that made its inputs (`inputs`: the grading of a graded pool, for its key)."""
    steps: dict[str, dict] = {}
    if isinstance(record.get("usage"), dict):
        steps[str(record.get("step"))] = record["usage"]
    inputs = record.get("inputs")
    for step, usage in (inputs.items() if isinstance(inputs, dict) else ()):
        if isinstance(usage, dict):
            steps.setdefault(str(step), usage)
    return steps


def write_sidecar(output: Path | Sequence[Path], inputs: list[Path],
                  left_out: Mapping[str, int] | None = None,
                  declared: Mapping[str, Any] | None = None) -> None:
    """Record beside an output (a TSV, graded qrels) which inputs (with hashes and provenance)
    it was made from, the token usage of the steps that made it and them (`usage`, one entry
    per step) and what its scores leave out (`left_out`: e.g. {"answers with nothing
    judged": 2}), if anything; `declared`: what the output declares of itself (graded qrels:
    their `scale`). `output`: one output, or several made of the same inputs (a leaderboard
    and its per-topic table): the inputs' entries are made once, and the text once where the
    blocks agree (150 judgment files each listing their provenance: 220 KB of JSON)."""
    outputs = [output] if isinstance(output, Path) else list(output)
    entries = [input_entry(path) for path in inputs]
    inputs_usage: dict[str, dict] = {}
    for path in inputs:
        for step, counters in usage_steps(usage_of_input(path) or {}).items():
            inputs_usage.setdefault(step, counters)
    stamp = provenance(None, ())
    last: tuple[dict, str] | None = None
    for out in outputs:
        # the step that made the output first
        usage = usage_steps(read_json_object(out.with_name(out.name + ".usage.json")) or {})
        for step, counters in inputs_usage.items():
            usage.setdefault(step, counters)
        block = {"inputs": entries, **(declared or {}), **stamp}
        if usage:
            block["usage"] = usage
        if left_out:
            block["left_out"] = dict(sorted(left_out.items()))
        if last is None or last[0] != block:
            last = block, json.dumps(block, indent=2, ensure_ascii=False) + "\n"
        write_text_atomic(out.with_name(out.name + ".provenance.json"), last[1])
