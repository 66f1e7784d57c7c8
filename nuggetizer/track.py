"""Track configs: TOML files naming a track's topics, corpus, qrels, runs and method settings."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from nuggetizer.errors import ConfigError
from nuggetizer.keys.base import METHOD_NAMES


class Track(BaseModel):
    """A track config with every path resolved against the config file's folder."""

    model_config = ConfigDict(extra="forbid")
    name: str
    method: str = "nuggets"
    topics: Path
    qrels: Path | None = None  # required by the nuggets method
    corpus: Path | None = None  # required by the nuggets method
    runs: list[Path] = []
    retrieval_runs: list[Path] = []  # TREC runs (crux, udcg)
    docs_runs: list[Path] = []  # kpr/udcg: the runs whose passages a key is built from
    depth: int | None = None  # passages of docs_run per topic
    allow_missing: bool = False  # retrieved passages missing from the corpus stay unjudged
    assessor: str | None = None
    nuggets: dict[str, Any] = {}  # settings of keys/nuggets.py NuggetConfig
    crux: dict[str, Any] = {}  # settings of keys/crux.py CruxConfig
    kpr: dict[str, Any] = {}
    udcg: dict[str, Any] = {}

    def settings(self) -> dict[str, Any]:
        """The `[nuggets]`/`[crux]`/`[kpr]`/`[udcg]` table of the track's method."""
        return dict(getattr(self, self.method))


def builtin_tracks() -> list[str]:
    """Names of the tracks shipped with the package."""
    root = resources.files("nuggetizer.tracks")
    return sorted(p.name for p in root.iterdir() if p.joinpath("track.toml").is_file())


def track_path(name_or_file: str) -> Path:
    """The config file for a builtin track name or a path to a TOML file."""
    candidate = Path(name_or_file)
    if candidate.is_file():
        return candidate
    if candidate.is_dir() and (candidate / "track.toml").is_file():
        return candidate / "track.toml"
    builtin = resources.files("nuggetizer.tracks").joinpath(name_or_file, "track.toml")
    if builtin.is_file():
        return Path(str(builtin))
    known = ", ".join(builtin_tracks()) or "none"
    raise ConfigError(
        f"no track {name_or_file!r}: give a track.toml file or a builtin name ({known})"
    )


def load_track(name_or_file: str) -> Track:
    """Read and validate a track config; relative paths are taken from the config's folder."""
    path = track_path(name_or_file)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    try:
        track = Track.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigError(f"{path}: {problems}") from exc
    if track.method not in METHOD_NAMES:
        raise ConfigError(f"{path}: method {track.method!r} is not known (use one of "
                          f"{', '.join(METHOD_NAMES)})")
    from nuggetizer.method_flow import make_method  # the method's own settings check

    try:
        make_method(track.method, track.settings())
    except ConfigError as exc:
        raise ConfigError(f"{path}: [{track.method}] {exc}") from exc
    if track.method == "nuggets" and (track.qrels is None or track.corpus is None):
        raise ConfigError(f"{path}: method 'nuggets' needs qrels and corpus")
    base = path.parent
    track.topics = (base / track.topics).resolve()
    track.qrels = (base / track.qrels).resolve() if track.qrels is not None else None
    track.corpus = (base / track.corpus).resolve() if track.corpus is not None else None
    track.docs_runs = [(base / r).resolve() for r in track.docs_runs]
    track.runs = [(base / r).resolve() for r in track.runs]
    track.retrieval_runs = [(base / r).resolve() for r in track.retrieval_runs]
    return track
