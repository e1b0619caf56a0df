"""Kim et al. (2019)'s protocol: CV on folds, pair features, zero-shot NLI heads (cached),
the fallback's label in the table, the random-encoder restarts, sub-type breakdowns, and one
end-to-end CLI run on a miniature release."""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from dnc_fixture import write_release
from sentprobe.analysis.subtypes import subtype_report, subtype_scores
from sentprobe.cli.main import app
from sentprobe.datasets.loaders.dnc import load_dnc
from sentprobe.datasets.loaders.nli import load_nli_pairs
from sentprobe.encoders.base import Encoder
from sentprobe.evaluation import folds
from sentprobe.evaluation.runner import expand_baselines, run
from sentprobe.evaluation.store import ResultsStore
from sentprobe.reporting import results_table

NLI_TRAIN = Path(__file__).resolve().parents[1] / "fixtures" / "nli_tiny.jsonl"


class Hashed(Encoder):
    """Bag of hashed tokens: cheap, deterministic, separable enough for the fixtures."""

    name = "Hashed"

    @property
    def fingerprint(self) -> str:
        return "hashed-v1"

    def encode(self, sentences):
        out = np.zeros((len(sentences), 24), dtype=np.float32)
        for i, s in enumerate(sentences):
            for tok in s.split():
                out[i, zlib.crc32(tok.encode()) % 24] += 1
        return out


@pytest.fixture
def release(tmp_path):
    return load_dnc(write_release(tmp_path / "dnc"), suite="mini")


def test_pair_features():
    u, v = np.array([[1.0, 2.0]]), np.array([[3.0, 1.0]])
    nli = folds.pair_inputs("nli-pair", u, v)
    assert nli.tolist() == [[1, 2, 3, 1, 2, 1, 3, 2]]
    assert folds.pair_inputs("acceptability-pair", u, v).tolist() == [[1, 2, 3, 1]]
    assert folds.pair_inputs("acceptability-single", u, None) is u
    assert folds.pair_inputs("nli-pair", ["a"], ["b"]) == ["a b"]


def _probe(tmp_path: Path, tasks) -> pd.DataFrame:
    """Hashed and Majority on ``tasks``, stored in ``tmp_path / "r.sqlite"``."""
    kwargs = {"results": tmp_path / "r.sqlite", "cache_dir": tmp_path / "cache"}
    return run([Hashed()], tasks, baselines="majority", progress=False, **kwargs)


def test_cross_validation_tests_every_item_once(tmp_path, release):
    frame = _probe(tmp_path, release)
    assert set(frame["encoder"]) == {"Majority", "Hashed"}
    hashed = frame[frame["encoder"] == "Hashed"].set_index("task")
    assert set(hashed["probe"]) == {"kim-mlp"}  # the task's own probe, not logreg
    wh = hashed.loc["wh-words"]
    assert wh["extra"]["protocol"] == "folds" and len(wh["extra"]["fold_scores"]) == 10
    assert wh["test_score"] == pytest.approx(np.mean(wh["extra"]["fold_scores"]))
    assert wh["n_test"] == 40 and wh["dim"] == 24
    assert hashed.loc["EOS"]["dim"] == 48  # both sentences, concatenated
    negation = hashed.loc["Negation"]
    assert negation["extra"]["protocol"] == "cv-fallback" and negation["dim"] == 96
    with ResultsStore(tmp_path / "r.sqlite", readonly=True) as store:
        predictions = store.predictions(str(wh["key"]))
    assert predictions is not None and len(predictions) == 40 and predictions.groups is not None
    table = results_table(frame)
    assert "¶" in table and "NOT the paper's protocol" in table and "§" in table


def test_zero_shot_head_is_trained_once_and_cached(tmp_path, release, monkeypatch):
    trained = []
    real = folds.train_head

    def spy(*args, **kwargs):
        trained.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr("sentprobe.evaluation.runner.train_head", spy)
    nli = [t for t in release if t.metadata.format == "nli-pair"]
    nli.append(load_dnc(Path(nli[0].metadata.source).parents[1], suite="copy")[-1])
    kwargs = dict(baselines="none", cache_dir=tmp_path / "cache", progress=False)
    frame = run([Hashed()], nli, results=tmp_path / "a.sqlite", nli_train=NLI_TRAIN, **kwargs)
    assert len(trained) == 1  # two NLI tasks, one head
    assert set(r["protocol"] for r in frame["extra"]) == {"zero-shot"}
    assert list(frame["n_test"]) == [30, 30]
    # a new results store, the same cache: the head comes from disk
    frame = run([Hashed()], nli, results=tmp_path / "b.sqlite", nli_train=NLI_TRAIN, **kwargs)
    assert len(trained) == 1 and all(r["head_cached"] for r in frame["extra"])
    assert "¶" not in results_table(frame)
    # another training file is another head (and other units)
    other = tmp_path / "other.jsonl"
    other.write_text(NLI_TRAIN.read_text().replace("A man", "A person"))
    run([Hashed()], nli, results=tmp_path / "b.sqlite", nli_train=other, **kwargs)
    assert len(trained) == 2
    assert load_nli_pairs(other).sha != load_nli_pairs(NLI_TRAIN).sha


