"""The registry is the only list of methods: a method of our own, one module plus its templates
outside the package, runs nuggetize, assign and score through the CLI; every method reads the
same topic files (TSV included)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from emulated import emulator

REPO = Path(__file__).resolve().parents[2]
PLUGINS = Path(__file__).resolve().parent.parent / "plugins"
SAMPLE = REPO / "tracks" / "sample"


def nuggetizer(*args: str | Path, env: dict[str, str] | None = None
               ) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "nuggetizer", *map(str, args)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=REPO,
                            env={**os.environ, **(env or {})})
    assert "Traceback" not in result.stderr, result.stderr
    return result


def plugin_env() -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(PLUGINS), os.environ.get("PYTHONPATH")]))
    return {"NUGGETIZER_METHODS": "keyterms_method", "PYTHONPATH": path}


def test_the_cli_lists_a_registered_method() -> None:
    listed = nuggetizer("score", "--help", env=plugin_env())
    assert "keyterms" in listed.stdout and "nuggets" in listed.stdout
    bare = nuggetizer("score", "--help")
    assert "keyterms" not in bare.stdout


def test_a_plugin_that_cannot_be_imported_is_named() -> None:
    result = nuggetizer("score", "--help", env={"NUGGETIZER_METHODS": "no_such_module"})
    assert result.returncode != 0
    assert "NUGGETIZER_METHODS names 'no_such_module', which cannot be imported" in result.stderr


def test_a_method_of_our_own_runs_through_the_cli(tmp_path: Path) -> None:
    """Two sample topics, one run, the package's mock backend (no model): key terms ->
    judgments -> TermRecall."""
    topics = tmp_path / "topics.tsv"
    topics.write_text("".join((SAMPLE / "topics.tsv").read_text().splitlines(True)[:2]))
    key, judged, board = tmp_path / "key.jsonl", tmp_path / "judged", tmp_path / "board.tsv"
    cache = ["--assessor", "mock", "--cache", tmp_path / "cache.sqlite"]
    env = plugin_env()
    made = nuggetizer("nuggetize", "--method", "keyterms", "--set", "terms=2", "--topics",
                      topics, "-o", key, *cache, env=env)
    assert made.returncode == 0, made.stderr
    records = [json.loads(line) for line in key.read_text().splitlines()]
    assert [r["qid"] for r in records] == ["sample-1", "sample-2"]
    for record in records:
        assert 1 <= len(record["terms"]) <= 2
        provenance = record["provenance"]
        assert provenance["config"] == {"method": "keyterms", "terms": 2}
        assert set(provenance["templates"]) == {"keyterms_extract", "keyterms_judge"}
    judge = nuggetizer("assign", "--method", "keyterms", "--set", "terms=2", "--key", key,
                       "--run", REPO / "runs" / "sample" / "good.jsonl", "-o", judged, *cache,
                       env=env)
    assert judge.returncode == 0, judge.stderr
    assert "assign --method keyterms: 2 answers" in judge.stderr
    scored = nuggetizer("score", "--method", "keyterms", "--key", key, judged, "-o", board,
                        env=env)
    assert scored.returncode == 0, scored.stderr
    rows = [line.split("\t") for line in board.read_text().splitlines()]
    assert rows[0] == ["run_id", "TermRecall"] and rows[1][0] == "sample-good"
    assert 0.0 <= float(rows[1][1]) <= 1.0
    assert (tmp_path / "board.tsv.provenance.json").is_file()


def test_kpr_reads_topics_as_tsv(tmp_path: Path) -> None:
    """The same topic reader for every method: KPR from the sample's TSV topics and qrels."""
    key = tmp_path / "kpr.jsonl"
    with emulator(tmp_path) as server:
        made = nuggetizer("nuggetize", "--method", "kpr", "--topics", SAMPLE / "topics.tsv",
                          "--qrels", REPO / "qrels" / "sample.qrels", "--corpus",
                          SAMPLE / "corpus.jsonl", "-o", key, "--assessor", "openai:emulated",
                          "--base-url", server.url, "--no-cache")
    assert made.returncode == 0, made.stderr
    records = [json.loads(line) for line in key.read_text().splitlines()]
    assert [r["qid"] for r in records] == ["sample-1", "sample-2", "sample-3", "sample-4"]
    assert records[0]["query"] == (SAMPLE / "topics.tsv").read_text().split("\t")[1].split("\n")[0]
    assert all(isinstance(r["key_points"], list) for r in records)


def test_asking_for_one_method_imports_that_one_and_listing_them_imports_all() -> None:
    """`method_class` imports the entry point named for the method (scoring nuggets does not
    import the battles and five others); `method_names` still lists every method, and a
    plugin's method is found by name too."""
    code = ("import sys\nfrom nuggetizer.interface.registry import method_class, method_names\n"
            "method_class('nuggets')\n"
            "print(sorted(m for m in sys.modules if m.startswith('nuggetizer.methods.')"
            " and m.count('.') == 2))\n"
            "print(method_class('keyterms').name, len(method_names()))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=REPO, env={**os.environ, **plugin_env()})
    assert done.returncode == 0, done.stderr
    loaded, found = done.stdout.splitlines()
    assert loaded == "['nuggetizer.methods.nuggets']"
    assert found == "keyterms 8"
