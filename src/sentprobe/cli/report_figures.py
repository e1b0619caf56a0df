"""The figures of ``sentprobe report --html`` (and ``--layer-curves``), from a results frame:
layer curves with CI bands and peaks (:mod:`sentprobe.analysis.layers`), the heatmap relative
to a reference row or language (X-Probe's Figure 4), the correlation with downstream tasks
(:mod:`sentprobe.analysis.correlation`) and prediction agreement. A figure the store has
no data for comes back as None, and the report leaves it out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from sentprobe.errors import SentprobeError
from sentprobe.reporting import html
from sentprobe.reporting.plots import figure_svg

Intervals = Callable[[Sequence[str]], "tuple[float, float] | None"]


def layer_data(
    frame: pd.DataFrame, interval: Intervals | None, metric: str = "test_score"
) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """(curves, summary) of the ``--layer all`` rows, or None when there are none: curves
    with model (base, the encoder and probe, and its pooling), task, pooling, layer, score
    (points), low, high; summary from analysis.layers."""
    from sentprobe.analysis.layers import layer_scores, layer_summary
    from sentprobe.datasets.task import PAPER_TASKS
    from sentprobe.reporting.controls import split_controls

    tasks, _ = split_controls(frame)
    try:
        scores = layer_scores(tasks, metric)
        summary = layer_summary(tasks, metric)
    except SentprobeError:
        return None
    several = scores.groupby("encoder")["probe"].nunique()
    for part in (scores, summary):  # a curve per model, probe (where several) and pooling
        part["base"] = [
            f"{e} [{p}]" if several[e] > 1 else e for e, p in zip(part["encoder"], part["probe"])
        ]
        part["model"] = [f"{b} · {p}" if p else b for b, p in zip(part["base"], part["pooling"])]
    order = {t: i for i, t in enumerate(PAPER_TASKS)}
    summary["_order"] = summary["task"].map(lambda t: order.get(t, len(order)))
    scores["low"] = scores["high"] = math.nan
    if interval is not None and "keys" in scores.columns:
        for i, r in scores.iterrows():
            ci = interval(r["keys"]) if r["keys"] else None
            if ci is not None:
                scores.loc[i, ["low", "high"]] = [100.0 * ci[0], 100.0 * ci[1]]
    return scores, summary


def layer_figure(curves: pd.DataFrame, summary: pd.DataFrame, frame: pd.DataFrame):
    """The layer-curves figure, tasks in the paper's order, Majority dotted."""
    from sentprobe.datasets.task import PAPER_TASKS
    from sentprobe.evaluation.identity import resolve, task_names
    from sentprobe.reporting.plots import layer_curves_figure

    order = {t: i for i, t in enumerate(PAPER_TASKS)}
    curves = curves.sort_values(
        "task", key=lambda s: s.map(lambda t: order.get(t, len(order))), kind="stable"
    )
    peaks = {
        (m, t): int(p) for m, t, p in zip(summary["model"], summary["task"], summary["peak_layer"])
    }
    centres = {
        (m, t): float(c) for m, t, c in zip(summary["model"], summary["task"], summary["center"])
    }
    frame = resolve(frame)
    majority = frame[frame["encoder_label"] == "Majority"]
    names = task_names(frame)[majority.index]  # as layer_scores names the tasks
    chance = {
        str(t): 100.0 * float(s) for t, s in majority.groupby(names)["test_score"].mean().items()
    }
    return layer_curves_figure(curves, peaks, centres, chance or None)


def layer_pooling_figure(curves: pd.DataFrame):
    """Layer x pooling heatmaps of the models whose rows read several poolings in one pass
    (``--pooling mean,last,...``), or None when no model did."""
    from sentprobe.reporting.plots import layer_pooling_figure as draw

    pooled = curves[curves["pooling"] != ""]
    several = pooled.groupby("base")["pooling"].nunique()
    pooled = pooled[pooled["base"].map(several) > 1]
    return None if pooled.empty else draw(pooled)


def layer_pooling_plot(curves: pd.DataFrame) -> html.Plot | None:
    """:func:`layer_pooling_figure` for the HTML report."""
    fig = layer_pooling_figure(curves)
    if fig is None:
        return None
    return html.Plot(
        "layer-pooling",
        "Layer × pooling",
        figure_svg(fig, "layerpool"),
        "Test accuracy (%) of each layer (0 = embeddings) and pooling read from one forward "
        "pass, one panel per model and task; under each score ± half the width of its 95% "
        "CI. Colours run from each panel's lowest score (light) to its highest (dark).",
    )


