"""What the probe could do without the property: control-task accuracy and selectivity
(Hewitt & Liang, 2019) and MDL codelengths (Voita & Titov, 2020), beside the results table.

Control tasks are stored as tasks named ``<task>~control`` (``sentprobe.datasets.controls``);
they are not columns of the results table but a second table: for each row and task with a
control result, the accuracy, the control accuracy and ``selectivity = accuracy - control
accuracy`` (points; mean over seeds, each seed paired with the same seed's control), and the
control's *ceiling*, the test accuracy of a perfect memoriser of the control function (stored
in the control record's ``extra``). MDL results are records of the probe ``mdl`` whose
``extra`` holds the codelength in bits and the compression (uniform codelength / online
codelength); a control task's MDL is shown beside its task's.
"""

from __future__ import annotations

import pandas as pd

from sentprobe.datasets.controls import controlled_name, is_control
from sentprobe.errors import SentprobeError
from sentprobe.evaluation.identity import TASK, resolve, task_names
from sentprobe.reporting.render import csv_table, json_records
from sentprobe.reporting.tables import IntervalFn, results_table

#: A control result matches its task's result of the same row, probe, seed, source, language.
_MATCH = ["row_id", "probe", "seed", "base", "task_source", "language"]
#: One cell of the tidy frame: a row (display name, one per fingerprint), a task, a probe.
_CELL = ["encoder", *TASK, "probe"]
#: Tidy columns of :func:`method_frame` (percent for scores, kbit for codelength).
TIDY = (
    "encoder",
    "task",
    "probe",
    "seeds",
    "score",
    "control_score",
    "control_ceiling",
    "selectivity",
)
MDL_TIDY = ("codelength_kbit", "compression")
CONTROL_MDL_TIDY = ("control_codelength_kbit", "control_compression")


