"""`nuggetizer doctor`: what a run needs, checked before anything is spent. The version and
the extras installed; each assessor built from the same options a run takes, asked one short
question (a few tokens; `--no-call` skips it) and the request adaptations its server taught an
earlier run (kept in the cache); a track's files, there and readable; the cache's place, that
it can be written there, and the room left on its disk; the environment variables set.

Each check prints one line, `ok`, `warn` or `fail`, with the fix; the exit code is that of the
worst (errors.EXIT_CODES: a missing file or a bad option 2, an assessor that does not answer 1,
warnings 0, or 1 with --strict).
"""

from __future__ import annotations

import os
import platform
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from nuggetizer import __version__
from nuggetizer.assessors.protocol import Request
from nuggetizer.cli.common import assessor_options
from nuggetizer.environment import VARIABLES
from nuggetizer.errors import EXIT_WARNINGS, NuggetizerError
from nuggetizer.places import default_cache_path

if TYPE_CHECKING:
    from nuggetizer.assessors.base import Assessor
    from nuggetizer.plan.track import Track

DISTRIBUTION = "trec-nuggetizer"
PROBE = Request(messages=(("user", 'Reply with {"answer": "OK"}.'),), max_tokens=16,
                schema={"type": "object", "properties": {"answer": {"type": "string"}},
                        "required": ["answer"]})
PROBE_SECONDS = 120.0
LOW_DISK = 1 << 30  # bytes: less room than this on the cache's disk is a warning


@dataclass(frozen=True)
class Check:
    """One line of the doctor's report; `code` is the exit code a failure stands for."""

    status: str  # ok | warn | fail
    what: str
    detail: str
    code: int = 0

    def line(self) -> str:
        return f"{self.status:>4}  {self.what}: {self.detail}"


