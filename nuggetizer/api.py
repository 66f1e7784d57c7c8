"""The Python API, for researchers in notebooks: the same files, methods, assessors, steps
and score engine as the `nuggetizer` command, without a shell.

    from nuggetizer import api

    nuggets = api.method("nuggets")                      # any registered method, with settings
    judge = api.assessor("mock", cache=False)            # or "local", "openai:gpt-4o", ...
    keys = api.load_keys(nuggets, "nuggets.jsonl")
    api.judge(nuggets, keys, api.load_runs("run-a.jsonl", "run-b.jsonl"), judge, "judged/")
    scores = api.score(nuggets, "judged/", keys)
    scores.leaderboard()                                 # [{"run_id": ..., "V_strict": ...}]

`build_keys` and `judge` build a plan of the step (plan/steps.py) and run it live; build one
yourself to run it dry (count and price the calls, make none) or batched:

    plan = api.assign_plan(nuggets, keys, api.targets(nuggets, ["run-a.jsonl"]), "judged/")
    api.run(plan, judge, mode="dry")                     # then mode="live"

The steps are those of `flow/` (run/steps.py): they journal every finished unit (a second
call resumes), stamp provenance on every record and go through the assessor's cache. They
run on an event loop of their own in a background thread, so that they work the same in a
script and in a notebook (whose own loop is running).

Every function checks its arguments first (api_args.py): one of the wrong kind (arguments
swapped, a spec where an assessor goes, a list of records where keys go) is an ArgumentError
(a ConfigError and a TypeError) naming the argument and what it expected; a single path is
taken where a list of paths goes. An assessor is a context manager (`with`, or `async with`)
that closes it however the block ends.
"""

from __future__ import annotations

import asyncio
import importlib
import threading
from collections.abc import Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from nuggetizer import api_args as check
from nuggetizer.assessors import make_assessor
from nuggetizer.assessors.base import DEFAULT_REASKS, Assessor
from nuggetizer.assessors.ensemble import Ensemble
from nuggetizer.cache import Cache, default_cache_path
from nuggetizer.errors import ArgumentError, ConfigError, first_error
from nuggetizer.formats.answers import read_runs
from nuggetizer.formats.nuggets import add_queries, read_nuggets
from nuggetizer.formats.qrels import read_qrels
from nuggetizer.formats.topics import read_topics
from nuggetizer.formats.track_inputs import Demand, Wanted, read_passages, read_track_inputs
from nuggetizer.formats.trec_run import read_trec_runs
from nuggetizer.formats.writing import write_jsonl_atomic
from nuggetizer.interface.base import AnswerKeyMethod, KeyInput, Target
from nuggetizer.interface.registry import DEFAULT_METHOD, make_method, method_names
from nuggetizer.methods.nuggets.agentic import AgenticNuggets, Bounds
from nuggetizer.methods.rubrics.authoring import RubricAuthoring
from nuggetizer.names import AGENTIC_TOKENS, AGENTIC_TURNS, READ_LINES, READ_WORDS
from nuggetizer.plan.inputs import (
    answer_targets,
    cite_targets,
    cited_ids,
    context_targets,
    key_inputs,
    ranked_ids,
)
from nuggetizer.plan.steps import assign_plan, nuggetize_plan
from nuggetizer.run.execute import Mode, executor
from nuggetizer.run.progress import Summary
from nuggetizer.run.provenance import provenance
from nuggetizer.run.stages import Plan
from nuggetizer.scoring.engine import ScoreTable, read_judged, score_judged
from nuggetizer.scoring.tables import leaderboard_tsv, per_topic_tsv
from nuggetizer.search.base import Searcher
from nuggetizer.search.open import open_searcher
from nuggetizer.search.resolve import Resolved, references, resolve
from nuggetizer.types import Answer, Qrel, Topic

PathLike = str | Path
T = TypeVar("T")

__all__ = [
    "Plan", "Scores", "agentic_keys", "assessor", "assign_plan", "author_rubrics",
    "build_keys", "close", "judge", "load_judgments", "load_keys", "load_qrels", "load_runs",
    "load_topics", "method", "methods", "nuggetize_plan", "resolve_references", "run", "score",
    "searcher", "targets",
]


