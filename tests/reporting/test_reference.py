"""Reference rows from a CSV: loading, one-line errors, and how reports show them apart."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from sentprobe.errors import DataError
from sentprobe.reporting.compose import report_text
from sentprobe.reporting.reference import TITLE, load_reference


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "human.csv"
    path.write_text(text, encoding="utf-8")
    return path


def _results() -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"encoder": "MiniLM", "task": t, "test_score": s, "seed": 0, "probe": "logreg"}
            for t, s in (("SentLen", 0.8), ("BShift", 0.6))
        ]
    )


def test_load_reference(tmp_path: Path) -> None:
    path = _write(
        tmp_path, "row,task,score,note\nHuman Eval.,SentLen,100,\nHuman Eval.,BShift,98.0,n=100\n"
    )
    ref = load_reference(path)
    assert ref[["row", "task", "score"]].values.tolist() == [
        ["Human Eval.", "SentLen", 100.0],
        ["Human Eval.", "BShift", 98.0],
    ]
    assert set(ref["kind"]) == {"reference"}


@pytest.mark.parametrize(
    ("text", "where", "problem"),
    [
        ("row,task\nH,SentLen\n", "line 1", "lacks column(s) score"),
        ("row,task,score,extra\nH,SentLen,9,x\n", "line 1", "unknown column(s) extra"),
        ("row,task,score\nH,SentLen,9\nH,BShift,high\n", "line 3", "'high' is not a number"),
        ("row,task,score\nH,SentLen,120\n", "line 2", "not a percentage"),
        ("row,task,score\n,SentLen,12\n", "line 2", "empty row"),
        ("row,task,score\nH,SentLen,12,3\n", "line 2", "4 fields, the header has 3"),
        ("row,task,score\nH,WC,1\n\nH,WC,2\n", "line 4", "already given on line 2"),
        ("row,task,score\n", "human.csv", "only a header"),
    ],
)
def test_bad_reference_files_name_file_line_and_problem(tmp_path, text, where, problem) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(DataError) as err:
        load_reference(path)
    message = str(err.value)
    assert message.startswith(str(path)) and where in message and problem in message
    assert "\n" not in message


def test_reference_rows_are_shown_apart(tmp_path: Path) -> None:
    ref = load_reference(_write(tmp_path, "row,task,score\nHuman,BShift,98\nHuman,TopConst,84\n"))
    markdown = report_text(_results(), "markdown", reference=ref)
    table, section = markdown.split(f"**{TITLE.capitalize()}**")
    assert "Human" not in table
    assert "| *Human* |" in section and "*98.0*" in section and "*84.0*" in section
    # same columns as the measured table (SentLen empty), then the tasks it does not have
    header = [c.strip() for c in section.strip().splitlines()[0].strip("|").split("|")]
    assert header == ["Row", "SentLen", "BShift", "TopConst"]

    records = json.loads(report_text(_results(), "json", reference=ref))
    assert [(r["encoder"], r["task"], r["kind"]) for r in records] == [  # one tidy schema
        ("MiniLM", "SentLen", "measured"),
        ("MiniLM", "BShift", "measured"),
        ("Human", "BShift", "reference"),
        ("Human", "TopConst", "reference"),
    ]
    assert records[2]["score"] == 98.0 and records[2]["ci_low"] is None
    assert set(records[0]) == set(records[2])  # one schema for measured and reference rows
    csv = report_text(_results(), "csv", reference=ref)
    assert csv.splitlines()[0].endswith(",kind") and csv.splitlines()[-1].endswith(",reference")


# ---------------------------------------------------------------------------- published tables

PAPERS = Path(__file__).resolve().parents[2].parent / "shared" / "papers"


def test_published_tables_load_with_their_citation() -> None:
    from sentprobe.reporting.reference import PUBLISHED, reference_rows

    sizes = {"conneau2018": (30, 10), "xprobe2019": (36, 9), "kim2019": (3, 9)}
    for name, (rows, tasks) in sizes.items():
        ref = reference_rows(name)
        assert (ref["row"].nunique(), ref["task"].nunique()) == (rows, tasks), name
        assert len(ref) == rows * tasks and ref["score"].between(0, 100).all()
        assert ref.attrs["citation"].startswith(PUBLISHED[name].citation)
    # spot checks, read off the papers by hand
    conneau = reference_rows("conneau2018").set_index(["row", "task"])["score"]
    assert conneau[("BiLSTM-max NLI", "WC")] == 87.3
    assert conneau[("Hum. Eval.", "SOMO")] == 81.2 and conneau[("Majority vote", "TopConst")] == 5
    xprobe = reference_rows("xprobe2019").set_index(["row", "task"])["score"]
    assert xprobe[("RNN (last) [Russian]", "Tense")] == 68.0  # printed 0.68
    assert xprobe[("CNN (maxpool) [German]", "WC")] == 0.0
    kim = reference_rows("kim2019").set_index(["row", "task"])
    assert kim.loc[("Human: Accuracy", "Prep"), "score"] == 77.4
    assert kim.loc[("Human: Accuracy", "Prep"), "note"] == "Table 3 size: 358"


@pytest.mark.skipif(not PAPERS.is_dir(), reason="../shared/papers is not available")
def test_published_tables_are_the_papers_numbers() -> None:
    """Every shipped row is a line of the paper's table, number for number and in order."""
    from sentprobe.reporting.reference import reference_rows

    def printed(name: str, width: int) -> dict[str, list[list[float]]]:
        """label -> the number sequences of the paper's lines ending in ``width`` numbers."""
        found: dict[str, list[list[float]]] = {}
        for line in (PAPERS / name).read_text(encoding="utf-8").splitlines():
            words = line.split()
            try:
                values = [float(w) for w in words[-width:]]
            except ValueError:
                continue
            if len(words) > width:
                found.setdefault(" ".join(words[:-width]), []).append(values)
        return found

    def check(ref: pd.DataFrame, paper: dict, label, scale: float = 1.0) -> None:
        for row in dict.fromkeys(ref["row"]):
            values = [v / scale for v in ref[ref["row"] == row]["score"]]
            assert any(v == pytest.approx(values) for v in paper[label(row)]), row

    conneau = printed("conneau2018-probing-sentence-embeddings.txt", 10)
    grouped = ("BiLSTM", "GatedConvNet")  # "BiLSTM-max NLI" is printed "NLI" under its group
    check(
        reference_rows("conneau2018"),
        conneau,
        lambda r: r.split(" ", 1)[1] if r.startswith(grouped) else r,
    )
    xprobe = printed("ravishankar2019-xprobe-multilingual.txt", 9)
    check(reference_rows("xprobe2019"), xprobe, lambda r: r.rsplit(" [", 1)[0], scale=100)
    kim, text = (
        reference_rows("kim2019"),
        (PAPERS / "kim2019-function-word-probing.txt").read_text(),
    )
    for task, group in kim.groupby("task", sort=False):
        acc, agree, unan = (group[group["row"] == f"Human: {c}"]["score"].iloc[0]
                            for c in ("Accuracy", "Agree", "Unan."))  # fmt: skip
        size = group[group["row"] == "Human: Accuracy"]["note"].iloc[0].rsplit(" ", 1)[1]
        assert f"| {agree} | {unan} | {acc} | {size} |" in text, task


