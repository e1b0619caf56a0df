"""Cross-language reports: relative scores, the Table-1 summary, the heatmap, the CLI."""

from __future__ import annotations

import json
import sys

import pandas as pd
import pytest

from sentprobe.cli.main import main
from sentprobe.errors import SentprobeError
from sentprobe.evaluation.store import ResultRecord, ResultsStore
from sentprobe.reporting.crosslang import (
    crosslang_report,
    relative_heatmap,
    relative_scores,
    task_summary,
)

# encoder -> language -> task -> accuracy (0-1)
SCORES = {
    "A": {
        "en": {"SentLen": 0.80, "WC": 0.50, "BShift": 0.60},
        "de": {"SentLen": 0.90, "WC": 0.30, "BShift": 0.60},
        "fr": {"SentLen": 0.70, "WC": 0.40, "BShift": 0.55},
    },
    "B": {
        "en": {"SentLen": 0.60, "WC": 0.20, "BShift": 0.50},
        "de": {"SentLen": 0.65, "WC": 0.10, "BShift": 0.52},
        "fr": {"SentLen": 0.60, "WC": 0.25},  # no BShift in French
    },
}


def row(encoder, language, task, score, seed=0, probe="logreg", created="2024-01-01"):
    return dict(
        encoder=encoder,
        task=task,
        language=language,
        test_score=score,
        seed=seed,
        probe=probe,
        task_source=language,
        category="other",
        created=created,
    )


@pytest.fixture
def frame() -> pd.DataFrame:
    rows = [
        row(e, lang, t, s)
        for e, langs in SCORES.items()
        for lang, tasks in langs.items()
        for t, s in tasks.items()
    ]
    rows.append(row("Majority", "de", "WC", 0.001))  # a baseline: left out by default
    return pd.DataFrame(rows)


def cell(df, encoder, task, language, column="relative"):
    sel = df[(df.encoder == encoder) & (df.task == task) & (df.language == language)]
    assert len(sel) == 1
    return float(sel[column].iloc[0])


def test_relative_scores_in_points_and_ratio(frame):
    rel = relative_scores(frame, "en")
    assert set(rel.language) == {"de", "fr"} and set(rel.encoder) == {"A", "B"}
    assert cell(rel, "A", "SentLen", "de") == pytest.approx(10.0)
    assert cell(rel, "A", "WC", "de") == pytest.approx(-20.0)
    assert cell(rel, "B", "WC", "fr") == pytest.approx(5.0)
    assert cell(rel, "A", "WC", "de", "reference_score") == pytest.approx(50.0)
    assert len(rel) == 11  # 2 encoders x 2 languages x 3 tasks, minus B/fr/BShift
    assert list(rel[rel.encoder == "A"].task[:3]) == ["SentLen", "WC", "BShift"]  # paper order
    ratio = relative_scores(frame, "en", mode="ratio")
    assert cell(ratio, "B", "SentLen", "de") == pytest.approx(65 / 60)


def test_seeds_are_averaged_and_task_language_prefix_dropped():
    frame = pd.DataFrame(
        [
            row("A", "en", "SentLen", 0.5),
            row("A", "de", "de/SentLen", 0.6, seed=0),
            row("A", "de", "de/SentLen", 0.8, seed=1),
            row("A", "de", "de/SentLen", 0.1, seed=1, created="2023-01-01"),  # older: replaced
        ]
    )
    rel = relative_scores(frame, "en")
    assert cell(rel, "A", "SentLen", "de") == pytest.approx(20.0)


def test_task_summary_mean_and_std_across_languages_and_encoders(frame):
    summary = task_summary(frame).set_index("task")
    assert list(summary.index) == ["SentLen", "WC", "BShift"]
    sentlen = [80, 90, 70, 60, 65, 60]
    assert summary.loc["SentLen", "mean"] == pytest.approx(sum(sentlen) / 6)
    assert summary.loc["SentLen", "std"] == pytest.approx(pd.Series(sentlen).std(ddof=1))
    assert summary.loc["BShift", "n"] == 5
    assert summary.loc["WC", "encoders"] == 2 and summary.loc["WC", "languages"] == 3
    with_baselines = task_summary(frame, include_baselines=True).set_index("task")
    assert with_baselines.loc["WC", "n"] == 7


