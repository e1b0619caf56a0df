"""Reference rows from a CSV: loading, one-line errors, and how reports show them apart."""

from __future__ import annotations

import json
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
    assert [(r["encoder"], r["kind"]) for r in records] == [
        ("MiniLM", "measured"),
        ("Human", "reference"),
    ]
    assert records[1]["BShift"] == 98.0 and records[1]["SentLen"] is None
    csv = report_text(_results(), "csv", reference=ref)
    assert csv.splitlines()[0].endswith(",kind") and csv.splitlines()[-1].endswith(",reference")
