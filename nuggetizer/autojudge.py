"""The AutoNuggetizer as a TREC AutoJudge judge (autojudge-base's `AutoJudge` protocol).

`auto-judge run --workflow WORKFLOW` (the framework's CLI) loads `AutoNuggetizerJudge` from the
workflow.yml shipped with the package (`workflow_path()`) and calls, in its order:

- `create_nuggets`: grade the runs' pooled references (UMBRELA, our `relevance` step), then
  nuggetize from the passages graded >= min_grade (our `nuggetize --qrels`);
- `create_qrels`: the same relevance step (replayed from the LLM cache when create_nuggets ran);
- `judge`: assign the nuggets to every answer, score, and hand back the framework's
  leaderboard (our `assign` and `score --autojudge-leaderboard`).

Each phase runs our own commands in-process on files in a work folder
(`OUTDIR/FILEBASE.nuggetizer/` unless `workdir` is set), so the cache, the journals (a rerun
resumes) and the provenance are the toolkit's. The framework's LLM configuration (environment:
OPENAI_MODEL or LLM_MODEL, OPENAI_BASE_URL, OPENAI_API_KEY) maps to an assessor:
`openai:MODEL --base-url URL`, or the embedded model for the model name `local`; the setting
`assessor` (any of our specs) overrides it.

autojudge-base (the `[autojudge]` extra) is imported only when a judge is used, never when the
nuggetizer package is imported.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nuggetizer.errors import ConfigError, NuggetizerError

if TYPE_CHECKING:  # pragma: no cover - typing only
    from autojudge_base import Leaderboard, Qrels, Report, Request

# settings (workflow.yml or `auto-judge run --set NAME=VALUE`) -> our options
ASSESSOR_SETTINGS = {"cache": "--cache", "temperature": "--temperature",
                     "max_tokens": "--max-tokens", "concurrency": "--concurrency",
                     "structured": "--structured", "model_path": "--model-path",
                     "reasoning_effort": "--reasoning-effort", "token_field": "--token-field",
                     "max_tokens_cap": "--max-tokens-cap"}
RELEVANCE_SETTINGS = {"reasks": "--reasks"}
RELEVANCE_FLAGS = ("cited_only", "allow_missing")
NUGGET_SETTINGS = {"min_grade": "--min-grade", "window": "--window",
                   "max_nuggets": "--max-nuggets", "keep": "--keep"}
ASSIGN_SETTINGS = {"batch": "--batch"}
ASSIGN_FLAGS = ("lenient",)
LOCAL_MODELS = ("local",)


def workflow_path() -> Path:
    """The workflow.yml shipped with the package (for `auto-judge run --workflow`)."""
    return Path(str(resources.files("nuggetizer.tracks") / "autojudge" / "workflow.yml"))


def assessor_args(llm_config: Any, settings: Mapping[str, Any]) -> list[str]:
    """Our assessor options for the framework's LLM configuration and the judge's settings:
    the setting `assessor` if given, else `local` for the model name `local`, else
    `openai:MODEL` with the configuration's base URL and API key."""
    spec = settings.get("assessor")
    args: list[str] = []
    if not spec:
        model = str(getattr(llm_config, "model", "") or "").strip()
        if not model:
            raise ConfigError("autojudge: no model: set OPENAI_MODEL (or LLM_MODEL), or the "
                              "setting assessor")
        if model in LOCAL_MODELS:
            spec = "local"
        else:
            spec = f"openai:{model}"
            base_url = getattr(llm_config, "base_url", None)
            api_key = getattr(llm_config, "api_key", None)
            if base_url:
                args += ["--base-url", str(base_url)]
            if api_key:
                args += ["--api-key", str(api_key)]
    args = ["--assessor", str(spec), *args]
    if settings.get("no_cache"):
        args.append("--no-cache")
    return args + options(settings, ASSESSOR_SETTINGS)


