"""Reference rows: scores sentprobe did not measure (the paper's human row, published numbers),
read from a CSV and shown apart from the measured rows so nobody mistakes one for the other.

The CSV has a header with the columns ``row``, ``task`` and ``score`` (a percentage, 0-100)
and optionally ``note``; one line per (row, task). ``task`` is the task's short name as in the
results table's columns (``SentLen``, ``WC``, ...).

Built-in names (:data:`PUBLISHED`) give the papers' own tables, transcribed from the papers in
the same format (``sentprobe/datasets/data/reference/``) and shown with their citation:
``conneau2018``, ``xprobe2019`` and ``kim2019``.
"""

from __future__ import annotations

import io
import json
import math
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import pandas as pd

from sentprobe.datasets.loaders.dnc import CITATION as KIM_CITATION
from sentprobe.errors import DataError, SentprobeError
from sentprobe.io import read_csv_table
from sentprobe.reporting.render import (
    csv_table,
    json_records,
    latex_escape,
    latex_table,
    markdown_table,
)
from sentprobe.reporting.tables import pivot

REQUIRED = ("row", "task", "score")
#: What the reference section is called wherever it is shown.
TITLE = "reference (not measured by sentprobe)"


@dataclass(frozen=True)
class Published:
    """A paper's table shipped as reference rows: its file, citation and what it holds."""

    file: str
    citation: str
    what: str
    #: the file keeps the paper's numbers as printed; this turns them into percentages
    scale: float = 1.0


#: Built-in reference tables: ``report --reference NAME``.
PUBLISHED: dict[str, Published] = {
    "conneau2018": Published(
        "conneau2018.csv",
        "Conneau, Kruszewski, Lample, Barrault, Baroni (2018). What you can cram into a single "
        "$&!#* vector: Probing sentence embeddings for linguistic properties. ACL 2018, Table 2",
        "test accuracy (%) of the baselines, the human bound (Hum. Eval.) and 24 encoders "
        "(BiLSTM-last, BiLSTM-max, GatedConvNet x 8 training tasks); MLP probe, logistic "
        "regression on WC",
    ),
    "xprobe2019": Published(
        "xprobe2019.csv",
        "Ravishankar, Øvrelid, Velldal (2019). Probing Multilingual Sentence Representations "
        "With X-Probe. RepL4NLP 2019, Table 4",
        "test accuracy of six encoders per language [in brackets]; English rows are the "
        "unmapped NLI encoders, the others post-mapping; printed as fractions with two "
        "decimals, shown x 100; the paper's BiShift is BShift",
        scale=100.0,
    ),
    "kim2019": Published(
        "kim2019.csv",
        KIM_CITATION + ", Table 3",
        "the annotation figures of each probing set (the table's columns Agree, Unan. and "
        "Accuracy, in %; its Size in the notes); the paper calls the table inter-annotator "
        "agreement",
    ),
}


def reference_rows(spec: str | Path) -> pd.DataFrame:
    """The reference rows of a CSV file, or of a built-in name (:data:`PUBLISHED`) when no
    file of that name exists; a built-in's frame carries ``attrs["citation"]``."""
    if not Path(spec).is_file() and str(spec).lower() in PUBLISHED:
        return load_published(str(spec).lower())
    return load_reference(spec)


def load_published(name: str) -> pd.DataFrame:
    """A built-in paper table (:data:`PUBLISHED`) as reference rows, in percent."""
    if name not in PUBLISHED:
        known = ", ".join(PUBLISHED)
        raise SentprobeError(f"no published reference table {name!r} (built-in: {known})")
    source = PUBLISHED[name]
    data = resources.files("sentprobe.datasets") / "data" / "reference" / source.file
    with resources.as_file(data) as path:
        frame = load_reference(path, scale=source.scale)
    frame.attrs["citation"] = f"{source.citation}: {source.what}"
    return frame


