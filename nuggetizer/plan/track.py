"""Track configs: TOML files naming a track's topics, corpus, qrels (or an existing answer
key), runs and method settings (a table named after the method, e.g. `[nuggets]`).

A `[relevance]` table builds the keys without qrels: `evaluate` first grades the passages the
runs list (UMBRELA, relevance/grade.py) into `OUT/relevance.qrels`, then builds the keys from
those graded >= the method's `min_grade`; a `qrels` file, if also given, is kept and only its
holes are graded. `scale = "0-4"` grades on UMBRELA's sub-narrative scale (TREC RAG 2026) with
the sub-narratives of `narratives` or `sub_narratives_from` (a nuggets file); the keys are then
built from the passages graded >= 2 unless the method's table sets `min_grade`, and
`map_sub_narratives = true` maps each nugget built to one of them (mapped_sub_narrative).

`methods = ["nuggets", "support"]` (instead of `method`) evaluates the same runs with several
methods, each with its own table: `evaluate` writes each method's key, judgments and tables
into `OUT/METHOD/` and a combined leaderboard of every measure into `OUT`. A method's table may
name that method's own key (`key = "rubrics.jsonl"` under `[rubrics]`), beside a key the others
build.

`profile = "ragdoll"` scores (and judges battles) as castorini's RAGDoll, the TREC RAG 2026
scorer, does (interface/profile.py); evaluate's --profile wins.

`assessors = ["openai:a", "openai:b", "openai:c"]` (instead of `assessor`) judges with an
ensemble, `samples = N` asks each assessor N times, `aggregate` chooses how the votes combine
(assessors/aggregation.py); the command line's --assessor, --samples, --aggregate win."""

from __future__ import annotations

import dataclasses
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from nuggetizer.assessors.base import DEFAULT_REASKS
from nuggetizer.errors import ConfigError
from nuggetizer.interface.registry import DEFAULT_METHOD, make_method, method_class, method_names
from nuggetizer.relevance.scales import DEFAULT_SCALE, SCALES


class Relevance(BaseModel):
    """The `[relevance]` table: how the pool is made and graded."""

    model_config = ConfigDict(extra="forbid")
    cited_only: bool = False  # pool only the references the answers' sentences cite
    depth: int = Field(20, ge=1)  # passages pooled per topic of each retrieval run
    reasks: int = Field(DEFAULT_REASKS, ge=0)
    allow_missing: bool = False  # pooled passages missing from the corpus stay unjudged
    scale: Literal["0-3", "0-4"] = "0-3"  # UMBRELA's scale (relevance/scales.py)
    narratives: Path | None = None  # 0-4: narratives with their sub_narratives
    sub_narratives_from: Path | None = None  # 0-4: nuggets with mapped_sub_narrative
    map_sub_narratives: bool = False  # nuggets built mapped to those sub-narratives


class TrackPrices(BaseModel):
    """The `[prices]` table: per million tokens, for `--dry-run` and the cost of what a run
    spends (--price-in/--price-out win); batch_* for --batch-api (the options win)."""

    model_config = ConfigDict(extra="forbid")
    input: float | None = Field(None, ge=0)
    output: float | None = Field(None, ge=0)
    batch_input: float | None = Field(None, ge=0)
    batch_output: float | None = Field(None, ge=0)
    batch_discount: float | None = Field(None, ge=0, le=1)


class Track(BaseModel):
    """A track config with every path resolved against the config file's folder."""

    model_config = ConfigDict(extra="forbid")
    name: str
    method: str = DEFAULT_METHOD
    methods: list[str] = []  # several methods on the same runs (each its own table)
    topics: Path
    qrels: Path | None = None  # where the method builds its keys from judged passages
    corpus: Path | None = None
    key: Path | None = None  # an existing answer key: evaluate judges and scores with it
    lenient: bool = False  # off-menu labels and key mismatches in files: unjudged, counted
    runs: list[Path] = []
    retrieval_runs: list[Path] = []  # TREC runs (crux, udcg)
    docs_runs: list[Path] = []  # kpr/udcg: the runs whose passages a key is built from
    depth: int | None = None  # passages of docs_run per topic
    allow_missing: bool = False  # retrieved passages missing from the corpus stay unjudged
    assessor: str | None = None
    assessors: list[str] = []  # an ensemble: every label voted on (guide: Ensembles)
    samples: int | None = Field(None, ge=1)  # answers asked of each assessor, voted on
    aggregate: Literal["majority", "median", "mean"] | None = None  # how votes combine
    # the scoring profile (interface/profile.py): the guideline's reading, or RAGDoll's numbers
    profile: Literal["guideline", "ragdoll"] = "guideline"
    relevance: Relevance | None = None  # grade the runs' pool instead of reading qrels
    prices: TrackPrices | None = None  # per million tokens, for evaluate --dry-run
    method_settings: dict[str, Any] = {}  # the table named after the method
    method_tables: dict[str, dict[str, Any]] = {}  # every method's table, by method name
    method_keys: dict[str, Path] = {}  # `key` of a method's own table, by method name

    def settings(self, name: str | None = None) -> dict[str, Any]:
        """The settings table of the track's (first) method, or of the method `name`."""
        if name is None or name == self.method:
            return dict(self.method_settings)
        return dict(self.method_tables.get(name, {}))

    def key_of(self, name: str) -> Path | None:
        """The key the method `name` judges with as given (its table's, else the track's)."""
        return self.method_keys.get(name, self.key)

    def method_list(self) -> list[str]:
        """The methods the track evaluates, the first's primary measure ranking the runs."""
        return list(self.methods) or [self.method]