def test_default_baselines_are_the_papers_controls(release):
    assert expand_baselines("default", release) == ["majority", "random-bilstm"]
    assert expand_baselines(None, release) == ["majority", "random-bilstm"]


def test_restarts_give_one_unit_per_seed(tmp_path, release):
    class Random(Hashed):
        uses_seed = True

        def __init__(self, seed: int = 0) -> None:
            self.seed = seed
            self.name = "Random"

        @property
        def fingerprint(self) -> str:
            return f"random-{self.seed}"

        def with_seed(self, seed: int) -> Random:
            return Random(self.seed + seed)

        def encode(self, sentences):
            rng = np.random.default_rng(self.seed)
            return super().encode(sentences) @ rng.normal(size=(24, 8)).astype(np.float32)

    from sentprobe.encoders.cache import EmbeddingCache
    from sentprobe.evaluation.runner import Runner

    with ResultsStore(tmp_path / "r.sqlite") as store:
        runner = Runner(
            release[:1], probe=None, store=store, cache=EmbeddingCache(None), progress=False
        )
        runner.run_encoder(Random(), seeds=3)
        frame = runner.frame()
    assert sorted(frame["seed"]) == [0, 1, 2]
    assert "±" in results_table(frame) and "§" not in results_table(frame)


def test_subtype_breakdown(tmp_path, release):
    frame = _probe(tmp_path, release)
    with ResultsStore(tmp_path / "r.sqlite", readonly=True) as store:
        found = store.predictions_for(frame["key"])
    scores = subtype_scores(frame, found)
    negation = scores[(scores["task"] == "Negation") & (scores["encoder"] == "Majority")]
    appendix_f = negation[negation["subtype"].str.startswith("F: ")]
    negation = negation[~negation["subtype"].str.startswith("F: ")]
    # Appendix F: lexical+explicit and explicit+both have both kinds; none has none
    assert dict(zip(appendix_f["subtype"], appendix_f["n"])) == {
        "F: explicit and lexical": 20,
        "F: none": 10,
    }
    assert set(negation["subtype"]) == {
        "P:lexical H:explicit",
        "P:none H:none",
        "P:explicit H:both",
    }
    assert list(negation["n"]) == [10, 10, 10]  # the fixture cycles the three patterns
    # each pattern has one label in the fixture: its accuracy is the share of its items for
    # which the fold's majority label was that label, and together they make the total
    key = frame[(frame["encoder"] == "Majority") & (frame["task"] == "Negation")]["key"].iloc[0]
    predictions = found[key]
    for row in negation.itertuples():
        mask = np.asarray(predictions.groups) == row.subtype
        assert row.accuracy == pytest.approx(100 * predictions.correct[mask].mean())
    total = (negation["accuracy"] * negation["n"]).sum() / 30
    assert total == pytest.approx(100 * predictions.accuracy)
    text = subtype_report(scores)
    assert "### Negation" in text and "### wh-words" in text and "EOS" not in text


def test_cli_end_to_end(tmp_path, monkeypatch):
    write_release(tmp_path / "dnc")
    (tmp_path / "enc.py").write_text(
        "import zlib\nimport numpy as np\n\n"
        "def encode(sentences):\n"
        "    out = np.zeros((len(sentences), 16), dtype=np.float32)\n"
        "    for i, s in enumerate(sentences):\n"
        "        for t in s.split():\n"
        "            out[i, zlib.crc32(t.encode()) % 16] += 1\n"
        "    return out\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SENTPROBE_CACHE", str(tmp_path / "cache"))
    common = ["--results", "r.sqlite", "-q", "--baselines", "majority"]
    res = CliRunner().invoke(
        app, ["run", "-e", "enc.py:encode", "-t", "dnc", "--nli-train", str(NLI_TRAIN), *common]
    )
    assert res.exit_code == 0, res.output
    assert "wh-words" in res.output and "Negation" in res.output and "Majority" in res.output
    assert "¶" not in res.output  # zero-shot, the paper's protocol
    res = CliRunner().invoke(app, ["report", "--results", "r.sqlite", "--by", "subtype"])
    assert res.exit_code == 0 and "P:lexical H:explicit" in res.output
    # the paper's Fig. 2: agreement of the rows' predictions, over all sets and per set
    res = CliRunner().invoke(app, ["report", "--results", "r.sqlite", "--agreement", "--by-task"])
    assert res.exit_code == 0, res.output
    assert "all tasks" in res.output and "Prediction agreement, Negation" in res.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"premise": "a", "hypothesis": "b", "label": "yes"}\n')
    res = CliRunner().invoke(
        app, ["run", "-e", "enc.py:encode", "-t", "dnc", "--nli-train", str(bad), *common[:2]]
    )
    assert res.exit_code == 1 and "bad.jsonl, line 1: unknown label 'yes'" in res.output
