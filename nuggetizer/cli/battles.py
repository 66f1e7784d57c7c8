"""`nuggetizer battles`: schedule blind pairwise battles between runs' answers and judge them
(the methods/battles package); `--dry-run` counts battles, calls and cost first."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from nuggetizer.cli.common import (
    ANY,
    FILE,
    FOLDER,
    PROFILE,
    TRACK_RULES,
    assessor_options,
    chosen_topics,
    dry_run_options,
    embedded_note,
    topic_options,
)
from nuggetizer.errors import ConfigError
from nuggetizer.names import SCHEDULES

if TYPE_CHECKING:
    from nuggetizer.run.progress import Summary
    from nuggetizer.run.stages import Where

BATTLES_NOTE = ("exact for verdicts that parse at once (a re-ask is an extra call a dry run "
                "cannot see)")


@click.command("battles")
@click.option("--run", "run_paths", multiple=True, type=ANY, required=True,
              help="answer run JSONL, 2024/2025 or TREC RAG 2026 format (repeatable)")
@click.option("--topics", type=ANY, default=None,
              help="topics (TSV or JSONL) whose text is the narrative the judge reads "
                   "[default: the text each run gives with its answer]")
@click.option("--battles-per-topic", "per_topic", type=click.IntRange(min=1), default=None,
              help="battles per topic, spread so every run plays equally often (within one)")
@click.option("--budget", type=click.IntRange(min=1), default=None,
              help="battles in all, spread evenly over the topics")
@click.option("--seed", type=int, default=0, show_default=True,
              help="seed of the schedule (the same seed, the same battles)")
@click.option("--adaptive-rounds", type=click.IntRange(min=0), default=0, show_default=True,
              help="after the first round, further rounds of battles not played yet, chosen "
                   "from the fit of the rounds before (--schedule; seeded, resumable)")
@click.option("--schedule", type=click.Choice(SCHEDULES), default="uniform", show_default=True,
              help="what the adaptive rounds play: uniform: the balanced schedule's battles "
                   "between runs whose intervals overlap (each --battles-per-topic or --budget "
                   "at most); active: as many battles as the first round, those that remove "
                   "the most expected misordered pairs of the ranking (guide: Scores, Battles)")
@click.option("--corpus", type=ANY, default=None,
              help="passage texts of the cited documents (--set documents=true)")
@click.option("-o", "--output", required=True, type=FOLDER,
              help="folder: battles.jsonl, one line per battle")
@click.option("--set", "settings", multiple=True, metavar="NAME=VALUE",
              help="a setting of the battles method (both_orders, documents, seed, ties, "
                   "rounds, level, reasks); repeatable")
@TRACK_RULES
@PROFILE
@topic_options
@dry_run_options
@assessor_options
def battles_command(run_paths: tuple[Path, ...], topics: Path | None, per_topic: int | None,
                    budget: int | None, seed: int, adaptive_rounds: int, schedule: str,
                    corpus: Path | None,
                    output: Path,
                    settings: tuple[str, ...], track_rules: str, profile: str | None,
                    only_topics: tuple[str, ...], only_topics_file: Path | None,
                    **options: Any) -> None:
    """Judge blind battles between the runs' answers, per topic: both answers side by side,
    no run id shown, the judge picks A, B or a tie (score them with `score --method
    battles`; --profile ragdoll: one order per battle, drawn as castorini RAGDoll draws
    it)."""
    from nuggetizer.cli.steps import configured
    from nuggetizer.formats.track_inputs import Demand, Wanted, read_track_inputs
    from nuggetizer.methods.battles.records import battle_key
    from nuggetizer.methods.battles.step import (
        RoundsLedger,
        adaptive_plan,
        battles_step,
        pair_key,
        plan_battles,
    )
    from nuggetizer.methods.battles.step import judge_battles as judge
    from nuggetizer.plan.inputs import cite_targets
    from nuggetizer.plan.sources import make_targets, restrict_targets, wanted_to_judge
    from nuggetizer.run.execute import Dry
    from nuggetizer.run.factories import executor_from, make_assessor_from, run_with
    from nuggetizer.run.stages import Plan, Stage
    from nuggetizer.scoring.engine import read_judged

    chosen = configured("battles", settings, profile)
    if per_topic is not None and budget is not None:
        raise ConfigError("give --battles-per-topic or --budget, not both")
    documents = bool(chosen.config.documents)
    read = read_track_inputs(wanted_to_judge([chosen], Wanted(
        topics=topics, corpus=corpus if documents else None, runs=run_paths,
        track_rules=track_rules, passages=Demand(references=documents))))
    targets = restrict_targets(make_targets(chosen, read),
                               chosen_topics(only_topics, only_topics_file))
    if documents:
        cite_targets(targets, read.passages, every=True)
    narratives = {q: t.text for q, t in (read.topics or {}).items()}
    plan = plan_battles(targets, narratives, per_topic, budget, seed)
    orders = 2 if chosen.config.both_orders else 1
    head = (f"{len(plan.pairs)} battles of {plan.all_pairs} possible ({plan.runs} runs, "
            f"{plan.topics} topics), {orders} order{'s' if orders > 1 else ''} each")
    note = BATTLES_NOTE
    more_battles = adaptive_rounds * len(plan.pairs)
    if adaptive_rounds and schedule == "active":  # each round as long as the first
        more_battles = min(more_battles, plan.all_pairs - len(plan.pairs))
        note += (f"; {adaptive_rounds} active rounds of {len(plan.pairs)} battles each (their "
                 "battles depend on the verdicts: counted, not rendered)")
    elif adaptive_rounds:  # their battles depend on the verdicts: a bound, not rendered
        note += f"; {adaptive_rounds} adaptive rounds estimated at most as large as the first"

    async def rounds(assessor: Any, where: Where) -> list[Summary]:
        folder = where.path(output)
        ledger = None if where.dry else RoundsLedger(folder, battles_step(chosen))
        done: list[Summary] = []
        try:
            done.append(await judge(chosen, plan, assessor, folder, usage=ledger))
            await further(done, assessor, folder, ledger)
        finally:
            if ledger is not None:  # the rounds' spend, one invocation
                record = ledger.close(assessor.prices, finished=len(done) > 0)
                if done:
                    done[-1].tokens = ledger.carried
                    done[-1].total = record["usage"]
                    done[-1].invocations = record["invocations"]
        return done

    async def further(done: list[Summary], assessor: Any, folder: Path,
                      ledger: RoundsLedger | None) -> None:
        """The adaptive rounds, each fitted on the battles of the rounds before it."""
        planned = {pair_key(t) for t in plan.pairs}
        for _ in range(0 if ledger is None else adaptive_rounds):
            assert ledger is not None
            ledger.next_round()
            judged = [j.record for j in read_judged(chosen, [folder])
                      if battle_key(j.record["qid"], j.record["run_a"], j.record["run_b"])
                      in planned]
            more = adaptive_plan(chosen, plan, targets, judged, per_topic, budget, seed,
                                 schedule)
            if not more.pairs:
                break
            planned |= {pair_key(t) for t in more.pairs}
            why = ("where they remove the most expected misordered pairs" if schedule == "active"
                   else "between runs whose intervals overlap")
            click.echo(f"battles: adaptive round {len(done)}: {len(more.pairs)} battles, {why}",
                       err=True)
            done.append(await judge(chosen, more, assessor, folder, usage=ledger))

    stage = Stage("battles", rounds, title=lambda: f"battles ({head})", note=lambda _: note,
                  estimate=lambda: more_battles * orders)
    assessor = make_assessor_from(options)
    runner = executor_from(options, assessor, output)
    if not isinstance(runner, Dry):
        click.echo(f"battles: {head}", err=True)
    summaries = run_with(assessor, runner.run(Plan([stage])))[0]
    if isinstance(runner, Dry):
        return
    click.echo(summaries[-1].line(assessor.stats) + f"; {len(summaries)} round(s), battles in "
               f"{output}", err=True)
    embedded_note(assessor)


@click.command("export-battle-sheets")
@click.option("--battles", "judged", required=True, type=ANY,
              help="battle judgments: a battles folder or its battles.jsonl")
@click.option("--run", "run_paths", multiple=True, type=ANY, required=True,
              help="the answer runs the battles are between (repeatable)")
@click.option("--mapping", required=True, type=FILE,
              help="pseudonym -> run id file, kept apart from the sheets (reused if it exists)")
@click.option("--blank", is_flag=True, help="leave every verdict blank (else the judgments')")
@click.option("-o", "--output", required=True, type=FOLDER, help="folder: one TSV per topic")
def export_battle_sheets_command(judged: Path, run_paths: tuple[Path, ...], mapping: Path,
                                 blank: bool, output: Path) -> None:
    """Write blind battle sheets for human judges: pseudonyms for runs, sides and order
    shuffled under the mapping's secret (guide: the TREC RAG 2026 tutorial, Pairwise battles)."""
    from nuggetizer.formats.answers import read_runs
    from nuggetizer.interface.registry import make_method
    from nuggetizer.methods.battles.sheets import battle_sheets, write_battle_sheets
    from nuggetizer.plan.inputs import answer_targets
    from nuggetizer.scoring.engine import read_judged

    method = make_method("battles")
    records = [j.record for j in read_judged(method, [judged])]
    answers = answer_targets(read_runs(run_paths))
    paths = write_battle_sheets(battle_sheets(records, answers, mapping, blank), output)
    click.echo(f"export-battle-sheets: {len(records)} battles in {len(paths)} sheets in "
               f"{output}; mapping in {mapping} (keep it apart)", err=True)


