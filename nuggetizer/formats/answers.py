"""Answer runs in any shape this toolkit reads, detected per file: the TREC RAG 2024 and 2025
answer JSONL and the NeuCLIR / RAGTIME / AutoJudge report JSONL (formats/runs.py), or
plain-text reports (`{"qid"/"topic_id", "response"/"answer": str}`, formats/keys.py), such as
the CRUX DUC reports."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from nuggetizer.errors import InputError
from nuggetizer.formats.jsonl import iter_jsonl
from nuggetizer.formats.keys import read_reports
from nuggetizer.formats.runs import read_run
from nuggetizer.types import Answer, Sentence


def is_rag_run(path: Path) -> bool:
    """Whether the file's first line has a structured answer shape (an `answer` or `responses`
    list, or a `metadata` block) rather than a plain-text report."""
    first = next((obj for _, obj in iter_jsonl(path)), {})
    return (isinstance(first.get("answer"), list) or isinstance(first.get("responses"), list)
            or "metadata" in first)


def read_answer_run(path: str | Path, keep_unresolved: bool = False
                    ) -> tuple[str, dict[str, Answer]]:
    """One answer run file of either shape: (run id, answers by topic id in file order);
    `keep_unresolved` keeps citations outside the references (formats/runs.py)."""
    path = Path(path)
    if is_rag_run(path):
        return read_run(path, keep_unresolved)
    run_id, texts = read_reports(path)
    return run_id, {qid: Answer(run_id=run_id, topic_id=qid, sentences=[Sentence(text=text)],
                                path=str(path))
                    for qid, text in texts.items()}


def repeated_citations(runs: dict[str, dict[str, Answer]]) -> list[str]:
    """Where an answer's sentence (a 2026 answer object) cites a reference it already cites
    (the same position, or another position naming the same id), in words, in file order."""
    found = []
    for answers in runs.values():
        for answer in answers.values():
            refs = answer.references
            for k, sentence in enumerate(answer.sentences):
                seen: dict[object, int] = {}
                for j, cite in enumerate(sentence.citations):
                    ref = refs[cite] if isinstance(cite, int) and 0 <= cite < len(refs) else cite
                    if ref in seen:
                        place = f"{answer.path}:{answer.line}: " if answer.path else ""
                        found.append(f"{place}answer[{k}].citations[{j}] cites {ref!r} as "
                                     f"citations[{seen[ref]}] did")
                    else:
                        seen[ref] = j
    return found


def read_runs(paths: Iterable[str | Path], keep_unresolved: bool = False
              ) -> dict[str, dict[str, Answer]]:
    """Several answer runs: {run id: {topic id: answer}}; a run id in two files is an error."""
    runs: dict[str, dict[str, Answer]] = {}
    sources: dict[str, Path] = {}
    for p in paths:
        p = Path(p)
        run_id, answers = read_answer_run(p, keep_unresolved)
        if run_id in runs:
            raise InputError(p, None, f"run id {run_id!r} is also the run id of "
                             f"{sources[run_id]}")
        runs[run_id], sources[run_id] = answers, p
    return runs
