"""Where in an encoder a property is found: per-layer scores, the peak layer, the center of
gravity (Tenney et al., 2019), from the rows of a ``--layer all`` run (``<encoder>@layer<K>``,
or ``<encoder>@layer<K>/<pooling>`` when one pass read several poolings: each pooling is then
a curve of its own).

Tenney et al. probe a scalar mix of layers 0..l, so their score can only grow with l, and
define the expected layer as ``sum_l l * delta_l / sum_l delta_l`` with ``delta_l = score(l) -
score(l - 1)``. sentprobe probes each layer on its own, and a later layer may score lower than
an earlier one, which would make some deltas negative. The center of gravity here uses the
running best instead (the best single layer among 0..l, what a mix of 0..l could at least
reach): ``delta_l = best(0..l) - best(0..l-1)`` for l >= 1, all >= 0. It is the layer by which,
on average, the gains over layer 0 have arrived; with no gain over layer 0 it is 0.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from sentprobe.datasets.task import PAPER_TASKS
from sentprobe.errors import SentprobeError
from sentprobe.evaluation.identity import resolve, row_names, task_names
from sentprobe.reporting.render import (
    csv_table,
    json_records,
    latex_escape,
    latex_table,
    markdown_table,
)

_LAYER = re.compile(r"^(?P<encoder>.+)@layer(?P<layer>\d+)(?:/(?P<pooling>.+))?$")
#: Columns of :func:`layer_scores` (``pooling`` is "" for a run with one pooling).
SCORE_COLUMNS = ("encoder", "probe", "task", "pooling", "layer", "score", "std", "n")
#: Columns of :func:`layer_summary`.
SUMMARY_COLUMNS = (
    "encoder",
    "probe",
    "task",
    "pooling",
    "layers",
    "peak_layer",
    "peak_score",
    "first_layer_score",
    "center",
)


def layer_scores(frame: pd.DataFrame, metric: str = "test_score") -> pd.DataFrame:
    """Tidy per-layer scores (percent): one row per (encoder, probe, task, pooling, layer),
    the mean, standard deviation and count over seeds (and, where the frame has unit keys,
    ``keys``). Rows that are not ``<encoder>@layer<K>[/<pooling>]`` are left out; none at all
    is an error (the store holds no ``--layer all`` run). The newest result per identity
    counts; encoders of one name but other weights and tasks of one name in several languages
    are named apart, as in the results table (sentprobe.evaluation.identity)."""
    if frame.empty or "encoder" not in frame.columns:
        raise SentprobeError("no results to analyse")
    df = resolve(frame)
    parts = df["encoder_label"].str.extract(_LAYER)
    keep = parts["layer"].notna()
    if not keep.any():
        raise SentprobeError(
            "no per-layer rows (<encoder>@layer<K>): run with --layer all for a layer analysis"
        )
    df = df.assign(task=task_names(df))[keep]  # named as in the whole table
    df["layer"] = parts.loc[keep, "layer"].astype(int)
    df["encoder"] = parts.loc[keep, "encoder"]
    df["pooling"] = parts.loc[keep, "pooling"].fillna("")
    model = df["encoder_fingerprint"].str.replace(r"#[^#]*$", "", regex=True)
    views = [df["encoder"], df["pooling"], df["layer"]]
    if (model.groupby(views).nunique() > 1).any():  # models named alike
        df["encoder"] = row_names(df["encoder"], model)
    df["score"] = pd.to_numeric(df[metric], errors="coerce") * 100.0
    cells = df.groupby(["encoder", "probe", "task", "pooling", "layer"], sort=False)
    out = cells["score"].agg(score="mean", std="std", n="count")
    if "key" in df.columns:
        out["keys"] = cells["key"].agg(list)
    out = out.reset_index()
    rank = {task: i for i, task in enumerate(PAPER_TASKS)}  # the paper's task order first
    out["_rank"] = [rank.get(t, len(rank)) for t in out["task"]]
    out = out.sort_values(["encoder", "probe", "_rank", "task", "layer"], kind="stable")
    return out[[*SCORE_COLUMNS, *(["keys"] if "keys" in out else [])]].reset_index(drop=True)


def center_of_gravity(scores: np.ndarray) -> float:
    """Expected layer of the gains of the running best over layer 0 (module docstring);
    ``scores[l]`` is layer l's score."""
    best = np.maximum.accumulate(np.asarray(scores, dtype=float))
    delta = np.diff(best)
    if delta.sum() <= 0:
        return 0.0
    return float((np.arange(1, len(best)) * delta).sum() / delta.sum())


def layer_summary(frame: pd.DataFrame, metric: str = "test_score") -> pd.DataFrame:
    """Per (encoder, probe, task, pooling): number of layers, peak layer (the lowest of tied
    bests) and its score, the score of the lowest layer stored (normally 0), and the center
    of gravity. Layers are the ones stored; a missing layer in between is skipped, not
    interpolated."""
    scores = layer_scores(frame, metric)
    rows = []
    keys = ["encoder", "probe", "task", "pooling"]
    for (encoder, probe, task, pooling), group in scores.groupby(keys, sort=False):
        group = group.dropna(subset=["score"])
        if group.empty:
            continue
        layers, values = group["layer"].to_numpy(), group["score"].to_numpy()
        peak = int(np.argmax(values))
        cog = center_of_gravity(values)
        # center_of_gravity counts positions; map back to layer numbers if some are missing
        center = float(np.interp(cog, np.arange(len(layers)), layers))
        peak_layer, cell = int(layers[peak]), (encoder, probe, task, pooling)
        rows.append((*cell, len(layers), peak_layer, values[peak], values[0], center))
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


def layers_report(frame: pd.DataFrame, fmt: str = "markdown", decimals: int = 1) -> str:
    """:func:`layer_summary` as a markdown, latex, csv or json table."""
    summary = layer_summary(frame).round({"peak_score": decimals, "first_layer_score": decimals})
    summary["center"] = summary["center"].round(2)
    poolings = bool(summary["pooling"].astype(bool).any())  # a column only when there are some
    if not poolings:
        summary = summary.drop(columns="pooling")
    if fmt == "csv":
        return csv_table(summary)
    if fmt == "json":
        return json_records(summary.to_dict(orient="records"))
    header = ["Encoder", "Probe", "Task", *(["Pooling"] if poolings else []), "Layers"]
    header += ["Peak layer", "Peak (%)", "First layer (%)", "Center of gravity"]
    rows = [
        [
            r.encoder,
            r.probe,
            r.task,
            *([r.pooling] if poolings else []),
            r.layers,
            r.peak_layer,
            f"{r.peak_score:.{decimals}f}",
            f"{r.first_layer_score:.{decimals}f}",
            f"{r.center:.2f}",
        ]
        for r in summary.itertuples(index=False)
    ]
    if fmt == "markdown":
        return markdown_table(header, rows, left=3 + poolings)
    if fmt == "latex":
        return latex_table(header, [[latex_escape(str(c)) for c in row] for row in rows])
    raise SentprobeError(f"unknown table format {fmt!r}")