# --- files -----------------------------------------------------------------------------------

def load_topics(path: PathLike) -> dict[str, Topic]:
    """Topics (TSV `qid<TAB>text`, or JSONL) in file order: {qid: Topic}."""
    return read_topics(check.check_path(path, "path"))


def load_runs(*paths: PathLike, keep_unresolved: bool = False) -> dict[str, dict[str, Answer]]:
    """Answer runs (TREC RAG JSONL, or report runs): {run id: {qid: Answer}}."""
    given: Any = paths[0] if len(paths) == 1 and not check.is_path(paths[0]) else paths
    return read_runs(check.check_paths(given, "paths"), keep_unresolved=keep_unresolved)


def load_qrels(path: PathLike) -> list[Qrel]:
    """TREC qrels (`qid 0 docid grade`)."""
    return read_qrels(check.check_path(path, "path"))


def load_keys(method: AnswerKeyMethod, path: PathLike, lenient: bool = False) -> dict[str, Any]:
    """A method's key file, as the method reads it: {qid: key record}."""
    return check.check_method(method).read_keys(check.check_path(path, "path"), lenient)


def load_judgments(method: AnswerKeyMethod, *paths: PathLike, lenient: bool = False
                   ) -> list[Any]:
    """A method's judgment files (or folders of them), as the method reads its records."""
    return [j.record for j in read_judged(check.check_method(method),
                                          check.check_paths(paths, "paths"), lenient)]


# --- methods and assessors -------------------------------------------------------------------

def methods() -> list[str]:
    """The names of the registered methods (the default first)."""
    return method_names()


def method(name: str = DEFAULT_METHOD, *, profile: str | None = None,
           **settings: Any) -> AnswerKeyMethod:
    """The method `name` with its settings (e.g. `method("nuggets", keep=20)`), scoring under
    the scoring `profile` ("guideline", the default, or "ragdoll": castorini RAGDoll's
    numbers); ConfigError names an unknown method, setting or profile."""
    return make_method(check.check_text(name, "name", "a method name such as \"nuggets\""),
                       settings, profile)


def assessor(spec: str = "local", *, cache: PathLike | bool = True, **options: Any) -> Assessor:
    """An LLM assessor, as `--assessor SPEC` names it: `local` (the embedded model),
    `openai:MODEL` (with `base_url=`, `api_key=`), `vllm:MODEL`, `mock` (no model). `cache`:
    True the default cache ($NUGGETIZER_CACHE, else ~/.cache/nuggetizer/llm-cache.sqlite), a
    path that file, False none. Other options are those of `make_assessor` (temperature,
    max_tokens, concurrency, structured, ...). A context manager: `with api.assessor(...) as
    judge:` closes it however the block ends."""
    check.check_text(spec, "spec", "an assessor spec such as \"mock\" or \"openai:gpt-4o\"")
    if not isinstance(cache, bool):
        check.check_path(cache, "cache")
    store = None if cache is False else Cache(default_cache_path() if cache is True else cache)
    made = make_assessor(spec, cache=store, **options)
    made.closer = close  # its clients live on the API's loop: closed there
    return made


class _Loop:
    """One event loop in a daemon thread, shared by every step (an assessor's clients stay on
    the loop they were made on)."""

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.lock = threading.Lock()

    def run(self, work: Coroutine[Any, Any, T], judge: Assessor | None = None) -> T:
        with self.lock:
            if self.loop is None:
                self.loop = asyncio.new_event_loop()
                threading.Thread(target=self.loop.run_forever, daemon=True,
                                 name="nuggetizer-api").start()
        future = asyncio.run_coroutine_threadsafe(work, self.loop)
        try:
            return future.result()
        except KeyboardInterrupt:  # the calls in flight finish (their answers are cached)
            if judge is not None:
                judge.stop_new_calls()
            try:
                future.result()
            except Exception:  # noqa: BLE001 - the step says it was interrupted; we raise that
                pass
            raise
        except BaseExceptionGroup as group:  # a step's TaskGroup: raise the toolkit's error
            found = first_error(group)
            if found is None:
                raise
            raise found from group