def test_markdown_report_uses_the_results_table_layout(frame):
    text = crosslang_report(frame, "en")
    assert "### test_score relative to en (difference in points, majority not removed)" in text
    assert "| **Encoder** | **SentLen** | **WC** | **BShift** |" in text
    a_de = next(line for line in text.splitlines() if line.startswith("| A (de)"))
    assert [c.strip() for c in a_de.strip("|").split("|")][1:] == ["10.0", "-20.0", "0.0"]
    b_fr = next(line for line in text.splitlines() if line.startswith("| B (fr)"))
    assert b_fr.rstrip(" |").endswith("-")  # missing cell
    assert "70.8 ± 12.0" in text  # SentLen mean ± std
    relative, summary, majority = text.split("### ")[1:]
    assert "Majority" not in relative + summary  # a baseline, not an encoder row
    assert majority.startswith("Majority baseline per language (points)")
    de = next(line for line in majority.splitlines() if line.startswith("| de"))
    assert [c.strip() for c in de.strip("|").split("|")][1:] == ["0.1"]  # only WC


def test_json_and_csv(frame):
    doc = json.loads(crosslang_report(frame, "en", fmt="json"))
    assert doc["reference"] == "en" and len(doc["relative"]) == 11
    assert doc["summary"][0]["task"] == "SentLen"
    csv = crosslang_report(frame, "en", fmt="csv")
    assert csv.splitlines()[0] == (
        "encoder,task,language,score,majority,reference_score,reference_majority,relative,"
        "older_task"
    )
    assert doc["majority"] == [{"task": "WC", "language": "de", "majority": 0.1}]


def test_scores_on_older_task_data_are_marked(frame):
    """Encoder A's German SentLen ran on data that has since changed: its cells say so."""
    frame = frame.assign(task_hash=frame["task"] + "/" + frame["language"])
    stale = (frame["encoder"] == "A") & (frame["task"] == "SentLen") & (frame["language"] == "de")
    frame.loc[stale, "task_hash"] = "SentLen/de-old"
    frame.loc[~stale, "created"] = "2024-02-01"
    rel = relative_scores(frame, "en")
    flagged = rel[rel["older_task"]][["encoder", "task", "language"]].values.tolist()
    assert flagged == [["A", "SentLen", "de"]]
    text = crosslang_report(frame, "en")
    relative_part, summary_part = text.split("### ")[1:3]
    assert "| A (de)" in relative_part and "‡" in relative_part.split("| A (fr)")[0]
    assert "older version of this task's data" in relative_part
    assert "‡" in summary_part  # the summary averages the older score in
    clean = frame.assign(task_hash=frame["task"] + "/" + frame["language"])
    assert "‡" not in crosslang_report(clean, "en")


def test_missing_reference_is_a_clean_error(frame):
    with pytest.raises(SentprobeError, match="reference language 'ru'"):
        relative_scores(frame, "ru")
    with pytest.raises(SentprobeError, match="nothing to compare"):
        relative_scores(frame[frame.language == "en"], "en")


def test_heatmap_is_written(frame, tmp_path):
    pytest.importorskip("matplotlib")
    path = relative_heatmap(frame, "en", tmp_path / "out" / "heat.png")
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def record(encoder: str, language: str, task: str, score: float) -> ResultRecord:
    return ResultRecord(
        encoder=encoder,
        encoder_fingerprint=encoder,
        task=task,
        task_source=language,
        task_hash=f"{language}-{task}",
        category="other",
        language=language,
        seed=0,
        probe="logreg",
        selection="dev",
        config={},
        dev_score=score,
        test_score=score,
        n_train=10,
        n_dev=10,
        n_test=10,
        n_classes=2,
        dim=1,
    )


