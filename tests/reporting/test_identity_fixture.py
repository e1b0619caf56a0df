"""Issue 46: one collision fixture pushed through every output format ``report`` registers
(``ReportFormat``: a new format is covered without editing this test) and the adapters:
one task name in two languages (in two suites, and in one folder), two X-Probe folders
``a/de`` and ``b/de`` (one language, two sources), two run folders of one name, a seeded row.
Every identity's own number appears, no mean of two identities does; dropping language or
source from the identity makes the check fail."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from sentprobe.cli.main import app
from sentprobe.cli.options import ReportFormat
from sentprobe.evaluation import identity
from sentprobe.evaluation.store import ResultsStore

A_DE, B_DE = "/data/a/de/past_present", "/data/b/de/past_present"
RUN_A, RUN_B = "/runs/a/nmt", "/runs/b/nmt"
MULTI = "/data/multi/past_present"  # one source holding two languages
#: (label, fingerprint, source, language, hash, scores per seed, extra)
CELLS = (
    ("BoV-GloVe", "fp:glove", "sample-en", "en", "h-en", (0.862,), {}),
    ("BoV-GloVe", "fp:glove", "sample-fr", "fr", "h-fr", (0.524,), {}),
    ("BoV-GloVe", "fp:glove", A_DE, "de", "h-a", (0.632,), {}),
    ("BoV-GloVe", "fp:glove", B_DE, "de", "h-b", (0.640,), {}),
    ("BoV-GloVe", "fp:glove", MULTI, "en", "h-men", (0.702,), {}),
    ("BoV-GloVe", "fp:glove", MULTI, "fr", "h-mfr", (0.718,), {}),
    ("nmt@epoch-2", f"trained-run-v2|{RUN_A}|e2", "sample-en", "en", "h-en", (0.763,), {}),
    ("nmt@epoch-2", f"trained-run-v2|{RUN_B}|e2", "sample-en", "en", "h-en", (0.643,), {}),
    ("BiLSTM", "baseline:bilstm:v1", "sample-en", "en", "h-en", (0.84, 0.87),
     {"row_fingerprint": "baseline:bilstm:v1", "seeds": 2}),
)  # fmt: skip
EXPECTED = {"86.2", "52.4", "63.2", "64.0", "70.2", "71.8", "76.3", "64.3", "85.5"}
#: means of two identities' numbers (and the seeds' own, which no output shows alone)
FORBIDDEN = {"69.3", "63.6", "71.0", "70.3", "84.0", "87.0", "75.0", "57.8"}


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    from sentprobe.evaluation.store import ResultRecord

    path = tmp_path_factory.mktemp("fixture") / "r.sqlite"
    with ResultsStore(path) as s:
        for i, (label, fp, source, lang, digest, scores, extra) in enumerate(CELLS):
            for seed, score in enumerate(scores):
                record = ResultRecord(
                    encoder=label, task="Tense", task_source=source, language=lang,
                    task_hash=digest, category="other", seed=seed, probe="logreg",
                    selection="dev", config={}, dev_score=None, test_score=score, n_train=100,
                    n_dev=20, n_test=1000, n_classes=2, dim=8, extra=extra,
                    encoder_fingerprint=fp if len(scores) == 1 else f"{fp}:seed{seed}",
                )  # fmt: skip
                s.add(record, f"k{i}-{seed}")
    return path


def _numbers(text: str) -> set[str]:
    return {f"{float(n):.1f}" for n in re.findall(r"(?<![\d.])\d+\.\d+", text)}


def _invoke(store: Path, *args: str) -> str:
    result = CliRunner().invoke(app, ["report", "--results", str(store), "--no-ci", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def _mteb(store: Path, tmp: Path) -> set[str]:
    _invoke(store, "-f", "mteb", "-o", str(tmp))
    docs = [json.loads(f.read_text()) for f in tmp.rglob("*.json") if f.name != "model_meta.json"]
    assert len(docs) == len(EXPECTED)  # one file per (row, task identity)
    return {f"{100 * d['scores']['test'][0]['main_score']:.1f}" for d in docs}


def _model_index(store: Path, tmp: Path) -> set[str]:
    from sentprobe.cli.report import _load_results

    found: set[str] = set()
    for row in dict.fromkeys(_load_results(store, None)["encoder"]):
        block = yaml.safe_load(_invoke(store, "-f", "model-index", "-e", row))
        results = block["model-index"][0]["results"]
        names = [r["dataset"]["name"] for r in results]
        assert len(names) == len(set(names)), names  # identities apart within one model
        found |= {f"{m['value']:.1f}" for r in results for m in r["metrics"]}
    return found


#: Outputs that are no text on stdout: how to read their numbers (anything else: stdout).
READERS = {"mteb": _mteb, "model-index": _model_index}


def shown(store: Path, fmt: str, tmp: Path) -> set[str]:
    if fmt in READERS:
        return READERS[fmt](store, tmp)
    return _numbers(_invoke(store, "-f", fmt))


@pytest.mark.parametrize("fmt", [f.value for f in ReportFormat])
def test_every_registered_format_keeps_every_identity(store, fmt, tmp_path):
    numbers = shown(store, fmt, tmp_path)
    assert numbers >= EXPECTED, (fmt, EXPECTED - numbers)
    assert not numbers & FORBIDDEN, (fmt, numbers & FORBIDDEN)


def test_adapters_keep_every_identity(store):
    from sentprobe.analysis.correlation import probing_scores
    from sentprobe.cli.report import _load_results
    from sentprobe.reporting.controls import method_frame
    from sentprobe.reporting.crosslang import language_scores

    frame = _load_results(store, None)
    for scores in (
        method_frame(frame)["score"],
        language_scores(frame, include_baselines=True)["score"],
        probing_scores(frame)["score"],
    ):
        numbers = {f"{v:.1f}" for v in scores}
        assert numbers == EXPECTED


def test_tags_are_explained_in_every_text_format(store):
    markdown = _invoke(store, "-f", "markdown")
    tags = set(re.findall(r"nmt@epoch-2 \(([0-9a-f]{8})\)", markdown))
    assert len(tags) == 2
    legend = markdown.split("Row tags")[1]
    for tag in tags:
        assert tag in legend
    assert RUN_A in legend and RUN_B in legend
    assert "Row tags" in _invoke(store, "-f", "latex")
    records = json.loads(_invoke(store, "-f", "json"))
    for r in records:
        if r["encoder"].startswith("nmt@epoch-2 ("):
            assert r["encoder"].endswith(f"({r['tag']})")


@pytest.mark.parametrize("dropped", ["language", "task_source"])
def test_dropping_a_part_of_the_identity_is_caught(store, monkeypatch, dropped, tmp_path):
    """The mutation the issue found surviving: without ``dropped`` in the identity tuple,
    the check above fails (two identities merge and one number is lost)."""
    monkeypatch.setattr(identity, "IDENTITY", tuple(c for c in identity.IDENTITY if c != dropped))
    numbers = shown(store, "markdown", tmp_path)
    assert not numbers >= EXPECTED
