"""The organizer's commands: validate, sheets for humans, qrels agreement, ir_datasets export
(the report is in cli/report.py; agreement and significance of evaluations in cli/compare.py)."""

from __future__ import annotations

from pathlib import Path

import click

from nuggetizer.cli.common import ANY, FILE, LENGTH_LIMIT, LENIENT, TRACK_RULES, method_options
from nuggetizer.names import SCALE_NAMES


@click.command("validate")
@click.argument("runs", nargs=-1, required=True, type=ANY)
@click.option("--topics", "--narratives", "topics", type=ANY, default=None,
              help="the track's topics (TSV, JSONL or a JSON array; a narratives file with "
                   "narrative_id too); for a TREC RAG 2026 run its narratives file, each "
                   "narrative's text checked as copied exactly")
@click.option("--fix", "fix_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="write copies with the safe fixes into this folder: over-length 2024/2025 "
                   "answers trimmed; 2026 narratives copied, citations by doc id as positions, "
                   "a reference cited twice in one answer object cited once")
@click.option("--max-refs", type=int, default=None,
              help="reference limit [default: 20 for 2024 runs, 100 for 2025 runs]")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object instead of text")
@click.option("--length-tolerance", type=click.IntRange(min=0), default=None,
              help="words a stated response_length may differ from the computed one without "
                   "a warning [default: 10; the official 2024 baselines are off by 1-9]")
@click.option("--all-problems", is_flag=True,
              help="every problem on its own line, instead of grouped per kind with counts")
@click.option("--strict", is_flag=True, help="exit 1 when there are warnings (else only errors "
              "fail: exit 2)")
@TRACK_RULES
@LENGTH_LIMIT
@click.pass_context
def validate_command(ctx: click.Context, runs: tuple[Path, ...], topics: Path | None,
                     fix_dir: Path | None, max_refs: int | None, as_json: bool,
                     length_tolerance: int | None, all_problems: bool, strict: bool,
                     track_rules: str, length_limit: int | None) -> None:
    """Check answer runs (TREC RAG 2024/2025, reports): exit 0 clean or warnings only (1 with
    --strict), 2 errors."""
    from nuggetizer.formats.rag26 import narratives
    from nuggetizer.formats.track_rules import request_limits
    from nuggetizer.validate.checker import (
        LENGTH_TOLERANCE,
        exit_code,
        grouped,
        reports_json,
        summary_table,
        validate_run,
    )

    texts = narratives(topics) if topics else None
    known = set(texts) if texts is not None else None
    tolerance = LENGTH_TOLERANCE if length_tolerance is None else length_tolerance
    limits = request_limits(topics) if topics else {}
    reports = [validate_run(p, known, ref_limit=max_refs, fix_dir=fix_dir,
                            length_tolerance=tolerance, track=track_rules, limits=limits,
                            length_limit=length_limit, narratives=texts) for p in runs]
    if as_json:
        click.echo(reports_json(reports, strict))
    else:
        for line in ([str(p) for r in reports for p in r.problems] if all_problems
                     else grouped(reports)):
            click.echo(line, err=True)
        for report in reports:
            if report.fixed:
                made = (f"{report.fixes} safe fixes" if report.shape == "rag26"
                        else f"{report.over_length} answers trimmed")
                click.echo(f"fixed: wrote {report.fixed} ({made})", err=True)
        click.echo(summary_table(reports))
    ctx.exit(exit_code(reports, strict))


@click.command("export-nuggets")
@click.argument("nuggets", type=ANY)
@click.option("-o", "--output", required=True, type=FILE, help="TSV sheet to post-edit")
@LENIENT
def export_nuggets_command(nuggets: Path, output: Path, lenient: bool) -> None:
    """Write nuggets as a TSV sheet for post-editing (blank importance to fill in)."""
    from nuggetizer.formats.nuggets import read_nuggets
    from nuggetizer.formats.sheets import nugget_sheet
    from nuggetizer.formats.writing import write_text_atomic
    from nuggetizer.run.provenance import write_sidecar

    keys = read_nuggets(nuggets, lenient=lenient)
    write_text_atomic(output, nugget_sheet(keys, f"nuggets from {nuggets.name}; edit, delete or "
                                           "add rows; importance: vital or okay"))
    write_sidecar(output, [nuggets])
    click.echo(f"export-nuggets: {sum(len(k.nuggets) for k in keys.values())} nuggets of "
               f"{len(keys)} topics to {output}", err=True)