def options(settings: Mapping[str, Any], names: Mapping[str, str],
            flags: Sequence[str] = ()) -> list[str]:
    """Command-line options for the settings given (None: left out)."""
    args: list[str] = []
    for name, option in names.items():
        if settings.get(name) is not None:
            args += [option, str(settings[name])]
    for name in flags:
        if settings.get(name):
            args.append("--" + name.replace("_", "-"))
    return args


def run_command(args: list[str]) -> None:
    """One of our commands, in-process; its errors become a NuggetizerError."""
    from nuggetizer.cli import cli

    code = cli.main(args=args, prog_name="nuggetizer", standalone_mode=False)
    if code:  # the command printed its error line
        raise NuggetizerError(f"autojudge: `nuggetizer {args[0]}` failed (exit {code})")


def report_record(report: Report) -> dict[str, Any]:
    """A framework report as a line of a run file of ours (the report shape)."""
    record = report.model_dump(mode="json", exclude_none=True)
    for name in ("is_ragtime", "evaldata", "path"):
        record.pop(name, None)
    if record.get("responses") is not None:
        record.pop("answer", None)
    return record


def corpus_file(corpus: str | None) -> Path:
    """The passages: a JSONL(.gz) file, or a folder holding corpus.jsonl(.gz)."""
    if not corpus:
        raise ConfigError("autojudge: the nuggetizer judge needs the passages the runs cite: "
                          "give `auto-judge run --corpus PATH` (a corpus JSONL, or a folder "
                          "with corpus.jsonl.gz) or the setting corpus")
    path = Path(corpus).expanduser()
    if path.is_dir():
        for name in ("corpus.jsonl.gz", "corpus.jsonl"):
            if (path / name).is_file():
                return path / name
        raise ConfigError(f"autojudge: {path} holds no corpus.jsonl(.gz)")
    if not path.is_file():
        raise ConfigError(f"autojudge: corpus {corpus} not found (a file, or a folder with "
                          "corpus.jsonl.gz; ir-datasets ids are not read)")
    return path


