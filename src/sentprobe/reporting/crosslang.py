"""Cross-language reports: the same encoders probed on the same tasks in several languages.

Two views from X-Probe (Ravishankar et al. 2019): scores relative to a reference language per
encoder x task x language (their Figure 4, a heatmap, which uses the ratio of raw accuracies)
and per task the mean and standard deviation across languages and encoders (their Table 1).

Raw accuracies differ across languages by their class balance alone (X-Probe's Tense: one
language's majority class is 73% of its test set, another's 54%), so the relative score
``gain`` (the ``sentprobe crosslang`` default) first removes each language's own Majority
baseline: (score - majority) - (reference score - reference majority), in points. ``diff``
(raw difference in points) and ``ratio`` (the paper's) are kept; every view shows each
language's majority beside the scores. Input is the frame of ``ResultsStore.to_frame()``; tables are
rendered by :func:`sentprobe.reporting.tables.results_table`, so they look like every other
sentprobe table.

A student of ``sentprobe map-encoder`` (rows named ``<teacher>-><language>[@epoch-K]``) is
compared, in its own language, with its *teacher's* reference-language scores: how much of
the teacher's English results survives the mapping, as in X-Probe's Figure 4.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from sentprobe.datasets.controls import is_control
from sentprobe.datasets.task import PAPER_TASKS
from sentprobe.errors import SentprobeError
from sentprobe.evaluation.baselines import paper_labels
from sentprobe.evaluation.identity import resolve
from sentprobe.reporting.plots import language_panels_figure, save_figure
from sentprobe.reporting.tables import results_table

Mode = Literal["gain", "diff", "ratio"]
MODES: tuple[str, ...] = ("gain", "diff", "ratio")
#: What each mode's relative score is (titles, the CLI's help).
MODE_TEXT = {
    "gain": "gain over the language's own majority minus the reference's, points",
    "diff": "difference in points, majority not removed",
    "ratio": "ratio, 1 = parity, majority not removed",
}
FORMATS = ("markdown", "csv", "latex", "json")
#: A mapped student's row: teacher label, "->", its language, an optional "/run-name" (the
#: student's run directory), an optional "@epoch-K", and the " [probe]" suffix rows get when
#: several probes were run.
_MAPPED = re.compile(
    r"^(?P<teacher>.+)->(?P<lang>[A-Za-z][\w-]*)(?:/[^@\s]+)?(?:@\S*)?(?P<probe> \[[^\]]*\])?$"
)


def reference_encoder(encoder: str, language: str) -> str:
    """The row whose reference-language scores ``encoder``'s are compared with: the teacher's
    for a mapped student in its own language, else the encoder's own."""
    m = _MAPPED.match(encoder)
    if m and m["lang"] == language:
        return m["teacher"] + (m["probe"] or "")
    return encoder


def language_scores(
    frame: pd.DataFrame,
    metric: str = "test_score",
    encoders: Sequence[str] | None = None,
    include_baselines: bool = False,
) -> pd.DataFrame:
    """One row per (encoder, task, language): the score in points, averaged over seeds.

    The newest result of each identity counts (sentprobe.evaluation.identity; rows of one
    label but other fingerprints are named apart, as in the results table); a task of one name
    from two sources in one language is named with its source; an encoder probed with
    several probes becomes one row per probe ("name [probe]"); a task name carrying its
    language ("de/Foo") loses it so the same task matches across languages. The paper's
    text baselines are left out unless ``include_baselines`` (they are not encoders);
    control tasks (``T~control``) are no probing tasks and are always left out.
    """
    missing = [c for c in ("encoder", "task", "language", metric) if c not in frame.columns]
    if missing:
        raise SentprobeError(f"results are missing column(s): {', '.join(missing)}")
    df = resolve(frame[~frame["task"].astype(str).map(is_control)])
    if encoders:
        wanted = list(encoders)
        df = df[df["encoder"].isin(wanted) | df["encoder_label"].isin(wanted)]
    if not include_baselines:
        df = df[~df["encoder_label"].str.lower().isin([b.lower() for b in paper_labels()])]
    if df.empty:
        raise SentprobeError(
            "no results to compare across languages"
            + ("" if include_baselines else " (baselines are left out; include them to see them)")
        )
    df["task"] = [
        t.split("/", 1)[1] if t.startswith(f"{lang}/") else t
        for t, lang in zip(df["task"].astype(str), df["language"])
    ]
    sources = df.groupby(["task", "language"], sort=False)["task_source"].transform("nunique")
    df["task"] = df["task"].where(sources < 2, df["task"] + " [" + df["task_source"] + "]")
    probes = df.groupby("encoder")["probe"].nunique()
    df["row"] = [
        f"{e} [{p}]" if probes[e] > 1 else str(e) for e, p in zip(df["encoder"], df["probe"])
    ]
    df["score"] = 100.0 * pd.to_numeric(df[metric], errors="coerce")
    df["older_task"] = _older_task_data(df)
    out = (
        df.groupby(["row", "task", "language"], sort=False)
        .agg(score=("score", "mean"), older_task=("older_task", "any"))
        .reset_index()
        .rename(columns={"row": "encoder"})
    )
    return out