@click.command("import-battle-sheets")
@click.argument("sheets", nargs=-1, required=True, type=ANY)
@click.option("--mapping", required=True, type=ANY, help="the mapping file of the export")
@click.option("--run", "run_paths", multiple=True, type=ANY,
              help="the answer runs the battles are between (repeatable): their answers' "
                   "style is recorded for the style-controlled leaderboard [default: none, "
                   "scored without style control]")
@click.option("-o", "--output", required=True, type=FOLDER,
              help="folder: battles.jsonl, scored by `score --method battles`")
def import_battle_sheets_command(sheets: tuple[Path, ...], mapping: Path,
                                 run_paths: tuple[Path, ...], output: Path) -> None:
    """Read filled-in battle sheets back as battle judgments, run ids restored."""
    from nuggetizer.formats.answers import read_runs
    from nuggetizer.formats.writing import write_jsonl_atomic
    from nuggetizer.labels import UNJUDGED
    from nuggetizer.methods.battles.method import style_of
    from nuggetizer.methods.battles.records import BATTLES_FILE
    from nuggetizer.methods.battles.sheets import read_battle_sheets
    from nuggetizer.plan.inputs import answer_targets

    records = read_battle_sheets(list(sheets), mapping)
    if run_paths:
        answers = answer_targets(read_runs(run_paths))
        for r in records:
            a, b = (answers.get(r[run], {}).get(r["qid"]) for run in ("run_a", "run_b"))
            if a is None or b is None:
                raise ConfigError(f"battle {r['qid']} {r['run_a']} vs {r['run_b']}: a run has "
                                  "no answer to the topic among --run: give every run's file")
            r["style"] = {"a": style_of(a), "b": style_of(b)}
    output.mkdir(parents=True, exist_ok=True)
    write_jsonl_atomic(output / BATTLES_FILE, records)
    unjudged = sum(1 for r in records if r["result"] == UNJUDGED)
    click.echo(f"import-battle-sheets: {len(records)} battles ({unjudged} not judged) in "
               f"{output / BATTLES_FILE}", err=True)