def installed() -> Iterator[Check]:
    """The version, Python, and the optional libraries each extra brings."""
    import importlib.metadata

    yield Check("ok", "nuggetizer", f"{__version__} on Python {platform.python_version()} "
                f"({platform.machine()})")
    try:
        requires = importlib.metadata.requires(DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:
        return
    extras: dict[str, list[str]] = {}
    for requirement in requires:
        if "extra ==" not in requirement:
            continue
        name = requirement.split(";")[0].split("[")[0]
        for sep in "<>=!~ ":
            name = name.split(sep)[0]
        extra = requirement.split("extra ==")[1].strip().strip("'\"")
        extras.setdefault(extra, []).append(name)
    have = [e for e in sorted(extras) if all(_has(n) for n in extras[e])]
    lack = [e for e in sorted(extras) if e not in have and e not in ("test", "docs")]
    yield Check("ok", "extras", f"installed: {', '.join(have) or 'none'}; not installed: "
                + (", ".join(f"{e} (pip install '{DISTRIBUTION}[{e}]')" for e in lack)
                   or "none"))


def _has(distribution: str) -> bool:
    import importlib.metadata

    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


async def _probe(assessor: Assessor, call: bool) -> tuple[str, dict[str, Any]]:
    """One short question with a tiny JSON schema to the backend itself (no cache, no
    retries), closed afterwards: the answer's start and the adaptations it newly learned (kept
    in the cache, as a run keeps them). Nothing is asked when not `call`."""
    import asyncio

    try:
        if not call:
            return "", {}
        before = dict(getattr(assessor.backend, "adapted", None) or {})
        options = assessor.options
        completion = await asyncio.wait_for(assessor.backend.complete(PROBE), PROBE_SECONDS)
        assessor.learned(options)
        learned = dict(getattr(assessor.backend, "adapted", None) or {})
        new = {k: v for k, v in learned.items() if before.get(k) != v}
        return f"answered {completion.text.strip()[:40]!r} ({completion.model})", new
    finally:
        await assessor.aclose()


def assessor_checks(spec: str, options: dict[str, Any], call: bool) -> Iterator[Check]:
    """The assessor `spec` built as a run builds it, its remembered adaptations, and (when
    `call`) one short question."""
    import asyncio

    from nuggetizer.run.factories import make_one_assessor

    what = f"assessor {spec}"
    try:
        assessor = make_one_assessor({**options, "assessor_spec": spec})
        assessor.recall()
    except NuggetizerError as exc:
        yield Check("fail", what, str(exc), exc.exit_code)
        return
    remembered = dict(getattr(assessor.backend, "adapted", None) or {})
    yield Check("ok", what, f"built ({assessor.endpoint}); adaptations remembered from "
                f"earlier runs: {remembered or 'none'}")
    try:  # a backend that needs a key asks for it at its first call: say so here, unasked
        getattr(assessor.backend, "api_key", None)
    except NuggetizerError as exc:
        yield Check("fail", f"{what} key", str(exc), exc.exit_code)
        call = False
    try:
        answer, new = asyncio.run(_probe(assessor, call))
    except Exception as exc:  # whatever the backend raises is the answer to report
        yield Check("fail", f"{what} answers", f"{type(exc).__name__}: {exc}", 1)
        return
    if call:
        yield Check("ok", f"{what} answers", answer + (
            f"; adapted to its server (kept for the run): {new}" if new else ""))


def track_files(track: Track) -> list[tuple[str, Path]]:
    """(role, path) of every file a track names."""
    named: list[tuple[str, Path | None]] = [
        ("topics", track.topics), ("qrels", track.qrels), ("corpus", track.corpus),
        ("key", track.key), *(("run", p) for p in track.runs),
        *(("retrieval run", p) for p in track.retrieval_runs),
        *(("docs run", p) for p in track.docs_runs),
        *((f"[{name}] key", p) for name, p in track.method_keys.items())]
    return [(role, path) for role, path in named if path is not None]


def file_checks(name: str) -> tuple[Track | None, list[Check]]:
    """The track `name` read, and each of its files there and readable (the topics parsed)."""
    from nuggetizer.formats.topics import read_topics
    from nuggetizer.plan.track import load_track

    try:
        track = load_track(name)
    except NuggetizerError as exc:
        return None, [Check("fail", f"track {name}", str(exc), exc.exit_code)]
    methods = track.method_list()
    named = f"method {methods[0]}" if len(methods) == 1 else f"methods {', '.join(methods)}"
    relevance = "; relevance graded first" if track.relevance is not None else ""
    checks = [Check("ok", f"track {name}", f"{track.name}: {named}{relevance}")]
    for role, path in track_files(track):
        if not path.is_file() or not os.access(path, os.R_OK):
            checks.append(Check("fail", role, f"{path}: not found or not readable", 2))
        elif role == "topics":
            try:
                checks.append(Check("ok", role, f"{path} ({len(read_topics(path))} topics)"))
            except NuggetizerError as exc:
                checks.append(Check("fail", role, str(exc), exc.exit_code))
        else:
            checks.append(Check("ok", role, f"{path} ({path.stat().st_size:,} bytes)"))
    return track, checks


def cache_checks(path: Path | None, off: bool) -> Iterator[Check]:
    """Where the LLM cache is, that it can be written, and the room left on its disk."""
    if off:
        yield Check("warn", "cache", "off (--no-cache): a rerun calls the LLM again")
        return
    path = path or default_cache_path()
    folder = next((p for p in (path.parent, *path.parent.parents) if p.exists()), Path("/"))
    if (path.exists() and not os.access(path, os.W_OK)) or not os.access(folder, os.W_OK):
        yield Check("fail", "cache", f"{path}: cannot be written there: set --cache or "
                    "$NUGGETIZER_CACHE to a writable file", 2)
        return
    size = f"{path.stat().st_size:,} bytes" if path.exists() else "not made yet"
    free = shutil.disk_usage(folder).free
    status = "ok" if free >= LOW_DISK else "warn"
    yield Check(status, "cache", f"{path} ({size}; {free / 2**30:.1f} GiB free on its disk)")


def environment_checks() -> Iterator[Check]:
    """The declared environment variables that are set (an API key's value is not shown)."""
    for variable in VARIABLES:
        value = os.environ.get(variable.name)
        if value is not None:
            shown = "set" if "KEY" in variable.name or "SECRET" in variable.name else value
            yield Check("ok", f"${variable.name}", shown)


@click.command("doctor")
@click.option("--track", default=None, metavar="NAME|FILE",
              help="check this track config and every file it names (and take its assessors "
                   "when --assessor is not given)")
@click.option("--no-call", is_flag=True,
              help="do not ask the assessor anything (else one short question each, a few "
                   "tokens)")
@click.option("--strict", is_flag=True, help="exit 1 when there are warnings")
@assessor_options
def doctor_command(track: str | None, no_call: bool, strict: bool, **options: Any) -> None:
    """Check what a run needs before anything is spent: the install, each assessor (one short
    question; the adaptations it learned), a track's files, the cache's place."""
    from nuggetizer.run.factories import DEFAULT_ASSESSOR

    checks = list(installed())
    loaded, found = file_checks(track) if track else (None, [])
    checks += found
    checks += cache_checks(options["cache_path"], options["no_cache"])  # before it is made
    specs = list(options["assessor_spec"] or ())
    if not specs and loaded is not None:
        specs = loaded.assessors or ([loaded.assessor] if loaded.assessor else [])
    for spec in specs or [DEFAULT_ASSESSOR]:
        checks += assessor_checks(spec, options, call=not no_call)
    checks += environment_checks()
    for check in checks:
        click.echo(check.line())
    failed = [c for c in checks if c.status == "fail"]
    warned = [c for c in checks if c.status == "warn"]
    click.echo(f"doctor: {len(failed)} failed, {len(warned)} warnings, "
               f"{len(checks) - len(failed) - len(warned)} ok", err=True)
    if failed:
        raise click.exceptions.Exit(max(c.code for c in failed) or 1)
    if warned and strict:
        raise click.exceptions.Exit(EXIT_WARNINGS)
