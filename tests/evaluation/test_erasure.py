"""Erasure (``run --erase``): LEACE and its random control, their identity, report and errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_evaluate import letter_counts
from typer.testing import CliRunner

import sentprobe
from sentprobe.analysis.erasure import erasure_effects, erasure_text
from sentprobe.cli.main import app
from sentprobe.datasets import make_mock_task
from sentprobe.datasets.task import ProbingTask, Split, TaskMetadata
from sentprobe.encoders.cache import EmbeddingCache
from sentprobe.evaluation.identity import resolve
from sentprobe.evaluation.memory import MemoryStore
from sentprobe.evaluation.runner import execute, plan_run
from sentprobe.reporting.tables import pivot

#: A toy encoder: two Gaussian clusters per property ("walked"/"walks" on dimension 0,
#: "dogs"/"dog" on dimension 1) in noise, so each property is linear and separable from the
#: other; the noise is seeded by the sentence, so vectors are a function of the text.
ENCODER = """
import hashlib
import numpy as np

def encode(sentences):
    out = []
    for s in sentences:
        seed = int.from_bytes(hashlib.sha1(s.encode()).digest()[:4], "little")
        v = np.random.default_rng(seed).standard_normal(16)
        v[0] += 1.5 if "walked" in s.split() else -1.5
        v[1] += 1.5 if "dogs" in s.split() else -1.5
        out.append(v)
    return np.asarray(out, dtype=np.float32)
