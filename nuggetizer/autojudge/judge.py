"""The AutoNuggetizer as a TREC AutoJudge judge (autojudge-base's `AutoJudge` protocol).

`auto-judge run --workflow WORKFLOW` (the framework's CLI) loads `AutoNuggetizerJudge` from the
workflow.yml shipped with the package (`workflow_path()`) and calls, in its order:

- `create_nuggets`: grade the runs' pooled references (UMBRELA, our `relevance` step), then
  nuggetize from the passages graded >= min_grade (our `nuggetize --qrels`);
- `create_qrels`: the same relevance step (replayed from the LLM cache when create_nuggets ran);
- `judge`: assign the nuggets to every answer, score, and hand back the framework's
  leaderboard (our `assign` and `score --autojudge-leaderboard`).

Each phase first checks its inputs (settings, the reports, the passages: autojudge/inputs.py)
and writes nothing when they fail; then it runs our own commands in-process on files in a work
folder (`OUTDIR/FILEBASE.nuggetizer/` unless `workdir` is set), so the cache, the journals (a
rerun resumes) and the provenance are the toolkit's. The passages are WORK/passages.jsonl: the
corpus's texts of the cited ids when `--corpus` is given, else the reports' own `documents`
(TIRA gives no corpus). The LLM cache is the setting `cache`, else
$CACHE_DIR/nuggetizer-llm-cache.sqlite when the framework's CACHE_DIR (or LLM_CACHE_DIR) is set,
so that TIRA's re-run replays it. A judge error is one line on stderr and exit 2 (no traceback);
when the inputs are rejected the `FILEBASE.config.yml` the framework wrote before calling the
judge is removed, so the out-dir holds nothing of the failed run.

The framework's LLM configuration (environment: OPENAI_MODEL or LLM_MODEL, OPENAI_BASE_URL,
OPENAI_API_KEY) maps to an assessor:
`openai:MODEL --base-url URL`, or the embedded model for the model name `local`; the setting
`assessor` (any of our specs) overrides it.

autojudge-base (the `[autojudge]` extra) is imported only when a judge is used, never when the
nuggetizer package is imported.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from nuggetizer.autojudge.inputs import (
    ASSESSOR_SETTINGS,
    ASSIGN_FLAGS,
    ASSIGN_SETTINGS,
    NUGGET_SETTINGS,
    RELEVANCE_FLAGS,
    RELEVANCE_SETTINGS,
    cache_setting,
    check_reports,
    check_settings,
    corpus_file,
    is_on,
    passages,
)
from nuggetizer.errors import ConfigError, NuggetizerError

if TYPE_CHECKING:  # pragma: no cover - typing only
    from autojudge_base import Leaderboard, Qrels, Report, Request

LOCAL_MODELS = ("local",)

__all__ = ["AutoNuggetizerJudge", "assessor_args", "corpus_file", "workflow_path"]


def workflow_path() -> Path:
    """The workflow.yml shipped with the package (for `auto-judge run --workflow`)."""
    return Path(str(resources.files("nuggetizer.tracks") / "autojudge" / "workflow.yml"))


def assessor_args(llm_config: Any, settings: Mapping[str, Any]) -> list[str]:
    """Our assessor options for the framework's LLM configuration and the judge's settings:
    the setting `assessor` if given, else `local` for the model name `local`, else
    `openai:MODEL` with the configuration's base URL and API key; the cache as
    `cache_setting` chooses it."""
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
    if is_on(settings.get("no_cache")):
        args.append("--no-cache")
    cache = cache_setting(settings, llm_config)
    return args + options({**settings, "cache": cache}, ASSESSOR_SETTINGS)


def options(settings: Mapping[str, Any], names: Mapping[str, str],
            flags: Sequence[str] = ()) -> list[str]:
    """Command-line options for the settings given (None: left out)."""
    args: list[str] = []
    for name, option in names.items():
        if settings.get(name) is not None:
            args += [option, str(settings[name])]
    for name in flags:
        if is_on(settings.get(name)):
            args.append("--" + name.replace("_", "-"))
    return args


class CommandFailed(NuggetizerError):
    """One of our commands failed; it printed its own error line."""

    def __init__(self, command: str, code: int) -> None:
        super().__init__(f"autojudge: `nuggetizer {command}` failed (exit {code})")
        self.exit_code = code


def run_command(args: list[str]) -> None:
    """One of our commands, in-process; its failure becomes CommandFailed."""
    from nuggetizer.cli import cli

    code = cli.main(args=args, prog_name="nuggetizer", standalone_mode=False)
    if code:  # the command printed its error line
        raise CommandFailed(args[0], int(code))


@contextmanager
def one_line_errors() -> Iterator[None]:
    """A judge error as one line on stderr and the exit code (SystemExit: the framework
    prints no traceback)."""
    try:
        yield
    except CommandFailed as exc:
        raise SystemExit(exc.exit_code) from None
    except NuggetizerError as exc:
        click.echo(f"error: {exc}", err=True)
        raise SystemExit(exc.exit_code) from None


def report_record(report: Report) -> dict[str, Any]:
    """A framework report as a line of a run file of ours (the report shape)."""
    record = report.model_dump(mode="json", exclude_none=True)
    for name in ("is_ragtime", "evaldata", "path"):
        record.pop(name, None)
    if record.get("responses") is not None:
        record.pop("answer", None)
    return record


def run_config_file(settings: Mapping[str, Any]) -> Path:
    """The FILEBASE.config.yml the framework writes before it calls the judge."""
    base = Path(str(settings.get("filebase") or "default"))
    if not base.is_absolute() and base.parent == Path("."):
        base = Path(settings.get("outdir") or ".") / base
    return base.parent / f"{base.name}.config.yml"


@dataclass
class Work:
    """The checked inputs, written to the work folder: the files our commands read."""

    folder: Path
    topics: Path
    runs: list[Path]
    passages: Path
    llm: list[str]

    def run_args(self) -> list[str]:
        return [x for r in self.runs for x in ("--run", str(r))]


class AutoNuggetizerJudge:
    """create_qrels (UMBRELA relevance), create_nuggets (AutoNuggetizer from those qrels) and
    judge (assign and score) of the TREC AutoJudge protocol."""

    @property
    def nugget_banks_type(self) -> type:
        from autojudge_base.nugget_data import NuggetizerNuggetBanks

        return NuggetizerNuggetBanks

    # -- the inputs, checked, then written ------------------------------------------------

    def workdir(self, settings: Mapping[str, Any]) -> Path:
        if settings.get("workdir"):
            return Path(str(settings["workdir"])).expanduser()
        name = Path(str(settings.get("filebase") or "nuggetizer")).name
        return Path(settings.get("outdir") or ".") / f"{name}.nuggetizer"

    def prepare(self, rag_responses: Iterable[Report] | None, rag_topics: Sequence[Request],
                llm_config: Any, corpus: str | None, settings: Mapping[str, Any]) -> Work:
        """Check the settings, the reports and their passages; only then write topics.jsonl,
        runs/RUN.jsonl and passages.jsonl in the work folder. Rejected inputs leave nothing
        of this run in the out-dir (the framework's config file for it is removed)."""
        try:
            check_settings(settings)
            llm = assessor_args(llm_config, settings)
            source = corpus_file(settings.get("corpus_path") or corpus)
            reports = check_reports(rag_responses or (), report_record)
            texts = passages(reports, source, is_on(settings.get("allow_missing")))
        except NuggetizerError:
            run_config_file(settings).unlink(missing_ok=True)
            raise
        folder = self.workdir(settings)
        (folder / "runs").mkdir(parents=True, exist_ok=True)
        topics = folder / "topics.jsonl"
        topics.write_text("".join(json.dumps({"request_id": t.request_id, "title": t.title})
                                  + "\n" for t in rag_topics), encoding="utf-8")
        runs = []
        for run_id, records in sorted(reports.records.items()):
            path = folder / "runs" / f"{run_id}.jsonl"
            path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
            runs.append(path)
        corpus_out = folder / "passages.jsonl"
        corpus_out.write_text("".join(json.dumps({"id": d.id, "title": d.title,
                                                  "text": d.text}) + "\n"
                                      for d in texts.values()), encoding="utf-8")
        return Work(folder, topics, runs, corpus_out, llm)

    def grade(self, work: Work, settings: Mapping[str, Any]) -> Path:
        """Our relevance step on the runs' pool: WORK/relevance.qrels."""
        qrels = work.folder / "relevance.qrels"
        run_command(["relevance", "--topics", str(work.topics), *work.run_args(), "--corpus",
                     str(work.passages), "-o", str(qrels),
                     *options(settings, RELEVANCE_SETTINGS, RELEVANCE_FLAGS), *work.llm])
        return qrels

    def build(self, work: Work, settings: Mapping[str, Any]) -> Path:
        """Grade, then nuggetize from the graded passages: WORK/nuggets.jsonl."""
        qrels = self.grade(work, settings)
        nuggets = work.folder / "nuggets.jsonl"
        run_command(["nuggetize", "--topics", str(work.topics), "--qrels", str(qrels),
                     "--corpus", str(work.passages), "-o", str(nuggets),
                     *options(settings, NUGGET_SETTINGS), *work.llm])
        return nuggets

    # -- the protocol ---------------------------------------------------------------------

    def create_qrels(self, rag_responses: Iterable[Report] | None,
                     rag_topics: Sequence[Request], llm_config: Any, nugget_banks: Any = None,
                     corpus: str | None = None, **settings: Any) -> Qrels:
        """UMBRELA grades (0-3) of the runs' pooled references."""
        from autojudge_base.qrels.qrels import read_qrel_file

        with one_line_errors():
            work = self.prepare(rag_responses, rag_topics, llm_config, corpus, settings)
            return read_qrel_file(self.grade(work, settings))

    def create_nuggets(self, rag_responses: Iterable[Report] | None,
                       rag_topics: Sequence[Request], llm_config: Any, nugget_banks: Any = None,
                       corpus: str | None = None, **settings: Any) -> Any:
        """AutoNuggetizer nuggets (vital/okay) from the passages graded >= min_grade."""
        from autojudge_base.nugget_data import load_nugget_banks_generic

        with one_line_errors():
            work = self.prepare(rag_responses, rag_topics, llm_config, corpus, settings)
            return load_nugget_banks_generic(self.build(work, settings),
                                             self.nugget_banks_type)

    def judge(self, rag_responses: Iterable[Report], rag_topics: Sequence[Request],
              llm_config: Any, nugget_banks: Any = None, qrels: Any = None,
              corpus: str | None = None, **settings: Any) -> Leaderboard:
        """Assign the nuggets to every answer and score: V_strict, V, W_strict, W, A_strict,
        A, L per run and topic (and `all`)."""
        from autojudge_base import Leaderboard
        from autojudge_base.nugget_data import write_nugget_banks_generic

        with one_line_errors():
            work = self.prepare(list(rag_responses), rag_topics, llm_config, corpus,
                                settings)
            if nugget_banks is not None:
                key = work.folder / "key.jsonl"
                write_nugget_banks_generic(nugget_banks, key)
            else:  # no nuggets handed over: build them (or reuse the ones built before)
                key = work.folder / "nuggets.jsonl"
                if not key.is_file():
                    key = self.build(work, settings)
            assessments = work.folder / "assessments"
            run_command(["assign", *work.run_args(), "--key", str(key), "-o", str(assessments),
                         *options(settings, ASSIGN_SETTINGS, ASSIGN_FLAGS), *work.llm])
            board = work.folder / "leaderboard.txt"
            run_command(["score", str(assessments), "--key", str(key),
                         "--autojudge-leaderboard", str(board), "-o",
                         str(work.folder / "leaderboard.tsv"),
                         *options(settings, {}, ASSIGN_FLAGS)])
            return Leaderboard.load(board, format="tot")