def test_cli_crosslang(frame, tmp_path, monkeypatch, capsys):
    pytest.importorskip("matplotlib")
    store_path = tmp_path / "r.sqlite"
    with ResultsStore(store_path) as store:
        for i, r in enumerate(frame.itertuples()):
            store.add(record(r.encoder, r.language, r.task, r.test_score), key=str(i))
    heat = tmp_path / "h.png"
    argv = ["sentprobe", "crosslang", "--results", str(store_path), "--reference", "en"]
    # the default removes each language's majority, and the store has only German WC's
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 1
    assert "no Majority rows for en" in capsys.readouterr().err
    monkeypatch.setattr(sys, "argv", [*argv, "--mode", "diff", "--heatmap", str(heat)])
    main()
    out = capsys.readouterr().out
    assert "| A (de)" in out and heat.stat().st_size > 0
    with ResultsStore(store_path) as store:
        for lang in ("en", "de", "fr"):
            for task in ("SentLen", "WC", "BShift"):
                store.add(record("Majority", lang, task, 0.5), key=f"maj-{lang}-{task}")
    monkeypatch.setattr(sys, "argv", [*argv, "--heatmap", str(heat)])
    main()
    out = capsys.readouterr().out
    assert "relative to en (gain over the language's own majority minus the reference's" in out
    monkeypatch.setattr(sys, "argv", [*argv[:-1], "xx"])
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 1


def test_gain_removes_each_languages_majority():
    """X-Probe's Tense: majority 50% in English, 73% in another language. An encoder at 80
    and 85 is 5 points 'better' in raw accuracy, but gains 30 and 12 points over the
    majority class: the language is 18 points worse, which only ``gain`` shows."""
    frame = pd.DataFrame(
        [
            row("A", "en", "Tense", 0.80),
            row("A", "xx", "Tense", 0.85),
            row("Majority", "en", "Tense", 0.50),
            row("Majority", "xx", "Tense", 0.73),
        ]
    )
    gain = relative_scores(frame, "en", mode="gain")
    assert cell(gain, "A", "Tense", "xx") == pytest.approx(-18.0)
    assert cell(gain, "A", "Tense", "xx", "majority") == pytest.approx(73.0)
    assert cell(gain, "A", "Tense", "xx", "reference_majority") == pytest.approx(50.0)
    assert cell(relative_scores(frame, "en", mode="diff"), "A", "Tense", "xx") == pytest.approx(5)
    text = crosslang_report(frame, "en", mode="gain")
    assert "gain over the language's own majority minus the reference's, points" in text
    a_xx = next(line for line in text.splitlines() if line.startswith("| A (xx)"))
    assert "-18.0" in a_xx
    majority = text.split("### Majority baseline per language (points)")[1]
    assert "| xx" in majority and "73.0" in majority and "50.0" in majority
    with pytest.raises(SentprobeError, match="no Majority rows for the other languages"):
        relative_scores(frame[frame.language == "en"].assign(language="en").pipe(
            lambda f: pd.concat([f, pd.DataFrame([row("A", "yy", "Tense", 0.6)])])
        ), "en", mode="gain")  # fmt: skip


def test_control_tasks_are_no_columns():
    frame = pd.DataFrame(
        [row(e, lang, t, 0.6) for e in "AB" for lang in ("en", "de") for t in ("WC", "WC~control")]
    )
    rel = relative_scores(frame, "en", mode="diff")
    assert set(rel["task"]) == {"WC"}


def test_mapped_student_is_compared_with_its_teachers_reference() -> None:
    """A ``map-encoder`` student ("A->fr@epoch-3") in French is compared with A's English
    scores; the same label in another language, or an unrelated arrow, is its own row."""
    rows = [row(e, lang, t, s) for e, langs in SCORES.items() for lang, ts in langs.items()
            for t, s in ts.items()]  # fmt: skip
    rows += [row("A->fr@epoch-3", "fr", "SentLen", 0.75), row("A->fr@epoch-3", "fr", "WC", 0.2)]
    rows += [row("A->de", "fr", "SentLen", 0.5)]  # a student of German probed on French
    rel = relative_scores(pd.DataFrame(rows), "en")
    student = rel[rel["encoder"] == "A->fr@epoch-3"].set_index("task")
    assert student.loc["SentLen", "relative"] == pytest.approx(75 - 80)
    assert student.loc["WC", "relative"] == pytest.approx(20 - 50)
    assert rel[rel["encoder"] == "A->de"]["reference_score"].isna().all()
    only = relative_scores(pd.DataFrame(rows), "en", encoders=["A->fr@epoch-3"])
    assert set(only["encoder"]) == {"A->fr@epoch-3"} and only["relative"].notna().all()
