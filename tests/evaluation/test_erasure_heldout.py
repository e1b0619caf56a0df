"""Erasure judged out of sample (the held-out check, ``--erase-fit``) and its random controls
in LEACE's z-scored coordinates (``--erase-controls``)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from test_erasure import ENCODER, SIZES, _write_tasks, make_task, run_memory
from typer.testing import CliRunner

from sentprobe.analysis.erasure import erasure_effects, erasure_text
from sentprobe.cli.main import app
from sentprobe.datasets.task import ProbingTask, Split, TaskMetadata
from sentprobe.evaluation.identity import resolve


def _noise(s: str, dim: int = 16) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha1(s.encode()).digest()[:4], "little")
    return np.random.default_rng(seed).standard_normal(dim)


def lexical(sentences):
    """Tense on dimension 0 for the verb "walk" (training sentences), on dimension 2 for
    "run" (dev and test): a lexical split moves the class-mean direction between splits."""
    out = []
    for s in sentences:
        v, words = _noise(s), s.split()
        if {"walked", "walks"} & set(words):
            v[0] += 1.5 if "walked" in words else -1.5
        if {"ran", "runs"} & set(words):
            v[2] += 1.5 if "ran" in words else -1.5
        out.append(v)
    return np.asarray(out, dtype=np.float32)


def lexical_task() -> ProbingTask:
    splits = {}
    for split, (n, offset) in SIZES.items():
        verbs = ("walked", "walks") if split == "train" else ("ran", "runs")
        rows = [(f"the dog {verbs[i % 2]} home number {i}", ("past", "present")[i % 2])
                for i in range(offset, offset + n)]  # fmt: skip
        splits[split] = Split([r[0] for r in rows], [r[1] for r in rows])
    return ProbingTask(TaskMetadata(name="toy/Tense", paper_name="Tense", language="en"), splits)


def test_an_erasure_at_chance_in_sample_but_not_out_of_sample_is_said_to_fail():
    """The eraser fit on training sentences leaves the property of other words in place: the
    probe trained on erased training vectors is at chance, the held-out check is not."""
    table = erasure_effects(*run_memory([lexical_task()], ["Tense"], lexical))
    own = table[table["erased_task"] & (table["method"] == "leace")].iloc[0]
    assert own["after_low"] <= own["majority"] <= own["after_high"]  # at chance in sample
    assert not own["failed_in_sample"] and own["heldout"] > 80  # ... but not out of sample
    assert own["failed_held_out"] and own["failed"]
    assert own["check"] == "trained on erased dev, scored on erased test"
    assert own["heldout_n"] == SIZES["test"][0]
    text = erasure_text(table)
    assert "ERASURE FAILED out of sample: lexical, Tense after LEACE: held-out check" in text
    assert "FAILED |" in text  # the table's held-out cell
    records = erasure_text(table, "json")
    assert '"heldout": ' in records and '"failed_held_out": true' in records
    assert "heldout_low" in erasure_text(table, "csv").splitlines()[0]


def test_the_held_out_check_is_a_row_of_its_own_on_the_tasks_items():
    frame, predictions = run_memory([lexical_task()], ["Tense"], lexical)
    df = resolve(frame)
    check = df[df["erasure"].str.startswith("heldout:")]
    leace = df[df["erasure"].str.startswith("leace:")]
    assert len(check) == len(leace) == 1
    assert check["erasure"].iloc[0] == "heldout:" + leace["erasure"].iloc[0]
    assert check["row_id"].iloc[0] != leace["row_id"].iloc[0]
    assert check["task_hash"].iloc[0] == leace["task_hash"].iloc[0]  # the task's own data
    assert check["n_train"].iloc[0] == SIZES["dev"][0]  # trained on dev, not on train
    assert check["encoder"].iloc[0] == "lexical −Tense (held-out check)"
    assert leace["test_score"].iloc[0] < 0.6 < check["test_score"].iloc[0]  # never merged


def test_fit_on_train_and_dev_cross_fits_the_check_within_test(monkeypatch):
    import sentprobe.evaluation.erasure as erasure_module

    fits = []
    real = erasure_module._leace
    monkeypatch.setattr(
        erasure_module, "_leace", lambda X, labels: fits.append(len(X)) or real(X, labels)
    )
    frame, predictions = run_memory([make_task("Tense", "toy/Tense")], ["Tense"], fit="train+dev")
    assert fits == [SIZES["train"][0] + SIZES["dev"][0]]
    table = erasure_effects(frame, predictions)
    own = table[table["erased_task"] & (table["method"] == "leace")].iloc[0]
    assert own["fit"] == "train+dev" and own["check"].startswith("5-fold cross-fitting")
    assert own["heldout_n"] == SIZES["test"][0]
    assert own["heldout_low"] <= own["heldout_majority"] <= own["heldout_high"]
    assert "[train+dev]" in resolve(frame)["erasure"].iloc[-1]
    text = erasure_text(table)
    assert "fit on train+dev" in text and "held-out check (5-fold cross-fitting" in text


def tiny(sentences):
    """Tense on dimension 0 at unit scale; Number on three features of tiny scale (like
    MiniLM's features 127, 223 and 319), which a standardising probe reads at full scale."""
    out = []
    for s in sentences:
        v, words = _noise(s), s.split()
        v[0] += 1.5 if "walked" in words else -1.5
        number = 1.0 if "dogs" in words else -1.0
        v[13:] = (number + v[13:]) * np.array([1e-30, 1e-30, 1e-8])
        out.append(v)
    return np.asarray(out, dtype=np.float32)


def test_the_random_controls_leave_a_tiny_scale_property_alone():
    """A random subspace removed in raw coordinates mixes unit-scale features into the
    tiny ones and wipes Number out; in LEACE's z-scored coordinates it does not."""
    tasks = [make_task("Tense", "toy/Tense"), make_task("Number", "toy/Number")]
    table = erasure_effects(*run_memory(tasks, ["Tense"], tiny, controls=3))
    number = table[(table["method"] == "random") & (table["task"] == "Number")]
    assert number["before"].iloc[0] > 90 and sorted(number["erasure_seed"]) == [0, 1, 2]
    assert ((number["diff_low"] <= 0) & (number["diff_high"] >= 0)).all(), number


def test_erase_options_reach_the_run_and_the_report(tmp_path):
    (tmp_path / "toy.py").write_text(ENCODER)
    tasks = ",".join(_write_tasks(tmp_path))
    results = tmp_path / "r.sqlite"
    run = CliRunner().invoke(
        app,
        ["run", "-e", f"{tmp_path / 'toy.py'}:encode", "-t", tasks, "--baselines", "none",
         "--results", str(results), "--cache-dir", str(tmp_path / "cache"), "-q",
         "--erase", "tense", "--erase-fit", "train+dev", "--erase-controls", "2"],
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    report = CliRunner().invoke(app, ["report", "--results", str(results), "--erasure"])
    assert report.exit_code == 0, report.output
    assert "rank 1, fit on train+dev)" in report.output and "(2 seeds: range)" in report.output
    assert "held-out check (5-fold cross-fitting within erased test)" in report.output


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--erase-fit", "dev"], "error: --erase-fit dev: expected one of train, train+dev"),
        (["--erase-controls", "0"], "--erase-controls"),
    ],
)
def test_bad_erase_options_fail_before_anything_is_computed(tmp_path, option, message):
    (tmp_path / "toy.py").write_text(ENCODER)
    tasks = ",".join(_write_tasks(tmp_path))
    results = tmp_path / "out" / "r.sqlite"
    args = ["run", "-e", f"{tmp_path / 'toy.py'}:encode", "-t", tasks, "--erase", "tense",
            "--results", str(results), "--cache-dir", str(tmp_path / "cache"), "-q"]  # fmt: skip
    result = CliRunner().invoke(app, [*args, *option])
    assert result.exit_code in (1, 2) and message in result.output
    assert not results.parent.exists()


def test_train_and_dev_fit_needs_a_dev_split():
    from sentprobe.errors import SentprobeError
    from sentprobe.evaluation.erasure import erased_tasks

    task = make_task("Tense", "toy/Tense")
    no_dev = ProbingTask(task.metadata, {k: v for k, v in task.splits.items() if k != "dev"})
    with pytest.raises(SentprobeError, match="train\\+dev: toy/Tense has no dev split"):
        erased_tasks(["Tense"], [no_dev], "train+dev")
    assert erased_tasks(["Tense"], [no_dev], "train") == [no_dev]  # the check cross-fits
