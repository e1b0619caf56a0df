"""Decodable vs used: what editing a property out inside the forward pass at layer ℓ does to
the model's final output, against random edits of the same rank (``run --intervene``,
evaluation/intervention.py).

One line per (model, intervened task, layer ℓ, method, control seed, task), on the task's
test items the edit was not fit on:

- ``decodable``: the task's plain accuracy at layer ℓ (the plain row's probe), with its
  bootstrap CI;
- ``reader``: the accuracy of a probe trained on the plain final vectors ("the reader") on
  the intervened final vectors, beside ``reader_plain`` on the plain ones; ``reader_diff``
  its change with the paired bootstrap CI and McNemar's exact p;
- ``cosine``: the mean cosine of the intervened final vector to the plain one, with its CI;
- ``reprobed``: a probe trained and scored on intervened final vectors, cross-fitted within
  the test split (is the property still, or again, decodable from the output?);
  ``reprobed_plain``: the plain row's score (trained on train, scored on test);
- on the LEACE line, the test against the controls (their per-item mean over seeds):
  ``vs_control_reader`` (LEACE's reader accuracy minus the controls', bootstrap CI, paired
  sign-flip permutation p) and ``vs_control_change`` (LEACE's 1 − cosine minus the
  controls'), each p Holm-adjusted over the layers of one (model, intervened task, task);
  ``used``: the reader loses significantly more under LEACE than under the controls.

:func:`recovery` gives the intervened task's re-probed accuracy at every layer after ℓ.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import numpy as np
import pandas as pd

from sentprobe.analysis.stats import (
    N_RESAMPLES,
    SEED,
    accuracy_interval,
    holm,
    paired_permutation_test,
    paired_test,
)
from sentprobe.errors import SentprobeError
from sentprobe.evaluation.identity import TASK, resolve, task_names
from sentprobe.evaluation.intervention import PREFIX
from sentprobe.evaluation.predictions import Predictions
from sentprobe.reporting.render import csv_table, markdown_table

ALPHA = 0.05
_ARRAYS = ("_cos", "_reader", "_reader_plain")


def mean_interval(values: np.ndarray, seed: int = SEED) -> tuple[float, float]:
    """Percentile bootstrap 95% interval of the mean of ``values`` (items resampled)."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return (np.nan, np.nan)
    picks = np.random.default_rng(seed).integers(0, values.size, (N_RESAMPLES, values.size))
    low, high = np.quantile(values[picks].mean(1), [0.025, 0.975])
    return float(low), float(high)


def _plain_model(row_id: str) -> str:
    """A view's row identity without the view (``...#layer6`` -> ``...``)."""
    return row_id.rsplit("#", 1)[0]