class AutoNuggetizerJudge:
    """create_qrels (UMBRELA relevance), create_nuggets (AutoNuggetizer from those qrels) and
    judge (assign and score) of the TREC AutoJudge protocol."""

    @property
    def nugget_banks_type(self) -> type:
        from autojudge_base.nugget_data import NuggetizerNuggetBanks

        return NuggetizerNuggetBanks

    # -- the work folder and its inputs -------------------------------------------------

    def workdir(self, settings: Mapping[str, Any]) -> Path:
        if settings.get("workdir"):
            folder = Path(str(settings["workdir"])).expanduser()
        else:
            name = Path(str(settings.get("filebase") or "nuggetizer")).name
            folder = Path(settings.get("outdir") or ".") / f"{name}.nuggetizer"
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def write_inputs(self, work: Path, rag_responses: Iterable[Report] | None,
                     rag_topics: Sequence[Request]) -> tuple[Path, list[Path]]:
        """topics.jsonl and runs/RUN.jsonl (one file a run) in the work folder."""
        topics = work / "topics.jsonl"
        topics.write_text("".join(json.dumps({"request_id": t.request_id, "title": t.title})
                                  + "\n" for t in rag_topics), encoding="utf-8")
        runs: dict[str, list[str]] = {}
        for report in rag_responses or ():
            runs.setdefault(report.metadata.run_id, []).append(
                json.dumps(report_record(report)))
        if not runs:
            raise ConfigError("autojudge: no responses: the nuggetizer judge pools the runs' "
                              "references (keep nugget_depends_on_responses: true)")
        folder = work / "runs"
        folder.mkdir(exist_ok=True)
        paths = []
        for run_id, lines in sorted(runs.items()):
            path = folder / f"{run_id}.jsonl"
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            paths.append(path)
        return topics, paths

    def grade(self, work: Path, topics: Path, runs: list[Path], corpus: Path,
              llm: list[str], settings: Mapping[str, Any]) -> Path:
        """Our relevance step on the runs' pool: WORK/relevance.qrels."""
        qrels = work / "relevance.qrels"
        run_command(["relevance", "--topics", str(topics),
                     *[x for r in runs for x in ("--run", str(r))], "--corpus", str(corpus),
                     "-o", str(qrels), *options(settings, RELEVANCE_SETTINGS, RELEVANCE_FLAGS),
                     *llm])
        return qrels

    def build(self, work: Path, rag_responses: Iterable[Report] | None,
              rag_topics: Sequence[Request], llm_config: Any, corpus: str | None,
              settings: Mapping[str, Any]) -> Path:
        """Grade, then nuggetize from the graded passages: WORK/nuggets.jsonl."""
        topics, runs = self.write_inputs(work, rag_responses, rag_topics)
        llm = assessor_args(llm_config, settings)
        source = corpus_file(settings.get("corpus") or corpus)
        qrels = self.grade(work, topics, runs, source, llm, settings)
        nuggets = work / "nuggets.jsonl"
        run_command(["nuggetize", "--topics", str(topics), "--qrels", str(qrels), "--corpus",
                     str(source), "-o", str(nuggets), *options(settings, NUGGET_SETTINGS),
                     *llm])
        return nuggets

    # -- the protocol ---------------------------------------------------------------------

    def create_qrels(self, rag_responses: Iterable[Report] | None,
                     rag_topics: Sequence[Request], llm_config: Any, nugget_banks: Any = None,
                     corpus: str | None = None, **settings: Any) -> Qrels:
        """UMBRELA grades (0-3) of the runs' pooled references."""
        from autojudge_base.qrels.qrels import read_qrel_file

        work = self.workdir(settings)
        topics, runs = self.write_inputs(work, rag_responses, rag_topics)
        source = corpus_file(settings.get("corpus") or corpus)
        qrels = self.grade(work, topics, runs, source, assessor_args(llm_config, settings),
                           settings)
        return read_qrel_file(qrels)

    def create_nuggets(self, rag_responses: Iterable[Report] | None,
                       rag_topics: Sequence[Request], llm_config: Any, nugget_banks: Any = None,
                       corpus: str | None = None, **settings: Any) -> Any:
        """AutoNuggetizer nuggets (vital/okay) from the passages graded >= min_grade."""
        from autojudge_base.nugget_data import load_nugget_banks_generic

        work = self.workdir(settings)
        nuggets = self.build(work, rag_responses, rag_topics, llm_config, corpus, settings)
        return load_nugget_banks_generic(nuggets, self.nugget_banks_type)

    def judge(self, rag_responses: Iterable[Report], rag_topics: Sequence[Request],
              llm_config: Any, nugget_banks: Any = None, qrels: Any = None,
              corpus: str | None = None, **settings: Any) -> Leaderboard:
        """Assign the nuggets to every answer and score: V_strict, V, W_strict, W, A_strict,
        A, L per run and topic (and `all`)."""
        from autojudge_base import Leaderboard
        from autojudge_base.nugget_data import write_nugget_banks_generic

        work = self.workdir(settings)
        responses = list(rag_responses)
        if nugget_banks is not None:
            key = work / "key.jsonl"
            write_nugget_banks_generic(nugget_banks, key)
        else:  # no nuggets handed over: build them (or reuse the ones built before)
            key = work / "nuggets.jsonl"
            if not key.is_file():
                key = self.build(work, responses, rag_topics, llm_config, corpus, settings)
        topics, runs = self.write_inputs(work, responses, rag_topics)
        llm = assessor_args(llm_config, settings)
        assessments = work / "assessments"
        run_command(["assign", *[x for r in runs for x in ("--run", str(r))], "--key",
                     str(key), "-o", str(assessments),
                     *options(settings, ASSIGN_SETTINGS, ASSIGN_FLAGS), *llm])
        board = work / "leaderboard.txt"
        run_command(["score", str(assessments), "--key", str(key), "--autojudge-leaderboard",
                     str(board), "-o", str(work / "leaderboard.tsv"),
                     *options(settings, {}, ASSIGN_FLAGS)])
        return Leaderboard.load(board, format="tot")