@click.command("export-arena-battles")
@click.option("--battles", "judged", required=True, type=ANY,
              help="battle judgments: a battles folder or its battles.jsonl")
@click.option("-o", "--output", required=True, type=FILE,
              help="arena-rank's form, model_a, model_b, winner, question_id: CSV for a .csv "
                   "name, else JSONL")
def export_arena_battles_command(judged: Path, output: Path) -> None:
    """Write the battles with a result in LMArena's form (arena-rank's input)."""
    from nuggetizer.interface.registry import make_method
    from nuggetizer.methods.battles.arena import arena_rows, write_arena
    from nuggetizer.scoring.engine import read_judged

    method = make_method("battles")
    records = [j.record for j in read_judged(method, [judged])]
    rows = arena_rows(records)
    write_arena(rows, output)
    click.echo(f"export-arena-battles: {len(rows)} battles of {len(records)} (those with a "
               f"result) in {output}", err=True)


@click.command("import-arena-battles")
@click.argument("arena", type=ANY)
@click.option("-o", "--output", required=True, type=FOLDER,
              help="folder: battles.jsonl, scored by `score --method battles`")
def import_arena_battles_command(arena: Path, output: Path) -> None:
    """Read battles in LMArena's form (model_a, model_b, winner[, question_id]; CSV or JSONL)
    as battle judgments."""
    from nuggetizer.formats.writing import write_jsonl_atomic
    from nuggetizer.methods.battles.arena import read_arena
    from nuggetizer.methods.battles.method import outcome
    from nuggetizer.methods.battles.records import BATTLES_FILE

    records = read_arena(arena)
    for r in records:
        r.update(outcome(r))
    output.mkdir(parents=True, exist_ok=True)
    write_jsonl_atomic(output / BATTLES_FILE, records)
    click.echo(f"import-arena-battles: {len(records)} battles in {output / BATTLES_FILE}",
               err=True)