def _check_method(track: Track, method: Any, path: Path, several: bool) -> None:
    """What one method of the track needs of it (with several, [relevance] serves the methods
    that build their keys from judged passages; the others judge without it)."""
    if track.relevance is not None:
        if track.key is not None:
            raise ConfigError(f"{path}: [relevance] builds the keys: give it or a `key` file, "
                              "not both")
        if "qrels" not in method.judging.reads and not (
                several and (not method.judging.needs_key or method.name in track.method_keys)):
            raise ConfigError(f"{path}: [relevance]: method {method.name!r} does not build "
                              "its keys from judged passages")
        if track.corpus is None or not (track.runs or track.retrieval_runs):
            raise ConfigError(f"{path}: [relevance] needs a corpus and runs to pool")
    if track.key_of(method.name) is None:
        missing = [n for n in ("qrels", "corpus") if n in method.judging.needs
                   and getattr(track, n) is None
                   and not (n == "qrels" and track.relevance is not None)]
        if missing:
            raise ConfigError(f"{path}: method {method.name!r} needs {' and '.join(missing)} "
                              "(or a `key` file to judge with)")


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
    tables = {name: data.pop(name) for name in method_names() if name in data}
    own_keys = {name: table.pop("key") for name, table in tables.items() if "key" in table}
    for name, value in own_keys.items():
        if not isinstance(value, str):
            raise ConfigError(f"{path}: [{name}] key: give the key file's path as a string")
    try:
        track = Track.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigError(f"{path}: {problems}") from exc
    if track.assessor is not None and track.assessors:
        raise ConfigError(f"{path}: give `assessor` (one) or `assessors` (an ensemble), not "
                          "both")
    if track.methods:
        if "method" in track.model_fields_set:
            raise ConfigError(f"{path}: give `method` (one) or `methods` (several), not both")
        if len(set(track.methods)) != len(track.methods):
            raise ConfigError(f"{path}: `methods` names a method twice")
        track.method = track.methods[0]
    names = track.method_list()
    for name in names:
        if name not in method_names():
            raise ConfigError(f"{path}: method {name!r} is not known (use one of "
                              f"{', '.join(method_names())})")
    track.method_settings = tables.get(track.method, {})
    track.method_tables = {name: tables.get(name, {}) for name in names}
    made = {}
    for name in names:
        try:
            made[name] = make_method(name, track.settings(name))  # the method's own check
        except ConfigError as exc:
            raise ConfigError(f"{path}: [{name}] {exc}") from exc
    track.method_keys = {name: Path(value) for name, value in own_keys.items()}
    keyed = [name for name in names if made[name].judging.needs_key and name not in own_keys]
    if track.key is not None and len(keyed) > 1:
        raise ConfigError(f"{path}: `key` is one method's answer key, and {', '.join(keyed)} "
                          "each judge with one: leave it out (each builds its own)")
    owners: dict[str, str] = {}
    for name in names:
        for measure in made[name].measures:
            other = owners.setdefault(measure, name)
            if other != name:
                raise ConfigError(f"{path}: methods {other} and {name} both have a measure "
                                  f"{measure!r}: evaluate them in two tracks")
    for name in names:
        _check_method(track, made[name], path, several=len(names) > 1)
    base = path.parent
    track.topics = (base / track.topics).resolve()
    for name in ("qrels", "corpus", "key"):
        value = getattr(track, name)
        setattr(track, name, (base / value).resolve() if value is not None else None)
    track.method_keys = {name: (base / p).resolve() for name, p in track.method_keys.items()}
    track.docs_runs = [(base / r).resolve() for r in track.docs_runs]
    track.runs = [(base / r).resolve() for r in track.runs]
    track.retrieval_runs = [(base / r).resolve() for r in track.retrieval_runs]
    if track.relevance is not None:
        _scale_relevance(track, track.relevance, base)
    return track


def _scale_relevance(track: Track, graded: Relevance, base: Path) -> None:
    """[relevance]'s files resolved; on a scale whose relevant grade is not today's default
    (0-4: 2), the keys are built from that grade unless a method's table sets min_grade."""
    for name in ("narratives", "sub_narratives_from"):
        value = getattr(graded, name)
        setattr(graded, name, (base / value).resolve() if value is not None else None)
    scale = SCALES[graded.scale]
    if scale.name == DEFAULT_SCALE:
        return
    for name, table in track.method_tables.items():
        settings = {f.name for f in dataclasses.fields(method_class(name).config_type)}
        if "min_grade" in settings and "min_grade" not in table:
            table["min_grade"] = scale.relevant
    track.method_settings = track.method_tables[track.method]