@click.command("import-nuggets")
@click.argument("sheet", type=ANY)
@click.option("-o", "--output", required=True, type=FILE, help="nuggets JSONL")
@click.option("--allow-blank", is_flag=True, help="blank importance becomes unjudged")
def import_nuggets_command(sheet: Path, output: Path, allow_blank: bool) -> None:
    """Read a post-edited nugget sheet into a nuggets file (validated strictly)."""
    from nuggetizer.formats.nuggets import nuggets_record
    from nuggetizer.formats.sheets import read_nugget_sheet
    from nuggetizer.formats.writing import write_jsonl_atomic
    from nuggetizer.run.provenance import provenance

    keys = read_nugget_sheet(sheet, allow_blank=allow_blank)
    stamp = provenance({"assessor": "manual", "source": str(sheet)}, ())
    write_jsonl_atomic(output, [nuggets_record(nl, stamp) for nl in keys.values()])
    click.echo(f"import-nuggets: {sum(len(k.nuggets) for k in keys.values())} nuggets of "
               f"{len(keys)} topics to {output}", err=True)


@click.command("export-sheets")
@click.option("--assessments", "assessed", multiple=True, type=ANY,
              help="assessment (judgment) files or folders: sheets prefilled with their labels")
@click.option("--run", "run_paths", multiple=True, type=ANY, help="answer run (repeatable)")
@click.option("--nuggets", "--key", "key", type=ANY, default=None,
              help="with --run: blank sheets for the answer key (nuggets, or the key of "
                   "--method)")
@click.option("--corpus", type=ANY, default=None,
              help="with --run: texts of the cited passages (support)")
@click.option("--allow-missing", is_flag=True,
              help="citations that do not resolve stay unjudged (support)")
@method_options
@click.option("-o", "--output", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="folder: one TSV sheet per topic")
@click.option("--blind", is_flag=True,
              help="blind review: run ids replaced by pseudonyms (HMAC of the run id under a "
                   "secret), each topic's answers shuffled; the mapping goes to --mapping")
@click.option("--mapping", type=FILE, default=None,
              help="--blind: the mapping file (secret and pseudonym -> run id; reused if it "
                   "exists) [default: OUTPUT.mapping.json, beside the folder]")
@click.option("--secret", default=None, envvar="NUGGETIZER_BLIND_SECRET",
              help="--blind: the secret of a new mapping [default: random]")
@LENIENT
def export_sheets_command(assessed: tuple[Path, ...], run_paths: tuple[Path, ...],
                          key: Path | None, corpus: Path | None, allow_missing: bool,
                          method: str, settings: tuple[str, ...], output: Path,
                          lenient: bool, blind: bool, mapping: Path | None,
                          secret: str | None) -> None:
    """Write per-topic sheets (answers and what to label) for manual assessors."""
    from nuggetizer.cli.steps import configured
    from nuggetizer.formats.blind import blind as make_blind
    from nuggetizer.formats.sheets import sheet_file_name
    from nuggetizer.formats.track_inputs import Wanted, read_track_inputs
    from nuggetizer.formats.writing import write_text_atomic
    from nuggetizer.plan.sources import check_key, make_targets, wanted_to_judge
    from nuggetizer.scoring.engine import judgment_files, read_judged

    chosen = configured(method, settings)
    if bool(assessed) == bool(run_paths):
        raise click.UsageError("give either --assessments, or --run (with --nuggets/--key "
                               "for a method that judges with a key)")
    if run_paths:
        check_key(chosen, key)
        keys = chosen.read_keys(key, lenient) if key is not None else None
        targets = make_targets(chosen, read_track_inputs(wanted_to_judge([chosen], Wanted(
            corpus=corpus, runs=run_paths, allow_missing=allow_missing))))
        items = [chosen.blank_judgment(keys[qid] if keys is not None else None, target)
                 for by_topic in targets.values() for qid, target in by_topic.items()
                 if keys is None or qid in keys]
    else:
        items = [j.record for j in read_judged(chosen, judgment_files(list(assessed)), lenient)]
    if (mapping or secret) and not blind:
        raise click.UsageError("--mapping and --secret go with --blind")
    if blind:

        mapping = mapping or output.with_name(output.name + ".mapping.json")
        if mapping.resolve().parent == output.resolve():
            raise click.UsageError("--mapping must not be inside the sheets folder")
        items = make_blind(items, mapping, secret)
    sheets = chosen.sheets(items, chosen.sheet_hint)
    for qid, text in sheets.items():
        write_text_atomic(output / sheet_file_name(qid), text)
    click.echo(f"export-sheets: {len(items)} answers in {len(sheets)} topic sheets in {output}"
               + (f" (blind; the mapping to run ids in {mapping}: keep it apart)" if blind
                  else ""), err=True)


@click.command("import-sheets")
@click.argument("sheets", nargs=-1, required=True, type=ANY)
@click.option("--nuggets", "--key", "key", type=ANY, default=None,
              help="the nuggets (answer key) the sheets were made from (a method with a key)")
@method_options
@click.option("-o", "--output", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="folder: one assessment (judgment) file per run")
@click.option("--allow-blank", is_flag=True, help="a blank label becomes unjudged")
@click.option("--mapping", type=FILE, default=None,
              help="blind sheets: the mapping file export-sheets --blind wrote (restores the "
                   "run ids)")