def relative_plot(
    frame: pd.DataFrame, reference_row: str | None, reference_language: str | None, metric: str
) -> html.Plot | None:
    """X-Probe's Figure 4: relative to the reference language when the results have
    several languages, else every row relative to a reference row."""
    from sentprobe.reporting.controls import split_controls
    from sentprobe.reporting.crosslang import _task_order, majority_scores, relative_scores
    from sentprobe.reporting.plots import language_panels_figure, relative_rows_figure
    from sentprobe.reporting.tables import pivot

    tasks, _ = split_controls(frame)
    languages = sorted(set(tasks["language"].fillna("").astype(str)) - {""})
    if len(languages) > 1:
        ref = languages[0]
        if reference_language and reference_language in languages:
            ref = reference_language
        majority = majority_scores(tasks, metric)
        gain = set(majority["language"]) >= set(languages)  # a majority in every language
        rel = relative_scores(tasks, ref, metric, mode="gain" if gain else "diff")
        fig = language_panels_figure(
            rel, _task_order(rel["task"]), ref, metric, mode="gain" if gain else "diff"
        )
        caption = (
            f"Each encoder's gain over its language's Majority baseline minus its gain over "
            f"{ref}'s (points): class balance differs across languages and is removed."
            if gain
            else f"Each encoder's score in each language minus its score in {ref} (points); "
            "no Majority rows in every language, so differences in class balance are included."
        )
        return html.Plot("relative-heatmap", f"Relative to {ref}", figure_svg(fig, "rel"), caption)
    wide = pivot(tasks, metric, "mean")
    wide.columns = [t for _, t in wide.columns]
    if len(wide) < 2:
        return None
    ref = reference_row or ("Majority" if "Majority" in wide.index else str(wide.index[0]))
    if ref not in wide.index:
        raise SentprobeError(f"no row {ref!r} in the results (rows: {', '.join(wide.index)})")
    fig = relative_rows_figure(wide, ref)
    caption = (
        f"Every row's test accuracy minus {ref}'s, per task (points; blue above, red below); "
        "choose the reference with --reference-row."
    )
    return html.Plot("relative-heatmap", f"Relative to {ref}", figure_svg(fig, "rel"), caption)


def agreement_plot(frame: pd.DataFrame, preds: dict[str, Any]) -> html.Plot | None:
    """How often two rows make the same test prediction (Kim et al. 2019, Fig. 2), over all
    the test items they share; None with fewer than two rows with stored predictions."""
    from sentprobe.analysis.prediction_agreement import prediction_agreement
    from sentprobe.reporting.controls import split_controls
    from sentprobe.reporting.plots import agreement_figure

    tasks, _ = split_controls(frame)
    if not preds:
        return None
    agreement = prediction_agreement(tasks, preds)
    if len(agreement.rows) < 2:
        return None
    return html.Plot(
        "agreement",
        "Prediction agreement",
        figure_svg(agreement_figure(agreement.matrix()), "agree"),
        "Share of test items two rows predict alike (%), over all the test items they share "
        "(tasks weighted by their number of test items; first seed).",
    )


def erasure_plot(frame: pd.DataFrame, preds: dict[str, Any]) -> html.Plot | None:
    """The heatmap "erased task -> effect on task" of ``run --erase`` results, its caption
    saying whether each erasure worked; None without erased results."""
    from sentprobe.analysis.erasure import erasure_effects, sanity_lines
    from sentprobe.evaluation.identity import resolve
    from sentprobe.reporting.plots import erasure_figure

    erasures = resolve(frame)["erasure"]
    if not preds or not (erasures.ne("") & ~erasures.str.startswith("intervene:")).any():
        return None  # no post-hoc erasure (interventions have a figure of their own)
    table = erasure_effects(frame, preds)
    return html.Plot(
        "erasure",
        "Erasure: is the property used?",
        figure_svg(erasure_figure(table), "erase"),
        " ".join(sanity_lines(table))
        + " Each cell: accuracy after erasing the row's task (LEACE, fit on its training "
        "split, or training and dev splits where the row says so) minus before, with the "
        "paired bootstrap 95% CI; the random rows remove a random subspace of the same rank in "
        "LEACE's z-scored coordinates (the mean and range over control seeds), the damage of "
        "any erasure that size. The held-out check column: the erased task's accuracy for a "
        "probe trained and scored on erased items the eraser never saw, against the majority "
        "share, with its CI. Linear erasure only: a nonlinear probe may still recover the "
        "property (docs/erasure.md).",
    )