def test_report_shows_a_published_table_apart(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from sentprobe.cli.main import app
    from sentprobe.evaluation.store import ResultRecord, ResultsStore

    store = tmp_path / "r.sqlite"
    with ResultsStore(store) as s:
        for task, score in (("SentLen", 0.7), ("WC", 0.4)):
            s.add(ResultRecord(
                encoder="MiniLM", encoder_fingerprint="fp", task=task, task_source="x",
                task_hash=task, category="surface", language="en", seed=0, probe="logreg",
                selection="dev", config={}, dev_score=score, test_score=score, n_train=10,
                n_dev=2, n_test=4, n_classes=2, dim=8,
            ), task)  # fmt: skip
    args = ["report", "--results", str(store), "--no-ci", "--reference", "conneau2018"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    measured, reference = res.stdout.split(f"**{TITLE.capitalize()}**")
    assert "Majority vote" not in measured and "| MiniLM      |" in measured
    assert re.search(r"\| \*Hum\. Eval\.\* +\| +\*100\.0\* +\| +\*100\.0\* +\|", reference)
    assert "Published, not measured here: Conneau, Kruszewski" in reference
    res = CliRunner().invoke(app, [*args[:-1], "kim2019", "-f", "json"])
    records = json.loads(res.stdout)
    assert {r["kind"] for r in records} == {"measured", "reference"}
    human = next(
        r for r in records if r["encoder"] == "Human: Accuracy" and r["task"] == "Negation"
    )
    assert human["score"] == 80.1 and human["source"].startswith("Kim, Patel")
    page = tmp_path / "report.html"
    res = CliRunner().invoke(app, [*args, "--html", str(page)])
    assert res.exit_code == 0, res.output
    html = page.read_text(encoding="utf-8")
    assert "Hum. Eval. (reference)" in html and "published, not measured here: Conneau" in html
    res = CliRunner().invoke(app, [*args[:-1], "conneau2019"])
    assert res.exit_code == 1 and "built-in tables: conneau2018, xprobe2019, kim2019" in res.output