"""
_space: dict = {}
exec(ENCODER, _space)
encode = _space["encode"]


def _rows(n: int, offset: int) -> list[tuple[str, str, str]]:
    """(sentence, tense, number) for n sentences, the two properties independent."""
    out = []
    for i in range(offset, offset + n):
        tense, number = ("past", "present")[i % 2], ("plural", "singular")[(i // 2) % 2]
        verb = "walked" if tense == "past" else "walks"
        noun = "dogs" if number == "plural" else "dog"
        out.append((f"the {noun} {verb} home number {i}", tense, number))
    return out


SIZES = {"train": (400, 0), "dev": (100, 1000), "test": (200, 2000)}


def make_task(prop: str, name: str, language: str = "en") -> ProbingTask:
    column = 1 if prop == "Tense" else 2
    splits = {
        split: Split([r[0] for r in rows], [r[column] for r in rows])
        for split, rows in ((s, _rows(*SIZES[s])) for s in SIZES)
    }
    meta = TaskMetadata(name=name, paper_name=prop, language=language, source="toy")
    return ProbingTask(meta, splits)


def run_memory(tasks, erase, encoder=encode, controls=1, fit="train"):
    """Erased in memory; one random control unless the test is about the controls."""
    store = MemoryStore()
    plan = plan_run(
        encoder, tasks, erase=erase, baselines="none", probe="logreg",
        erase_controls=controls, erase_fit=fit,
    )  # fmt: skip
    frame = execute(plan, store, EmbeddingCache(None), progress=False)
    return frame, store.predictions_for(frame["key"])


@pytest.fixture(scope="module")
def erased():
    tasks = [make_task("Tense", "toy/Tense"), make_task("Number", "toy/Number")]
    return run_memory(tasks, ["Tense"], controls=3)


def test_leace_erases_the_property_and_the_control_does_not(erased):
    frame, predictions = erased
    table = erasure_effects(frame, predictions).set_index(["method", "task"])
    leace, control = table.loc[("leace", "Tense")], table.loc[("random", "Tense")]
    assert leace["before"] > 90 and leace["erased_task"]
    assert leace["after_low"] <= leace["majority"] <= leace["after_high"]  # at chance
    assert leace["heldout_low"] <= leace["heldout_majority"] <= leace["heldout_high"]
    assert not leace["failed"]
    number = table.loc[("leace", "Number")]
    assert number["diff_low"] <= 0 <= number["diff_high"]  # the other property is kept
    assert sorted(control["erasure_seed"]) == [0, 1, 2]  # three control seeds by default
    assert (control["diff"].abs() < abs(leace["diff"]) / 4).all()  # the controls keep Tense
    assert leace["rank"] == 1 and (control["rank"] == 1).all()  # binary: one direction
    text = erasure_text(erasure_effects(frame, predictions))
    assert "ERASURE FAILED" not in text and "erased (at chance)" in text
    assert "erased out of sample too" in text and "held-out check [95% CI]" in text
    assert "(3 seeds: range)" in text


def test_the_heatmap_shows_each_change_with_its_ci(erased):
    from sentprobe.cli.report_figures import erasure_plot

    frame, predictions = erased
    plot = erasure_plot(frame, predictions)
    assert plot is not None and "erased out of sample too" in plot.caption
    table = erasure_effects(frame, predictions)
    for t in table[table["method"] == "leace"].itertuples():
        assert f"[{t.diff_low:+.1f}, {t.diff_high:+.1f}]" in plot.svg  # cell text stays text
    t = table[table["erased_task"] & (table["method"] == "leace")].iloc[0]
    assert f"[{t.heldout_low:.1f}, {t.heldout_high:.1f}]" in plot.svg  # the held-out check
    control = table[(table["method"] == "random") & (table["task"] == "Number")]
    spread = f"{control['diff'].min():+.1f} … {control['diff'].max():+.1f}"
    assert spread in plot.svg  # the controls' range over their seeds
    plain = frame[~frame["extra"].map(lambda e: "erasure" in e)]
    assert erasure_plot(plain, predictions) is None  # no erased results: no figure


def test_erased_rows_are_rows_of_their_own(erased):
    frame, _ = erased
    df = resolve(frame)
    assert len(df) == 11  # plain, LEACE, 3 controls on both tasks, Tense's check: none merged
    sizes = df.groupby("erasure").size()
    assert sizes[""] == 2 and sizes.filter(like="random:").tolist() == [2, 2, 2]
    assert sizes.filter(regex="^leace:").tolist() == [2]
    assert sizes.filter(regex="^heldout:leace:").tolist() == [1]  # the check: its own row
    assert set(df["base_row"]) == {df.loc[df["erasure"] == "", "row_id"].iloc[0]}
    table = pivot(df, "test_score", "mean")
    assert len(table) == 6  # six rows of the results table, each its own scores
    assert table.loc["encode −Tense"].iloc[0] < table.loc["encode"].iloc[0]


def test_the_erasure_is_part_of_the_identity_even_under_one_fingerprint(erased):
    """The guard in identity.IDENTITY: results that differ only in their erasure stay apart."""
    frame, _ = erased
    same = frame.assign(encoder_fingerprint=frame["encoder_fingerprint"].iloc[0])
    assert len(resolve(same)) == 11


def test_one_task_name_in_two_languages_gives_two_erasures():
    tasks = [make_task("Tense", "en/Tense", "en"), make_task("Tense", "de/Tense", "de")]
    frame, predictions = run_memory(tasks, ["Tense"])
    df = resolve(frame)
    assert df["erasure"].nunique() == 7 and len(df) == 12  # plain + 2 x (LEACE, random, check)
    table = erasure_effects(frame, predictions)
    assert sorted(table["erased"].unique()) == ["Tense (de)", "Tense (en)"]
    own = table[table["erased_task"]]
    assert sorted(own["task"]) == ["Tense (de)", "Tense (de)", "Tense (en)", "Tense (en)"]
    assert (own["erased"] == own["task"]).all()


def test_a_failed_erasure_is_said_plainly():
    """Letter counts of the mock task: LEACE equalises the class means, but the classes still
    differ in other ways a linear probe with little regularisation separates."""
    task = make_mock_task("A", n_train=200, n_dev=50, n_test=100, seed=0)
    table = erasure_effects(*run_memory([task], ["A"], letter_counts))
    assert table.loc[table["method"] == "leace", "failed"].all()
    assert "ERASURE FAILED: letter_counts, A after LEACE" in erasure_text(table)


def _write_tasks(folder) -> list[str]:
    paths = []
    for prop, column in (("Tense", 1), ("Number", 2)):
        lines = ["sentence\tlabel\tsplit"]
        for split in SIZES:
            lines += [f"{r[0]}\t{r[column]}\t{split}" for r in _rows(*SIZES[split])]
        path = folder / f"{prop.lower()}.tsv"
        path.write_text("\n".join(lines) + "\n")
        paths.append(str(path))
    return paths


def test_cli_erases_a_user_tsv_task_and_reports_it(tmp_path):
    (tmp_path / "toy.py").write_text(ENCODER)
    tasks = ",".join(_write_tasks(tmp_path))
    results = tmp_path / "r.sqlite"
    common = ["-e", f"{tmp_path / 'toy.py'}:encode", "-t", tasks, "--baselines", "majority"]
    cache = ["--results", str(results), "--cache-dir", str(tmp_path / "cache"), "-q"]
    run = CliRunner().invoke(app, ["run", *common, *cache, "--erase", "tense"])
    assert run.exit_code == 0, run.output
    report = CliRunner().invoke(app, ["report", "--results", str(results), "--erasure"])
    assert report.exit_code == 0, report.output
    assert "### encode: tense erased (logreg probe; rank 1)" in report.output
    assert "erased (at chance)" in report.output and "| number |" in report.output
    cached = [p for p in (tmp_path / "cache").iterdir() if p.is_dir()]
    assert len(cached) == 1  # the plain encoder's vectors only: erased ones are never cached


def test_cli_erase_of_a_task_not_in_the_run_fails_before_writing(tmp_path):
    (tmp_path / "toy.py").write_text(ENCODER)
    tasks = ",".join(_write_tasks(tmp_path))
    results = tmp_path / "out" / "r.sqlite"
    args = ["run", "-e", f"{tmp_path / 'toy.py'}:encode", "-t", tasks, "--erase", "Mood",
            "--results", str(results), "--cache-dir", str(tmp_path / "cache"), "-q"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines == ["error: --erase Mood: no such task in this run (tasks: tense, number)"]
    assert not results.parent.exists() and not (tmp_path / "cache").exists()


def test_each_view_of_a_layered_encoder_gets_its_own_eraser():
    from sentprobe.encoders.base import Encoder

    class TwoLayers(Encoder):
        name, fingerprint = "two", "two-layers-v1"
        views = ["layer0", "layer1"]  # type: ignore[assignment]

        def encode(self, sentences):
            v = encode(sentences)
            return np.stack([v, v[:, ::-1] * 3.0], 1)  # the second layer: another basis

    table = erasure_effects(*run_memory([make_task("Tense", "toy/Tense")], ["Tense"], TwoLayers()))
    leace = table[table["method"] == "leace"]
    assert sorted(leace["encoder"]) == ["two@layer0", "two@layer1"]
    assert not leace["failed"].any() and (leace["diff"] < -30).all()


def test_the_control_takes_its_rank_from_the_leace_fit_it_pairs_with(monkeypatch):
    """LEACE is fit once per (erased task, view): the random control reuses that fit's rank."""
    import sentprobe.evaluation.erasure as erasure_module

    fits = []
    real = erasure_module._leace

    def counted(X, labels):
        fits.append(X.shape)
        return real(X, labels)

    monkeypatch.setattr(erasure_module, "_leace", counted)
    tasks = [make_task("Tense", "toy/Tense"), make_task("Number", "toy/Number")]
    table = erasure_effects(*run_memory(tasks, ["Tense"]))
    assert fits == [(400, 16)]
    ranks = table.groupby("method")["rank"].unique()
    assert ranks["leace"].tolist() == ranks["random"].tolist() == [1]