def majority_scores(frame: pd.DataFrame, metric: str = "test_score") -> pd.DataFrame:
    """The Majority baseline's score (points) per task and language: columns task, language,
    majority; empty when the results have no Majority rows."""
    labels = frame["encoder_label"] if "encoder_label" in frame.columns else frame["encoder"]
    rows = frame[labels.astype(str).str.lower() == "majority"]
    if rows.empty:
        return pd.DataFrame({"task": [], "language": [], "majority": []})
    scores = language_scores(rows, metric, include_baselines=True)
    means = scores.groupby(["task", "language"], sort=False)["score"].mean()
    return means.rename("majority").reset_index()


def _older_task_data(df: pd.DataFrame) -> pd.Series:
    """True where a record's task data (hash) is older than the newest result of the same
    task and language: such scores are marked, never compared silently."""
    if "task_hash" not in df.columns:
        return pd.Series(False, index=df.index)
    hashes = df["task_hash"].astype(str)
    order = df.sort_values("created", kind="stable") if "created" in df.columns else df
    newest = order.groupby(["task", "language"], sort=False)["task_hash"].last().astype(str)
    current = [newest[(t, lang)] for t, lang in zip(df["task"], df["language"], strict=True)]
    return pd.Series(hashes.to_numpy() != pd.Series(current).to_numpy(), index=df.index)


def _task_order(tasks: Sequence[str]) -> list[str]:
    order = {t: i for i, t in enumerate(PAPER_TASKS)}
    return sorted(dict.fromkeys(tasks), key=lambda t: (order.get(t, len(order)), t))


def relative_scores(
    frame: pd.DataFrame,
    reference: str,
    metric: str = "test_score",
    mode: Mode = "diff",
    encoders: Sequence[str] | None = None,
    include_baselines: bool = False,
) -> pd.DataFrame:
    """Scores relative to ``reference`` per encoder x task x language (reference excluded).

    Columns: encoder, task, language, score, majority, reference_score, reference_majority
    (points; majority: the Majority baseline of that task and language) and ``relative``: the
    gain over the own majority minus the reference's gain over its majority (``"gain"``), the
    difference in points (``"diff"``) or the ratio score / reference (``"ratio"``, as in
    X-Probe's Figure 4, where 1 is parity), then ``older_task``: True when either score was
    computed on older data of its task than the newest result for that task and language.
    Cells without a reference score (or, for ``"gain"``, a majority) are NaN.
    """
    if mode not in MODES:
        raise SentprobeError(f"unknown mode {mode!r}; choose {', '.join(MODES)}")
    scores = language_scores(frame, metric, None, include_baselines)
    languages = sorted(scores["language"].unique())
    if reference not in languages:
        raise SentprobeError(
            f"no results for the reference language {reference!r} "
            f"(languages in the results: {', '.join(languages) or 'none'})"
        )
    if len(languages) < 2:
        raise SentprobeError(f"only {reference!r} in the results: nothing to compare with")
    ref = scores[scores["language"] == reference][["encoder", "task", "score", "older_task"]]
    ref = ref.rename(
        columns={"encoder": "_ref", "score": "reference_score", "older_task": "reference_older"}
    )
    rel = scores[scores["language"] != reference]
    if encoders:  # the reference rows of a student's teacher are kept: filtered only here
        rel = rel[rel["encoder"].str.replace(r" \[[^\]]*\]$", "", regex=True).isin(encoders)]
    if rel.empty:
        raise SentprobeError("no results of the chosen encoders outside the reference language")
    rel = rel.assign(
        _ref=[reference_encoder(e, lang) for e, lang in zip(rel["encoder"], rel["language"])]
    )
    rel = rel.merge(ref, on=["_ref", "task"], how="left").drop(columns="_ref")
    rel["older_task"] = rel["older_task"] | rel.pop("reference_older").fillna(False).astype(bool)
    majority = majority_scores(frame, metric)
    rel = rel.merge(majority, on=["task", "language"], how="left")
    at_reference = majority[majority["language"] == reference][["task", "majority"]]
    rel = rel.merge(
        at_reference.rename(columns={"majority": "reference_majority"}), on="task", how="left"
    )
    rel[["majority", "reference_majority"]] = rel[["majority", "reference_majority"]].astype(float)
    if mode == "gain":
        sides = ((reference, "reference_majority"), ("the other languages", "majority"))
        lacking = [what for what, column in sides if rel[column].isna().all()]
        if lacking:
            raise SentprobeError(
                "the relative score 'gain' removes each language's Majority baseline, and the "
                f"results have no Majority rows for {' or '.join(lacking)}: run the tasks with "
                "the Majority baseline (in the default baselines), or choose --mode diff"
            )
        own = rel["score"] - rel["majority"]
        rel["relative"] = own - (rel["reference_score"] - rel["reference_majority"])
    elif mode == "diff":
        rel["relative"] = rel["score"] - rel["reference_score"]
    else:
        rel["relative"] = rel["score"] / rel["reference_score"].replace(0.0, np.nan)
    order = {t: i for i, t in enumerate(_task_order(rel["task"]))}
    rel = rel.assign(_t=rel["task"].map(order)).sort_values(
        ["encoder", "language", "_t"], kind="stable"
    )
    columns = ["encoder", "task", "language", "score", "majority", "reference_score"]
    columns += ["reference_majority", "relative"]
    return rel[[*columns, "older_task"]].reset_index(drop=True)


