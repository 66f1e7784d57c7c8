"""Track configs: TOML files naming a track's topics, corpus, qrels, runs and method settings."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from nuggetizer.errors import ConfigError
from nuggetizer.keys.nuggets import NuggetConfig


class NuggetSettings(BaseModel):
    """The `[nuggets]` table of a track config."""

    model_config = ConfigDict(extra="forbid")
    min_grade: int = 1
    window: int = 10
    max_nuggets: int = 30
    keep: int = 20
    label_batch: int = 10
    assign_batch: int = 10

    def config(self) -> NuggetConfig:
        """The method config these settings describe."""
        return NuggetConfig(**self.model_dump())


class Track(BaseModel):
    """A track config with every path resolved against the config file's folder."""

    model_config = ConfigDict(extra="forbid")
    name: str
    method: str = "nuggets"
    topics: Path
    qrels: Path
    corpus: Path
    runs: list[Path] = []
    assessor: str | None = None
    nuggets: NuggetSettings = NuggetSettings()


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
    if track.method != "nuggets":
        raise ConfigError(f"{path}: method {track.method!r} is not known (use 'nuggets')")
    base = path.parent
    track.topics = (base / track.topics).resolve()
    track.qrels = (base / track.qrels).resolve()
    track.corpus = (base / track.corpus).resolve()
    track.runs = [(base / r).resolve() for r in track.runs]
    return track