def test_evaluate_gives_the_effects_in_memory():
    frame = sentprobe.evaluate(
        encode, [make_task("Tense", "toy/Tense")], erase=["toy/Tense"], erase_controls=1
    )
    effects = frame.attrs["erasure"]
    assert len(frame) == 4 and list(effects["method"]) == ["leace", "random"]
    assert not effects["failed"].any() and effects["erased_task"].all()


def test_report_erasure_without_erased_results_says_what_to_run(erased, tmp_path):
    frame, predictions = erased
    plain = frame[~frame["extra"].map(lambda e: "erasure" in e)]
    with pytest.raises(sentprobe.errors.SentprobeError, match="run `sentprobe run --erase"):
        erasure_effects(plain, predictions)


def test_erased_results_without_their_plain_results_are_not_compared(erased):
    frame, predictions = erased
    only_erased = frame[frame["extra"].map(lambda e: "erasure" in e)]
    with pytest.raises(sentprobe.errors.SentprobeError):
        erasure_effects(only_erased, predictions)
    assert isinstance(erasure_effects(frame, predictions), pd.DataFrame)


def test_a_feature_of_tiny_scale_is_erased_too():
    """The probe z-scores features, so a property carried by a feature of scale 1e-20 is read
    at full scale; LEACE fit on raw vectors treats that direction as null and leaves it."""
    from sentprobe.evaluation.erasure import _leace
    from sentprobe.probes import make_probe

    rng = np.random.default_rng(0)
    y = np.array(["a", "b"] * 300)
    X = rng.standard_normal((600, 8))
    X[:, 0] += np.where(y == "a", 1.5, -1.5)
    X[:, 1] = (np.where(y == "a", 1.0, -1.0) + rng.standard_normal(600)) * 1e-20
    fit = _leace(X[:400], list(y[:400]))
    erase = fit.erase
    probe = make_probe("logreg", "toy", 0).fit(
        erase(X[:300]), y[:300], erase(X[300:400]), y[300:400]
    )
    assert fit.rank == 1 and np.mean(probe.predict(erase(X[400:])) == y[400:]) < 0.62