def task_summary(
    frame: pd.DataFrame,
    metric: str = "test_score",
    encoders: Sequence[str] | None = None,
    include_baselines: bool = False,
) -> pd.DataFrame:
    """Per task (paper order): mean and sample standard deviation (ddof=1) of the scores in
    points across languages and encoders, with how many scores, languages and encoders."""
    scores = language_scores(frame, metric, encoders, include_baselines)
    rows = []
    for task in _task_order(scores["task"]):
        s = scores[scores["task"] == task]
        values = s["score"].dropna()
        rows.append(
            {
                "task": task,
                "mean": float(values.mean()) if len(values) else math.nan,
                "std": float(values.std(ddof=1)) if len(values) > 1 else math.nan,
                "n": int(len(values)),
                "languages": int(s["language"].nunique()),
                "encoders": int(s["encoder"].nunique()),
            }
        )
    return pd.DataFrame(rows, columns=["task", "mean", "std", "n", "languages", "encoders"])


# ---------------------------------------------------------------------------- tables


def _as_results(df: pd.DataFrame, row: pd.Series, value: pd.Series, seed: pd.Series | int = 0):
    """A frame ``results_table`` can render: rows, tasks and a plain (not %) score column.

    Scores on older task data keep their marker: they get a task hash of their own, written
    before the current one, so the table marks their cells ‡.
    """
    older = df["older_task"].to_numpy() if "older_task" in df.columns else False
    return pd.DataFrame(
        {
            "encoder": row.to_numpy(),
            "task": df["task"].to_numpy(),
            "value": value.to_numpy(),
            "seed": seed if isinstance(seed, int) else seed.to_numpy(),
            "probe": "-",
            "language": "",
            "task_source": "",
            "task_hash": np.where(older, "older", "current"),
            "created": np.where(older, "0", "1"),
        }
    )


def relative_table(
    frame: pd.DataFrame,
    reference: str,
    fmt: str = "markdown",
    metric: str = "test_score",
    mode: Mode = "diff",
    decimals: int | None = None,
    encoders: Sequence[str] | None = None,
    include_baselines: bool = False,
) -> str:
    """Relative scores as a paper-style table: rows "encoder (language)", tasks as columns."""
    rel = relative_scores(frame, reference, metric, mode, encoders, include_baselines)
    rows = rel["encoder"] + " (" + rel["language"] + ")"
    table = _as_results(rel, rows, rel["relative"])
    dec = decimals if decimals is not None else (2 if mode == "ratio" else 1)
    return results_table(table, metric="value", fmt=fmt, decimals=dec, percent=False)