def _frames(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    df = resolve(frame)
    df = df.assign(task_label=task_names(df))
    df = df[df["seed"] == df.groupby(["row_id", *TASK, "probe"])["seed"].transform("min")]
    inter = df[df["erasure"].str.startswith(PREFIX)]
    if inter.empty:
        raise SentprobeError(
            "no intervened results stored: run `sentprobe run --intervene TASK ...` first"
        )
    return df, inter


def _accuracy(pred: Predictions | None) -> tuple[float, float, float]:
    if pred is None:
        return (np.nan, np.nan, np.nan)
    low, high = accuracy_interval([pred.correct]) or (np.nan, np.nan)
    return 100 * float(np.mean(pred.correct)), 100 * low, 100 * high


def intervention_effects(
    frame: pd.DataFrame, predictions: Mapping[str, Predictions], alpha: float = ALPHA
) -> pd.DataFrame:
    """The effects table (module docstring): one line per intervened final-layer result."""
    df, inter = _frames(frame)
    plain = df[df["erasure"] == ""]
    by_identity = {
        (r.row_id, *(getattr(r, c) for c in TASK), r.probe): r for r in plain.itertuples()
    }
    names = {  # a view's label is the model's and "@layerK"
        _plain_model(r.row_id): str(r.encoder_label).rsplit("@", 1)[0] for r in plain.itertuples()
    }
    lines = []
    for r in inter.itertuples():
        info, erasure = r.extra.get("intervention", {}), r.extra["erasure"]
        if not info.get("final"):
            continue
        model = _plain_model(r.base_row)
        task_id = tuple(getattr(r, c) for c in TASK)
        at = by_identity.get((f"{model}#layer{info['layer']}", *task_id, r.probe))
        decodable = _accuracy(predictions.get(at.key) if at is not None else None)
        before = by_identity.get((r.base_row, *task_id, r.probe))
        reprobed_before = _accuracy(predictions.get(before.key) if before is not None else None)
        keep = np.ones(len(info["cosine"]), dtype=bool)
        keep[info.get("seen", [])] = False
        cos = np.asarray(info["cosine"], dtype=float)[keep]
        reader = np.asarray(info.get("reader", []), dtype=bool)
        reader_plain = np.asarray(info.get("reader_plain", []), dtype=bool)
        if reader.size:
            reader, reader_plain = reader[keep], reader_plain[keep]
        line = {
            "encoder": names.get(model, str(r.encoder_label).split(" ⊘")[0]),
            "model": model,
            "intervened": erasure["task"],
            "intervened_id": "|".join(
                map(str, (erasure["task_hash"], erasure["task"], erasure["language"]))
            ),
            "layer": int(info["layer"]),
            "final_layer": int(info["read_layer"]),
            "method": erasure["method"],
            "control_seed": int(erasure["seed"]) if erasure["method"] == "random" else -1,
            "rank": int(erasure["rank"]),
            "probe": r.probe,
            "task": r.task_label,
            "own_task": (r.task_hash, r.task, r.language)
            == (erasure["task_hash"], erasure["task"], erasure["language"]),
            "n": int(keep.sum()),
            "decodable": decodable[0],
            "decodable_low": decodable[1],
            "decodable_high": decodable[2],
            "cosine": float(cos.mean()),
            **dict(zip(("cosine_low", "cosine_high"), mean_interval(cos), strict=True)),
            "reprobed_plain": reprobed_before[0],
            **dict(
                zip(
                    ("reprobed", "reprobed_low", "reprobed_high"),
                    _accuracy(predictions.get(r.key)),
                    strict=True,
                )
            ),  # fmt: skip
            "_cos": cos,
            "_reader": reader,
            "_reader_plain": reader_plain,
        }
        if reader.size:
            test = paired_test(reader, reader_plain)
            ci = accuracy_interval([reader]) or (np.nan, np.nan)
            line |= {
                "reader_plain": 100 * test.accuracy_b,
                "reader": 100 * test.accuracy_a,
                "reader_low": 100 * ci[0],
                "reader_high": 100 * ci[1],
                "reader_diff": 100 * test.diff,
                "reader_diff_low": 100 * test.diff_low,
                "reader_diff_high": 100 * test.diff_high,
                "reader_p": test.p_mcnemar,
            }
        lines.append(line)
    table = pd.DataFrame(lines)
    if table.empty:
        raise SentprobeError("no intervened final-layer results with their measures stored")
    return _against_controls(table, alpha)


def _against_controls(table: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """LEACE's lines get the test against the per-item mean of their controls."""
    family = ["model", "intervened_id", "probe", "task"]
    one = [*family, "layer"]
    extra: dict[int, dict[str, float]] = {}
    for _, group in table.groupby(one, sort=False):
        leace = group[group["method"] == "leace"]
        control = group[group["method"] == "random"]
        if leace.empty or control.empty:
            continue
        i = leace.index[0]
        t = leace.iloc[0]
        found: dict[str, float] = {"controls": len(control)}
        cos = np.vstack(control["_cos"].tolist())
        found["control_cosine"] = float(cos.mean())
        found["control_cosine_min"] = float(cos.mean(1).min())
        found["control_cosine_max"] = float(cos.mean(1).max())
        change = (1 - t["_cos"]) - (1 - cos.mean(0))  # > 0: LEACE moves the output more
        found["vs_control_change"] = float(change.mean())
        low, high = mean_interval(change)
        found |= {"vs_control_change_low": low, "vs_control_change_high": high}
        found["vs_control_change_p"] = paired_permutation_test(1 - t["_cos"], 1 - cos.mean(0))
        if len(t["_reader"]):
            reads = np.vstack(control["_reader"].tolist()).astype(float)
            diffs = 100 * (reads.mean(1) - t["_reader_plain"].mean())
            found["control_reader_diff"] = float(diffs.mean())
            found["control_reader_diff_min"] = float(diffs.min())
            found["control_reader_diff_max"] = float(diffs.max())
            gap = t["_reader"].astype(float) - reads.mean(0)  # < 0: LEACE hurts the reader more
            found["vs_control_reader"] = 100 * float(gap.mean())
            low, high = mean_interval(gap)
            found |= {"vs_control_reader_low": 100 * low, "vs_control_reader_high": 100 * high}
            found["vs_control_reader_p"] = paired_permutation_test(
                t["_reader"].astype(float), reads.mean(0)
            )
        extra[i] = found
    for i, found in extra.items():
        for k, v in found.items():
            table.loc[i, k] = v
    for p in ("vs_control_reader_p", "vs_control_change_p"):
        if p not in table.columns:
            table[p] = np.nan
        adjusted = p.replace("_p", "_p_holm")
        table[adjusted] = np.nan
        for _, group in table[table[p].notna()].groupby(family, sort=False):
            table.loc[group.index, adjusted] = holm(group[p].to_numpy())
    table["used"] = (table["vs_control_reader_p_holm"] < alpha) & (
        table.get("vs_control_reader", pd.Series(np.nan, index=table.index)) < 0
    )
    table["changed"] = (table["vs_control_change_p_holm"] < alpha) & (
        table["vs_control_change"] > 0
    )
    return table.drop(columns=list(_ARRAYS))


def recovery(frame: pd.DataFrame, predictions: Mapping[str, Predictions]) -> pd.DataFrame:
    """The intervened task re-probed at every layer from ℓ on: one line per (model,
    intervened task, layer ℓ, method, seed, layer read), accuracy with its CI, beside the
    plain row's at that layer."""
    df, inter = _frames(frame)
    plain = df[df["erasure"] == ""]
    by_identity = {
        (r.row_id, *(getattr(r, c) for c in TASK), r.probe): r for r in plain.itertuples()
    }
    lines = []
    for r in inter.itertuples():
        info, erasure = r.extra.get("intervention", {}), r.extra["erasure"]
        own = (r.task_hash, r.task, r.language) == (
            erasure["task_hash"], erasure["task"], erasure["language"]
        )  # fmt: skip
        if not own or "read_layer" not in info:
            continue
        before = by_identity.get((r.base_row, r.task_source, r.language, r.task, r.probe))
        acc = _accuracy(predictions.get(r.key))
        lines.append(
            {
                "model": _plain_model(r.base_row),
                "intervened": erasure["task"],
                "layer": int(info["layer"]),
                "read_layer": int(info["read_layer"]),
                "method": erasure["method"],
                "control_seed": int(erasure["seed"]) if erasure["method"] == "random" else -1,
                "probe": r.probe,
                "accuracy": acc[0],
                "accuracy_low": acc[1],
                "accuracy_high": acc[2],
                "plain": _accuracy(predictions.get(before.key) if before is not None else None)[0],
            }
        )
    return pd.DataFrame(lines)


def _ci(v: float, low: float, high: float, sign: bool = False) -> str:
    if np.isnan(v):
        return "–"
    f = "+.1f" if sign else ".1f"
    return f"{v:{f}} [{low:{f}}, {high:{f}}]"


def intervention_text(
    table: pd.DataFrame, curve: pd.DataFrame | None = None, fmt: str = "markdown"
) -> str:
    """Markdown: per (model, intervened task, task) one line per layer ℓ, decodable beside
    used, LEACE beside its controls; then the recovery of the intervened task. csv/json: the
    effects table's every line (each control seed its own)."""
    if fmt == "csv":
        return csv_table(table)
    if fmt == "json":
        return json.dumps(json.loads(table.to_json(orient="records")), indent=2) + "\n"
    if fmt != "markdown":
        raise SentprobeError("--intervention prints markdown, csv or json")
    parts = []
    keys = ["model", "intervened_id", "probe", "task"]
    for _, group in table.groupby(keys, sort=False):
        leace = group[group["method"] == "leace"].sort_values("layer")
        if leace.empty:
            continue
        first = leace.iloc[0]
        header = [
            "layer ℓ", "rank", "decodable at ℓ [95% CI]", "reader after LEACE [95% CI]",
            "Δ LEACE [95% CI]", "Δ random, mean (range)", "LEACE − random [95% CI]",
            "1−cos LEACE", "1−cos random", "re-probed final",
        ]  # fmt: skip
        rows = []
        for t in leace.itertuples():
            star = "*" if t.used else ""
            changed = "*" if t.changed else ""
            rows.append(
                [
                    str(t.layer),
                    str(t.rank),
                    _ci(t.decodable, t.decodable_low, t.decodable_high),
                    _ci(
                        getattr(t, "reader", np.nan),
                        getattr(t, "reader_low", np.nan),
                        getattr(t, "reader_high", np.nan),
                    ),  # fmt: skip
                    _ci(
                        getattr(t, "reader_diff", np.nan),
                        getattr(t, "reader_diff_low", np.nan),
                        getattr(t, "reader_diff_high", np.nan),
                        sign=True,
                    ),  # fmt: skip
                    "–"
                    if np.isnan(getattr(t, "control_reader_diff", np.nan))
                    else f"{t.control_reader_diff:+.1f} ({t.control_reader_diff_min:+.1f} … "
                    f"{t.control_reader_diff_max:+.1f})",
                    _ci(
                        getattr(t, "vs_control_reader", np.nan),
                        getattr(t, "vs_control_reader_low", np.nan),
                        getattr(t, "vs_control_reader_high", np.nan),
                        sign=True,
                    )
                    + star,
                    f"{1 - t.cosine:.4f}{changed}",
                    "–"
                    if np.isnan(getattr(t, "control_cosine", np.nan))
                    else f"{1 - t.control_cosine:.4f}",
                    _ci(t.reprobed, t.reprobed_low, t.reprobed_high),
                ]  # fmt: skip
            )
        reader0 = getattr(first, "reader_plain", np.nan)
        title = (
            f"### {first.encoder}: {first.intervened} edited out inside the forward pass; "
            f"effect on {first.task} at the final layer ({first.final_layer}; {first.probe} "
            f"probe; reader on plain output {reader0:.1f}, re-probed {first.reprobed_plain:.1f}; "
            f"{first.n} test items)"
        )
        parts.append("\n".join([title, "", markdown_table(header, rows)]))
    legend = (
        "decodable: the plain probe's accuracy at layer ℓ. reader: a probe trained on the "
        "plain final vectors, scored on the intervened ones; Δ: minus its plain accuracy, "
        "points, paired bootstrap 95% CI. random: edits of the same rank in the same z-scored "
        "coordinates (mean and range over seeds). LEACE − random: LEACE's reader accuracy "
        "minus the controls' per-item mean, bootstrap 95% CI; * the reader loses "
        f"significantly more under LEACE (paired sign-flip test, Holm over layers, p < {ALPHA:g})."
        " 1−cos: mean one minus the cosine of the intervened final vector to the plain one; * "
        "larger than the controls' (same test). re-probed: a probe trained and scored on the "
        "intervened final vectors. Test items the edit was fit on are left out."
    )
    parts.append(legend)
    if curve is not None and not curve.empty:
        parts.append(_recovery_text(curve))
    return "\n\n".join(parts) + "\n"


def _recovery_text(curve: pd.DataFrame) -> str:
    out = []
    for (_, task), group in curve.groupby(["model", "intervened"], sort=False):
        reads = sorted(group["read_layer"].unique())
        header = ["edited at ℓ", *(f"read at {j}" for j in reads)]
        rows = []
        for layer, at in group.groupby("layer", sort=True):
            cells = [str(layer)]
            for j in reads:
                here = at[at["read_layer"] == j]
                leace = here[here["method"] == "leace"]["accuracy"]
                control = here[here["method"] == "random"]["accuracy"]
                if leace.empty:
                    cells.append("")
                    continue
                ctrl = f" / {control.mean():.1f}" if len(control) else ""
                cells.append(f"{leace.iloc[0]:.1f}{ctrl}")
            rows.append(cells)
        plain = group.groupby("read_layer")["plain"].first()
        rows.append(["plain", *(f"{plain.get(j, np.nan):.1f}" for j in reads)])
        out.append(
            f"### Recovery: {task} re-probed at each later layer after it was edited out at ℓ "
            "(LEACE / random, mean over seeds)\n\n" + markdown_table(header, rows)
        )
    return "\n\n".join(out)