def split_controls(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(records of real tasks, records of control tasks)."""
    if frame.empty or "task" not in frame.columns:
        return frame, frame.iloc[0:0]
    control = frame["task"].astype(str).map(is_control)
    return frame[~control], frame[control]


def _latest(frame: pd.DataFrame) -> pd.DataFrame:
    """The newest result per identity (sentprobe.evaluation.identity), with ``base``: the
    task a control task controls."""
    df = resolve(frame)
    df["base"] = df["task"].map(controlled_name)
    return df


def selectivity_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The records of real tasks that have a control result, with ``control_score``,
    ``control_ceiling`` (None where not stored) and ``selectivity`` columns (fractions, as
    ``test_score``)."""
    tasks, controls = split_controls(frame)
    if tasks.empty or controls.empty:
        return tasks.iloc[0:0].assign(control_score=[], control_ceiling=[], selectivity=[])
    left, right = _latest(tasks), _latest(controls)
    extras = right["extra"] if "extra" in right.columns else [None] * len(right)
    right = right.assign(
        control_ceiling=[e.get("control_ceiling") if isinstance(e, dict) else None for e in extras]
    )
    right = right[[*_MATCH, "test_score", "control_ceiling"]].rename(
        columns={"test_score": "control_score"}
    )
    merged = left.merge(right, on=_MATCH, how="inner").drop(columns="base")
    merged["selectivity"] = merged["test_score"] - merged["control_score"]
    return merged


def mdl_frame(frame: pd.DataFrame, controls: bool = False) -> pd.DataFrame:
    """Records with MDL results, with ``codelength_kbit`` and ``compression`` columns: of real
    tasks, or with ``controls`` of control tasks, renamed to the task they control. Of several
    records of one unit on different task data (a control task rebuilt by a newer sentprobe,
    a task file changed) only the newest is kept, as for selectivity: they are not seeds."""
    if frame.empty or "extra" not in frame.columns:
        return frame.iloc[0:0]
    keep = [
        isinstance(e, dict) and "codelength" in e and is_control(str(t)) == controls
        for e, t in zip(frame["extra"], frame["task"], strict=True)
    ]
    out = _latest(frame[keep]).drop(columns="base")
    chosen = list(out["extra"])
    if controls:
        out["task"] = out["task"].astype(str).map(controlled_name)
    out["codelength_kbit"] = [e["codelength"] / 1000 for e in chosen]
    out["compression"] = [e["compression"] for e in chosen]
    return out


def method_frame(frame: pd.DataFrame, interval: IntervalFn | None = None) -> pd.DataFrame:
    """One tidy row per (encoder, task, probe): mean over seeds of the score, its 95% CI
    (``ci_low``/``ci_high``, with ``interval`` as the results table's), and where known the
    control score, its ceiling, selectivity (percent) and MDL codelength (kbit) and
    compression, of the task and of its control task."""
    frame = resolve(frame)  # one set of display names for every part below
    tasks, _ = split_controls(frame)
    keys = _CELL  # a cell per row and task identity, not per short task name
    df = _latest(tasks)
    out = df.groupby(keys, sort=False).agg(seeds=("seed", "nunique"), score=("test_score", "mean"))
    out["score"] *= 100
    if interval is not None and "key" in df.columns:
        bounds = {cell: interval(list(k)) for cell, k in df.groupby(keys, sort=False)["key"]}
        found = [bounds.get(cell) for cell in out.index]
        for side, name in enumerate(("ci_low", "ci_high")):
            out[name] = [None if b is None else 100 * b[side] for b in found]
    sel = selectivity_frame(frame)
    if not sel.empty:
        sel = sel.assign(control_ceiling=pd.to_numeric(sel["control_ceiling"]))
        measures = ["control_score", "control_ceiling", "selectivity"]
        out = out.join(sel.groupby(keys, sort=False)[measures].mean() * 100)
    mdl = mdl_frame(frame)
    if not mdl.empty:
        out = out.join(mdl.groupby(keys, sort=False)[list(MDL_TIDY)].mean())
    control_mdl = mdl_frame(frame, controls=True)
    if not control_mdl.empty:
        named = dict(zip(MDL_TIDY, CONTROL_MDL_TIDY, strict=True))
        means = control_mdl.groupby(keys, sort=False)[list(MDL_TIDY)].mean()
        out = out.join(means.rename(columns=named))
    out = out.reset_index()
    out["task"] = task_names(out)
    return out.drop(columns=["task_source", "language"])


def methods_report(
    frame: pd.DataFrame, fmt: str, decimals: int = 1, interval: IntervalFn | None = None
) -> str:
    """The control and MDL tables (markdown/latex: one titled table per measure in the results
    table's layout; csv/json: the tidy :func:`method_frame`, with the CIs of ``interval``);
    "" when there is nothing."""
    frame = resolve(frame)
    sel, mdl = selectivity_frame(frame), mdl_frame(frame)
    if sel.empty and mdl.empty:
        return ""
    if fmt in ("csv", "json"):
        tidy = method_frame(frame, interval).round(decimals + 1)
        if fmt == "csv":
            return csv_table(tidy)
        return json_records(tidy.to_dict(orient="records"))
    sections = []
    if not sel.empty:
        sections += [
            ("Control task accuracy (%)", results_table(sel, "control_score", fmt, decimals)),
        ]
        ceiling = sel.dropna(subset=["control_ceiling"])
        if not ceiling.empty:
            sections.append(
                (
                    "Control ceiling (%: test accuracy of a perfect memoriser of the control "
                    "function)",
                    results_table(
                        ceiling.assign(control_ceiling=ceiling["control_ceiling"].astype(float)),
                        "control_ceiling",
                        fmt,
                        decimals,
                    ),
                )
            )
        sections += [
            (
                "Selectivity (accuracy - control accuracy, points)",
                results_table(sel, "selectivity", fmt, decimals),
            ),
        ]
    if not mdl.empty:
        sections += [
            (
                "MDL compression (uniform / online codelength)",
                results_table(mdl, "compression", fmt, 2, percent=False),
            ),
            (
                "MDL online codelength (kbit)",
                results_table(mdl, "codelength_kbit", fmt, 2, percent=False),
            ),
        ]
    control_mdl = mdl_frame(frame, controls=True)
    if not control_mdl.empty:
        sections.append(
            (
                "MDL compression of the control tasks",
                results_table(control_mdl, "compression", fmt, 2, percent=False),
            )
        )
    if fmt == "markdown":
        return "\n".join(f"**{title}**\n\n{table}" for title, table in sections)
    if fmt == "latex":
        return "\n".join(f"% {title}\n{table}" for title, table in sections)
    raise SentprobeError(f"unknown table format {fmt!r}")
