"""Every output of `evaluate` on the sample, layers and rag26 tracks and of assign/score on the
three TREC RAG 2024 baselines (nuggets.mistral.jsonl, --lenient), at `--assessor mock`, is the
one recorded in outputs_kept.json: a digest of each file, normalised (dates, versions, the
folders' own paths and the input files' hashes aside), and of the leaderboard printed.

The digests were recorded from the code before issue 42 moved the reading of a track's inputs
out of the plan (formats/track_inputs.py), and the outputs after it are the same bytes. A change
that means to change an output records them again, saying why in its commit:

    PYTHONPATH=tests .venv/bin/python tests/plan/test_outputs_kept.py --write
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from shared_data import RAG24

from nuggetizer.cli import cli

REPO = Path(__file__).resolve().parents[2]
RECORDED = Path(__file__).with_name("outputs_kept.json")
BASELINES = sorted((RAG24 / "runs").glob("baseline_rag24.test_*.jsonl"))
TRACKS = {"sample": "sample", "layers": str(REPO / "tracks" / "sample" / "layers.toml"),
          "rag26": "rag26"}
_DATE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(\+00:00|Z)?(/\d+/[0-9a-f]+)?")
_VERSIONS = re.compile(r'"versions": \{[^}]*\}')
_HASH = re.compile(r'"(?:sha256|blake3)": "[0-9a-f]{64}"')  # the inputs' digest, either name


def normalised(text: str, out: Path) -> str:
    """The text without what differs from one run to the next: dates (and the run ids made
    of them), the versions installed, where the outputs and the inputs lie, the input files'
    hashes (each output's own bytes are compared instead)."""
    text = text.replace(str(out), "OUT").replace(str(RAG24), "RAG24").replace(str(REPO), "REPO")
    text = _DATE.sub("DATE", text)
    text = _VERSIONS.sub('"versions": V', text)
    return _HASH.sub('"sha256": H', text)


def _run(args: list[str], out: Path) -> str:
    """The command in-process on a fresh cache of its own; what it printed on stdout."""
    env = {"NUGGETIZER_CACHE": str(out / "cache.sqlite"), "NUGGETIZER_PROGRESS_INTERVAL": "0"}
    result = CliRunner().invoke(cli, args, env=env)
    assert result.exit_code == 0, result.output
    return result.stdout


def outputs(case: str, out: Path) -> dict[str, str]:
    """Run the case into `out`; the digest of every file it wrote and of what it printed."""
    if case in TRACKS:
        printed = _run(["evaluate", "--track", TRACKS[case], "--assessor", "mock",
                        "-o", str(out / "out")], out)
    else:
        nuggets = str(RAG24 / "nuggets.mistral.jsonl")
        runs = [a for run in BASELINES for a in ("--run", str(run))]
        printed = _run(["assign", *runs, "--nuggets", nuggets, "--lenient", "--assessor", "mock",
                        "-o", str(out / "out" / "judged")], out)
        printed += _run(["score", str(out / "out" / "judged"), "--nuggets", nuggets,
                         "--lenient", "-o", str(out / "out" / "leaderboard.tsv"),
                         "--per-topic", str(out / "out" / "per_topic.tsv")], out)
    found = {"(printed)": normalised(printed, out)}
    for path in sorted((out / "out").rglob("*")):
        if path.is_file():
            found[str(path.relative_to(out / "out"))] = normalised(
                path.read_text(encoding="utf-8"), out)
    return {name: hashlib.sha256(text.encode()).hexdigest() for name, text in found.items()}


@pytest.mark.parametrize("case", [*TRACKS, "rag24-baselines"])
def test_the_outputs_are_the_ones_recorded(case: str, tmp_path: Path) -> None:
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))[case]
    found = outputs(case, tmp_path)
    assert sorted(found) == sorted(recorded)
    differ = [name for name in recorded if found[name] != recorded[name]]
    assert not differ, f"{case}: outputs changed: {', '.join(differ)} (see the docstring)"


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(__doc__)
    cases = {}
    for case in [*TRACKS, "rag24-baselines"]:
        with tempfile.TemporaryDirectory() as tmp:
            cases[case] = outputs(case, Path(tmp))
    RECORDED.write_text(json.dumps(cases, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{RECORDED}: {sum(len(c) for c in cases.values())} digests of {len(cases)} cases")