_LOOP = _Loop()


def close(assessor: Assessor | Ensemble) -> None:
    """Close an assessor's backend (its connections; the embedded model's process)."""
    _LOOP.run(check.check_assessor(assessor).aclose())


# --- the steps -------------------------------------------------------------------------------

def _topics(topics: Mapping[str, Topic] | PathLike) -> Mapping[str, Topic]:
    if isinstance(topics, Mapping):
        return topics
    return read_topics(check.check_path(topics, "topics"))


def build_keys(method: AnswerKeyMethod, topics: Mapping[str, Topic] | PathLike,
               assessor: Assessor, out: PathLike, *, qrels: PathLike | None = None,
               corpus: PathLike | None = None, docs_runs: Sequence[PathLike] = (),
               depth: int | None = None, min_grade: int = 1) -> Summary:
    """Build every topic's key into the JSONL file `out` (an interrupted build resumes), from
    the judged passages of `qrels` (grade >= `min_grade`, else the method's `min_grade`
    setting), or the first `depth` passages of each of `docs_runs` (TREC run files), with
    their texts in `corpus`, as the method needs; its Summary."""
    check.check_method(method)
    check.check_assessor(assessor)
    out = check.check_path(out, "out")
    docs_runs = check.check_paths(docs_runs, "docs_runs")
    qrels = check.check_path(qrels, "qrels") if qrels is not None else None
    corpus = check.check_path(corpus, "corpus") if corpus is not None else None
    given = {"qrels": qrels, "corpus": corpus, "docs_runs": docs_runs or None}
    for need in sorted(method.judging.needs - {"reference"}):
        if given.get(need) is None:
            raise ConfigError(f"method {method.name} builds its keys from {need}: give {need}=")
    topic_map = _topics(topics)
    grade = getattr(method.config, "min_grade", None)
    lowest = int(grade) if grade is not None else min_grade
    read = read_track_inputs(Wanted(
        qrels=Path(qrels) if qrels else None, corpus=Path(corpus) if corpus else None,
        docs_runs=[Path(p) for p in docs_runs], depth=depth,
        passages=Demand(judged=lowest, docs_depth=depth)))
    inputs, skipped = key_inputs(topic_map, read, lowest,
                                 method.judging.skip_without_documents)
    summary: Summary = run(nuggetize_plan(method, inputs, Path(out), skipped), assessor)[0]
    return summary


def searcher(spec: str = "bm25", *, corpus: PathLike | None = None, index: str | None = None,
             cache: PathLike | bool = True) -> Searcher:
    """A corpus to search and read (nuggetizer/search/): `bm25`, a local BM25 index of the
    `corpus` file kept in the folder `index` (default: in the cache folder, built once), or the
    URL of castorini's search API with the `index` to search, its answers kept in `cache`."""
    kept = Cache(default_cache_path() if cache is True else cache) if cache else None
    return open_searcher(spec, corpus=Path(corpus) if corpus else None, index=index,
                         cache=kept)


def agentic_keys(topics: Mapping[str, Topic] | PathLike, searcher: Searcher,
                 assessor: Assessor, out: PathLike, *, max_turns: int = AGENTIC_TURNS,
                 max_tokens: int = AGENTIC_TOKENS, **settings: Any) -> Summary:
    """Nuggets made agentically (`nuggetize --agentic`): for each topic the model searches
    and reads with tools over `searcher`, within `max_turns` model calls and `max_tokens`
    tokens, then importance is labelled; `settings`: the nuggets method's. Resumable."""
    check.check_assessor(assessor)
    method = AgenticNuggets(make_method("nuggets", settings).config, searcher=searcher,
                            bounds=Bounds(max_turns, max_tokens))
    inputs = [KeyInput(qid=t.id, query=t.text) for t in _topics(topics).values()]
    summary: Summary = run(nuggetize_plan(method, inputs, check.check_path(out, "out")),
                           assessor)[0]
    return summary