@LENIENT
def import_sheets_command(sheets: tuple[Path, ...], key: Path | None, method: str,
                          settings: tuple[str, ...], output: Path, allow_blank: bool,
                          lenient: bool, mapping: Path | None) -> None:
    """Read filled-in sheets into judgment files that `score` reads."""
    from nuggetizer.cli.steps import configured
    from nuggetizer.formats.blind import unblind
    from nuggetizer.formats.writing import run_file_name, write_jsonl_atomic
    from nuggetizer.plan.sources import check_key
    from nuggetizer.run.provenance import provenance

    chosen = configured(method, settings)
    check_key(chosen, key)
    keys = chosen.read_keys(key, lenient) if key is not None else None
    by_run = chosen.read_sheets(list(sheets), keys, allow_blank)
    if mapping is not None:

        by_run = unblind(by_run, mapping)
    stamp = provenance({"assessor": "manual", "source": [str(s) for s in sheets]}, ())
    for run_id, items in by_run.items():
        write_jsonl_atomic(output / run_file_name(run_id),
                           [{**record, "provenance": stamp} for record in items])
    click.echo(f"import-sheets: {sum(len(v) for v in by_run.values())} answers of "
               f"{len(by_run)} runs to {output}", err=True)


@click.command("irds-export")
@click.argument("dataset_id")
@click.option("-o", "--output", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--min-grade", type=int, default=1, show_default=True,
              help="segments judged at least this are written to corpus.jsonl")
def irds_export_command(dataset_id: str, output: Path, min_grade: int) -> None:
    """Write topics.tsv, qrels.txt and corpus.jsonl of an installed ir_datasets id."""
    from nuggetizer.scoring.irm import export_dataset

    counts = export_dataset(dataset_id, output, min_grade)
    click.echo(f"irds-export: {counts['topics']} topics, {counts['qrels']} qrels, "
               f"{counts['segments']} judged segments to {output}", err=True)


@click.command("qrels-agreement")
@click.argument("qrels", nargs=-1, required=True, type=ANY)
@click.option("--retrieval-run", "retrieval_runs", multiple=True, type=ANY,
              help="TREC retrieval run: Kendall's tau between the run orderings A and B "
                   "induce (repeatable; at least two)")
@click.option("--measure", default="nDCG@10", show_default=True,
              help="ir_measures measure the runs are ordered by")
@click.option("--relevant", type=int, default=None,
              help="grade from which a passage is relevant (precision, recall, F1; with more "
                   "than two qrels, also a binary alpha) [default: the scale's: 2 on 0-4, "
                   "else 1]")
@click.option("--scale", type=click.Choice(list(SCALE_NAMES)), default=None,
              help="the qrels' scale where their provenance declares none [default: the "
                   "declared one; qrels of two scales are an error]")
@click.option("-o", "--output", type=FILE, default=None, help="TSV: measure, value")
@click.option("--markdown", type=FILE, default=None, help="markdown report")
@click.option("--json", "as_json", type=FILE, default=None, help="JSON report")
def qrels_agreement_command(qrels: tuple[Path, ...], retrieval_runs: tuple[Path, ...],
                            measure: str, relevant: int | None, scale: str | None,
                            output: Path | None, markdown: Path | None, as_json: Path | None
                            ) -> None:
    """Agreement of two qrels A B (A the reference): Cohen's kappa, Krippendorff's alpha,
    P/R/F1, the confusion matrix; with retrieval runs, Kendall's tau between the rankings.
    Of more qrels (A B C ...): every pair so, and Krippendorff's alpha over all of them."""
    from nuggetizer.compare.qrels import (
        compare_many_qrels,
        compare_qrels,
        many_labels,
    )
    from nuggetizer.formats.trec_run import read_trec_runs
    from nuggetizer.formats.writing import write_text_atomic
    from nuggetizer.relevance.scales import SCALES, common_scale
    from nuggetizer.run.provenance import write_sidecar

    if len(qrels) < 2:
        raise click.UsageError("give at least two qrels files")
    declared = common_scale(qrels, scale)
    if relevant is None:
        relevant = SCALES[declared].relevant if declared in SCALES else 1
    runs = list(read_trec_runs(retrieval_runs).values())
    if len(qrels) == 2:
        pair = compare_qrels(qrels[0], qrels[1], runs, measure, relevant)
        texts = (pair.tsv(), pair.markdown(), pair.json())
    else:
        many = compare_many_qrels(qrels, runs, measure, relevant)
        texts = (many.tsv(), many.markdown(many_labels(relevant, measure if runs else None)),
                 many.json())
    for path, text in zip((output, markdown, as_json), texts):
        if path is not None:
            write_text_atomic(path, text)
            write_sidecar(path, [*qrels, *retrieval_runs])
    click.echo(texts[1], nl=False)