def load_reference(path: str | Path, scale: float = 1.0) -> pd.DataFrame:
    """Rows ``row, task, score, note, kind="reference"`` (``score`` times ``scale``, then a
    percentage); a bad file is a ``DataError`` naming the file, the line and the problem."""
    path = Path(path)
    if not path.is_file():
        known = ", ".join(PUBLISHED)
        raise DataError(path, None, f"no such reference file (built-in tables: {known})")
    table = read_csv_table(
        path, REQUIRED, ("note",), hint="the columns row, task and score (optionally note)"
    )
    records: list[dict[str, object]] = []
    seen: dict[tuple[str, str], int] = {}
    for lineno, item in table:
        for column in ("row", "task"):
            if not item[column]:
                raise DataError(path, lineno, f"empty {column}")
        try:
            score = round(float(item["score"]) * scale, 9)  # 0.57 x 100 is 57.0, not 56.99...
        except ValueError:
            raise DataError(path, lineno, f"score {item['score']!r} is not a number") from None
        if not (math.isfinite(score) and 0 <= score <= 100):
            raise DataError(path, lineno, f"score {item['score']} is not a percentage (0-100)")
        key = (item["row"], item["task"])
        if key in seen:
            raise DataError(path, lineno, f"{key[0]} / {key[1]} already given on line {seen[key]}")
        seen[key] = lineno
        records.append(
            {"row": key[0], "task": key[1], "score": score, "note": item.get("note", "")}
        )
    if not records:
        raise DataError(path, None, "no reference scores (only a header)")
    frame = pd.DataFrame(records, columns=["row", "task", "score", "note"])
    frame["kind"] = "reference"
    return frame


def _columns(results: pd.DataFrame, reference: pd.DataFrame) -> list[str]:
    """The results table's task columns, then reference tasks it does not have."""
    measured = [task for _, task in pivot(results).columns] if not results.empty else []
    extra = [t for t in dict.fromkeys(reference["task"]) if t not in measured]
    return measured + extra


def reference_section(
    reference: pd.DataFrame, results: pd.DataFrame, fmt: str, decimals: int = 1
) -> str:
    """The reference rows as their own table (markdown: italic cells; LaTeX: ``\\textit``),
    with the results table's columns, under the title ``TITLE``."""
    columns = _columns(results, reference)
    wide = reference.pivot(index="row", columns="task", values="score")
    rows = list(dict.fromkeys(reference["row"]))
    notes = [f"{r.row} / {r.task}: {r.note}" for r in reference.itertuples(index=False) if r.note]
    if reference.attrs.get("citation"):
        notes.insert(0, f"Published, not measured here: {reference.attrs['citation']}.")

    def cell(row: str, task: str) -> float | None:
        value = wide.at[row, task] if task in wide.columns else math.nan
        return None if pd.isna(value) else round(float(value), decimals)

    if fmt == "markdown":
        body = [[f"*{row}*", *(_italic(cell(row, t), decimals) for t in columns)] for row in rows]
        text = f"**{TITLE.capitalize()}**\n\n" + markdown_table(["Row", *columns], body)
        return text + "".join(f"\n{n}" for n in notes) + ("\n" if notes else "")
    if fmt == "latex":
        body = [
            [rf"\textit{{{latex_escape(row)}}}"]
            + [
                "-" if cell(row, t) is None else rf"\textit{{{cell(row, t):.{decimals}f}}}"
                for t in columns
            ]
            for row in rows
        ]
        header = [latex_escape(TITLE.capitalize()), *(latex_escape(c) for c in columns)]
        return latex_table(header, body, notes=[latex_escape(n) for n in notes])
    raise SentprobeError(f"reference rows are shown in markdown or latex here, not {fmt!r}")


def _italic(value: float | None, decimals: int) -> str:
    return "-" if value is None else f"*{value:.{decimals}f}*"


def with_reference(table: str, reference: pd.DataFrame, results: pd.DataFrame, fmt: str) -> str:
    """``table`` (the results table in ``fmt``) with the reference rows: csv/json rows get a
    ``kind`` column (``measured`` or ``reference``, reference rows last); markdown/latex get
    the reference section under the table."""
    if fmt in ("markdown", "latex"):
        return table.rstrip("\n") + "\n\n" + reference_section(reference, results, fmt)
    if fmt == "json":
        measured = [{**rec, "kind": "measured"} for rec in json.loads(table)]
    elif fmt == "csv":
        measured = pd.read_csv(io.StringIO(table)).assign(kind="measured").to_dict("records")
    else:
        raise SentprobeError(f"unknown table format {fmt!r}")
    columns = _columns(results, reference)
    wide = reference.pivot(index="row", columns="task", values="score")
    extra = [
        {
            "encoder": row,
            **{
                t: (None if t not in wide or pd.isna(wide.at[row, t]) else wide.at[row, t])
                for t in columns
            },
            "kind": "reference",
            **({"source": reference.attrs["citation"]} if "citation" in reference.attrs else {}),
        }
        for row in dict.fromkeys(reference["row"])
    ]
    records = measured + extra
    if fmt == "json":
        return json_records(records)
    order = [*dict.fromkeys(k for r in records for k in r if k != "kind"), "kind"]
    return csv_table(pd.DataFrame(records, columns=order))