def author_rubrics(nuggets: PathLike, assessor: Assessor, out: PathLike, *,
                   topics: Mapping[str, Topic] | PathLike | None = None,
                   reasks: int = DEFAULT_REASKS) -> Summary:
    """Rubrics authored from a nuggets file (`author-rubrics`, RAGDoll's author and mapping),
    in the ResearchRubrics shape, into `out`; `topics` give the queries a 2026 key lacks."""
    check.check_assessor(assessor)
    path = check.check_path(nuggets, "nuggets")
    keys = read_nuggets(path)
    add_queries(keys, path, _topics(topics) if topics is not None else None)
    method = RubricAuthoring(keys, str(path), make_method("rubrics", {"reasks": reasks}).config)
    inputs = [KeyInput(qid=q, query=k.query) for q, k in keys.items()]
    summary: Summary = run(nuggetize_plan(method, inputs, check.check_path(out, "out")),
                           assessor)[0]
    return summary


def resolve_references(runs: PathLike | Sequence[PathLike], searcher: Searcher,
                       out: PathLike, *, cited_only: bool = False, lines: int = READ_LINES,
                       words: int = READ_WORDS) -> Resolved:
    """The passages the runs reference, read from `searcher` and cut to `lines` then `words`,
    written to the corpus file `out` (`resolve-references`); what was read and not found."""
    answers = read_runs(check.check_paths(runs, "runs"))
    wanted = references((a for by_topic in answers.values() for a in by_topic.values()),
                        cited_only)
    stamp = provenance(None, (), config={"step": "resolve-references", "lines": lines,
                                         "words": words, "search": searcher.provenance()})
    resolved = _LOOP.run(resolve(searcher, wanted, lines=lines, words=words, stamp=stamp))
    write_jsonl_atomic(check.check_path(out, "out"), resolved.passages.values())
    return resolved


def targets(method: AnswerKeyMethod,
            runs: Mapping[str, Mapping[str, Answer]] | Iterable[PathLike] = (), *,
            retrieval_runs: Iterable[PathLike] = (), corpus: PathLike | None = None,
            depth: int | None = None, allow_missing: bool = False
            ) -> dict[str, dict[str, Target]]:
    """What the method judges: the answers of `runs` (as `load_runs` gives them, or run
    files; a method that reads the cited passages gets their texts from `corpus`), and the
    first `depth` passages (default: the method's) of each topic of `retrieval_runs` (TREC
    run files; their texts from `corpus`)."""
    check.check_method(method)
    runs = check.check_runs(runs)
    answers = runs if isinstance(runs, Mapping) else read_runs(
        runs, keep_unresolved=allow_missing and method.judging.citations)
    made = answer_targets(answers)
    where = Path(corpus) if corpus else None
    if method.judging.citations:
        every = not method.first_citation_only
        cite_targets(made, read_passages(where, cited_ids(made, every)), allow_missing, every)
    contexts = check.check_paths(retrieval_runs, "retrieval_runs")
    if contexts:
        if where is None:
            raise ConfigError("retrieval runs need corpus= for the passage texts")
        read, k = read_trec_runs(contexts), depth or method.depth
        made.update(context_targets(read, read_passages(where, ranked_ids(read, k)), k,
                                    allow_missing))
    return made


def judge(method: AnswerKeyMethod, keys: Mapping[str, Any] | PathLike | None,
          runs: Mapping[str, Mapping[str, Answer]] | Iterable[PathLike], assessor: Assessor,
          out: PathLike, *, retrieval_runs: Iterable[PathLike] = (),
          corpus: PathLike | None = None, depth: int | None = None,
          allow_missing: bool = False) -> Summary:
    """Judge every answer of `runs` (and retrieved context of `retrieval_runs`, see
    `targets`) against its topic's key (`keys` as `load_keys` gives them, or the key file;
    None for a method without a key) into the folder `out`, one JSONL file per run
    (resumable); targets of topics outside the key are skipped and counted. Its Summary."""
    check.check_method(method)
    keys = check.check_keys(keys)
    runs = check.check_runs(runs)
    check.check_assessor(assessor)
    out = check.check_path(out, "out")
    if isinstance(keys, Path):
        keys = method.read_keys(keys)
    if keys is None and method.judging.needs_key:
        raise ConfigError(f"method {method.name} judges against a key: give keys")
    made = targets(method, runs, retrieval_runs=retrieval_runs, corpus=corpus, depth=depth,
                   allow_missing=allow_missing)
    if not made:
        raise ConfigError("nothing to judge: give runs (answers) or retrieval_runs")
    summary: Summary = run(assign_plan(method, keys, made, Path(out)), assessor)[0]
    return summary