def summary_table(
    frame: pd.DataFrame,
    fmt: str = "markdown",
    metric: str = "test_score",
    decimals: int = 1,
    encoders: Sequence[str] | None = None,
    include_baselines: bool = False,
) -> str:
    """X-Probe's Table 1 as one row, tasks as columns: "mean ± std" (points) of all scores."""
    scores = language_scores(frame, metric, encoders, include_baselines)
    n_lang, n_enc = scores["language"].nunique(), scores["encoder"].nunique()
    label = f"All ({n_lang} languages x {n_enc} encoders)"
    pair = scores["encoder"] + "\t" + scores["language"]
    seed = pd.Series(pd.factorize(pair)[0], index=scores.index)  # one "seed" per pair: n > 1
    table = _as_results(scores, pd.Series(label, index=scores.index), scores["score"], seed)
    return results_table(table, metric="value", fmt=fmt, decimals=decimals, percent=False)


def majority_table(
    frame: pd.DataFrame, fmt: str = "markdown", metric: str = "test_score", decimals: int = 1
) -> str:
    """Each language's Majority baseline (points) per task, rows = languages; "" without any."""
    majority = majority_scores(frame, metric)
    if majority.empty:
        return ""
    majority = majority.assign(older_task=False)
    return results_table(
        _as_results(majority, majority["language"], majority["majority"]),
        metric="value",
        fmt=fmt,
        decimals=decimals,
        percent=False,
    )


def _records(df: pd.DataFrame, decimals: int) -> list[dict]:
    out = []
    for rec in df.to_dict(orient="records"):
        out.append(
            {
                k: (
                    None
                    if isinstance(v, float) and math.isnan(v)
                    else round(v, decimals)
                    if isinstance(v, float)
                    else v
                )
                for k, v in rec.items()
            }
        )
    return out


def crosslang_report(
    frame: pd.DataFrame,
    reference: str,
    fmt: str = "markdown",
    metric: str = "test_score",
    mode: Mode = "diff",
    encoders: Sequence[str] | None = None,
    include_baselines: bool = False,
) -> str:
    """Both views in one document. markdown/latex: the two tables under headings; json: an
    object with ``relative`` and ``summary`` record lists; csv: the relative scores in long
    form (one row per encoder x task x language, with the absolute scores)."""
    if fmt not in FORMATS:
        raise SentprobeError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    kw: dict[str, Any] = {
        "metric": metric,
        "encoders": encoders,
        "include_baselines": include_baselines,
    }
    if fmt in ("json", "csv"):
        rel = relative_scores(frame, reference, mode=mode, **kw)
        if fmt == "csv":
            return rel.to_csv(index=False, float_format="%.4f")
        doc = {
            "reference": reference,
            "metric": metric,
            "mode": mode,
            "measure": MODE_TEXT[mode],
            "relative": _records(rel, 4),
            "summary": _records(task_summary(frame, **kw), 4),
            "majority": _records(majority_scores(frame, metric), 4),
        }
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    sections = [
        (
            f"{metric} relative to {reference} ({MODE_TEXT[mode]})",
            relative_table(frame, reference, fmt, mode=mode, **kw),
        ),
        (
            f"{metric}: mean ± std across languages and encoders (points)",
            summary_table(frame, fmt, **kw),
        ),
    ]
    majority = majority_table(frame, fmt, metric)
    if majority:
        sections.append(("Majority baseline per language (points)", majority))
    if fmt == "latex":
        return "".join(f"% {title}\n{table}" for title, table in sections)
    return "\n".join(f"### {title}\n\n{table}" for title, table in sections)


# ---------------------------------------------------------------------------- heatmap


def relative_heatmap(
    frame: pd.DataFrame,
    reference: str,
    path: str | Path,
    metric: str = "test_score",
    mode: Mode = "diff",
    encoders: Sequence[str] | None = None,
    include_baselines: bool = False,
) -> Path:
    """Write a heatmap of :func:`relative_scores` (PNG, PDF or SVG by extension): one panel
    per encoder, tasks x languages, a diverging colormap centred at parity (0 points, or 1
    for ratios) with one scale for all panels, each cell annotated."""
    rel = relative_scores(frame, reference, metric, mode, encoders, include_baselines)
    fig = language_panels_figure(rel, _task_order(rel["task"]), reference, metric, mode)
    return save_figure(fig, path)