def intervention_plot(frame: pd.DataFrame, preds: dict[str, Any]) -> html.Plot | None:
    """Decodable vs used (``run --intervene``): per (model, intervened task), over the layer
    ℓ edited, the task's plain accuracy at ℓ and the accuracy of the plain output's reader
    after LEACE at ℓ and after the random controls (their mean), each with its 95% CI; None
    without intervened results."""
    from sentprobe.analysis.intervention import intervention_effects
    from sentprobe.evaluation.identity import resolve
    from sentprobe.reporting.plots import new_figure

    if not preds or not resolve(frame)["erasure"].str.startswith("intervene:").any():
        return None
    table = intervention_effects(frame, preds)
    own = table[table["own_task"]]
    groups = list(own.groupby(["model", "intervened_id", "probe"], sort=False))
    fig = new_figure(4.2 * len(groups), 3.2)
    axes = fig.subplots(1, len(groups), squeeze=False)[0]
    for ax, (_, group) in zip(axes, groups, strict=True):
        leace = group[group["method"] == "leace"].sort_values("layer")
        x = leace["layer"].to_numpy()
        for column, label in (("decodable", "decodable at ℓ"), ("reader", "reader after LEACE")):
            if column not in leace.columns:
                continue
            y = leace[column].to_numpy(dtype=float)
            low = leace[f"{column}_low"].to_numpy(dtype=float)
            high = leace[f"{column}_high"].to_numpy(dtype=float)
            ax.plot(x, y, marker="o", label=label)
            ax.fill_between(x, low, high, alpha=0.2)
        control = group[group["method"] == "random"]
        if "reader" in control.columns and len(control):
            mean = control.groupby("layer")["reader"].mean()
            ax.plot(mean.index, mean.to_numpy(), ls="--", marker="x", label="reader after random")
        if "reader_plain" in leace.columns and len(leace):
            ax.axhline(leace["reader_plain"].iloc[0], color="grey", lw=0.8, label="reader, plain")
        first = group.iloc[0]
        ax.set_title(f"{first['encoder']}: {first['intervened']}", fontsize=9)
        ax.set_xlabel("layer ℓ edited")
        ax.set_ylabel("accuracy (%)")
        ax.legend(fontsize=7)
    used = [
        f"{t.encoder}, {t.intervened} at layer {t.layer}"
        for t in own[(own["method"] == "leace") & own["used"]].itertuples()
    ]
    return html.Plot(
        "intervention",
        "Decodable vs used: the property edited out inside the forward pass",
        figure_svg(fig, "intervene"),
        "Decodable: the task's plain probe accuracy at layer ℓ. Reader: a probe trained on the "
        "plain final vectors, scored on the final vectors after the property was edited out "
        "of every token at layer ℓ (LEACE) and the later layers recomputed; random: edits of "
        "the same rank in the same coordinates (mean over seeds). Bands: 95% CIs. Used "
        "(reader loses significantly more than under the controls, Holm over layers): "
        + ("; ".join(used) if used else "nowhere")
        + ". `report --intervention` gives every number (docs/erasure.md).",
    )


def correlation_plot(
    frame: pd.DataFrame,
    downstream: Path,
    metric: str,
    rename: dict[str, str] | None,
    alpha: float,
) -> html.Plot:
    """Conneau et al.'s Figure 2 for the rows of ``frame`` against a downstream file."""
    from sentprobe.analysis.correlation import caption, correlation_cells, correlation_heatmap

    cells = correlation_cells(frame, downstream, metric, rename=rename, alpha=alpha)
    return html.Plot(
        "correlation",
        "Correlation with downstream tasks",
        figure_svg(correlation_heatmap(cells, alpha), "corr"),
        caption(cells, alpha) + f". Downstream scores: {downstream}.",
    )