def run(plan: Plan, assessor: Assessor, mode: Mode = "live", **options: Any) -> list[Any]:
    """Run a plan of a step (`nuggetize_plan`, `assign_plan`: plan/steps.py) with the assessor:
    `live`, `dry` (every prompt rendered and counted, priced at the assessor's prices, said on
    stderr; nothing called or written) or `batch` (rounds through the Batch API; `folder=`
    holds its state). What each stage returned (a Summary; None where a dry run had nothing
    to count). `options`: the dry run's (tokenizer, completion_ratio) and the batch's
    (batch_poll, batch_write_only)."""
    if not isinstance(plan, Plan):
        raise ArgumentError("argument plan: expected a plan such as api.assign_plan(...), "
                            f"got {type(plan).__name__}")
    check.check_assessor(assessor)
    if mode not in ("live", "dry", "batch"):
        raise ArgumentError(f"argument mode: expected live, dry or batch, got {mode!r}")
    folder = options.pop("folder", None)
    runner = executor(mode, assessor, Path(folder) if folder else None, options)
    return _LOOP.run(runner.run(plan), assessor)


# --- scores ----------------------------------------------------------------------------------

@dataclass
class Scores:
    """A score table: every run's per-topic measures and means (scoring/engine.py's rules)."""

    table: ScoreTable

    @property
    def measures(self) -> tuple[str, ...]:
        return self.table.measures

    @property
    def primary(self) -> str:
        return self.table.primary

    def ranking(self) -> list[str]:
        """Run ids by the primary measure, best first."""
        return self.table.ranking()

    def leaderboard(self) -> list[dict[str, Any]]:
        """One row per run in ranking order: `run_id` and the mean of each measure."""
        return [{"run_id": run, **{m: self.table.means[run][m] for m in self.measures
                                   if m in self.table.means[run]}} for run in self.ranking()]

    def rows(self) -> list[dict[str, Any]]:
        """Long form, one row per (run, topic, measure): `run_id topic_id measure value`."""
        return [{"run_id": run, "topic_id": qid, "measure": m, "value": row[m]}
                for run in self.ranking() for qid, row in self.table.per_topic[run].items()
                for m in self.measures if m in row]

    def to_tsv(self, per_topic: bool = False) -> str:
        """The leaderboard TSV `score -o` writes (per_topic: the `--per-topic` TSV)."""
        return per_topic_tsv(self.table) if per_topic else leaderboard_tsv(self.table)

    def to_pandas(self, per_topic: bool = False) -> Any:
        """The leaderboard (or the long per-topic rows) as a pandas DataFrame (pandas is not a
        dependency: ConfigError when it is not installed)."""
        try:
            pandas = importlib.import_module("pandas")
        except ImportError:
            raise ConfigError("to_pandas needs pandas: pip install pandas (or use .rows(), "
                              ".leaderboard())") from None
        return pandas.DataFrame(self.rows() if per_topic else self.leaderboard())


def score(method: AnswerKeyMethod, judgments: PathLike | Sequence[PathLike],
          keys: Mapping[str, Any] | PathLike | None = None, *,
          topics: Iterable[str] | PathLike | None = None, lenient: bool = False) -> Scores:
    """Score judgment files (or folders of them) against `keys` (a mapping or the key file),
    whose topics are the universe (a topic a run did not answer scores 0); without keys, the
    topics of `topics` (ids, or a topics file), else every topic judged."""
    check.check_method(method)
    paths = check.check_paths(judgments, "judgments")
    keys = check.check_keys(keys)
    if isinstance(keys, Path):
        keys = method.read_keys(keys, lenient)
    ids = check.check_topics(topics)
    universe = list(read_topics(ids)) if isinstance(ids, Path) else ids
    return Scores(score_judged(method, read_judged(method, paths, lenient, scoring=True), keys,
                               lenient, universe))
