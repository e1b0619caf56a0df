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

The intervened task's own line of a language model (evaluation/intervention.py) also gives
its own output, for ``lm`` (the task's test items) and ``lm_neutral`` (the neutral text):
``PRE_loss_plain`` and ``PRE_loss`` (mean token negative log-likelihood, nats, without and
with the edit), ``PRE_loss_diff`` (their paired difference, bootstrap CI, paired sign-flip
p), ``PRE_agree`` (top-1 agreement with the unintervened model, % of tokens scored, CI);
on LEACE's line ``control_PRE_loss_diff`` / ``control_PRE_agree`` (mean, min, max over
seeds), ``vs_control_PRE_loss`` and ``vs_control_PRE_agree`` (LEACE minus the controls'
per-item mean, CI, p, p Holm-adjusted over layers), ``lm_used`` / ``lm_neutral_used``: the
loss rises under LEACE (the CI of its change above 0) and significantly more than under the
controls (a control can lower it: a rise beyond a fall is no use). Without a language-model
head these are NaN (``lm`` empty).

:func:`recovery` gives the intervened task's re-probed accuracy at every layer after ℓ.

Long because the effects, their tests against the controls and the three ways they are
printed (markdown, CSV/JSON columns, the recovery table) read the same per-item records and
share their column names; split, each would repeat the others' record layout.
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
#: The language-model measures: on the task's test items, on the neutral text.
LM_TEXTS = {"lm": "task test", "lm_neutral": "neutral"}
_LM_COLUMNS = [
    f"{pre}_{name}"
    for pre in LM_TEXTS
    for name in (
        "n", "loss_plain", "loss", "loss_diff", "loss_diff_low", "loss_diff_high", "loss_p",
        "agree", "agree_low", "agree_high",
    )
] + [
    f"vs_control_{pre}_{what}{end}"
    for pre in LM_TEXTS
    for what in ("loss", "agree")
    for end in ("", "_low", "_high", "_p", "_p_holm")
]  # fmt: skip


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


def _lm_line(info: Mapping, keep: np.ndarray) -> dict:
    """The language-model measures of one result (module docstring), items the edit was fit
    on (``keep`` False, task test items) and items with no token scored left out."""
    line: dict = {
        "lm": info.get("lm") or "",
        "lm_neutral_source": info.get("lm_neutral_source", ""),
    }
    for pre in LM_TEXTS:
        if f"{pre}_loss" not in info:
            continue
        plain = np.asarray(info[f"{pre}_loss_plain"], dtype=float)
        ok = np.isfinite(plain) & (keep if pre == "lm" else True)
        plain = plain[ok]
        loss = np.asarray(info[f"{pre}_loss"], dtype=float)[ok]
        agree = np.asarray(info[f"{pre}_top1_agree"], dtype=float)[ok]
        diff = loss - plain
        low, high = mean_interval(diff)
        a_low, a_high = mean_interval(agree)
        line |= {
            f"{pre}_n": int(ok.sum()),
            f"{pre}_loss_plain": float(plain.mean()),
            f"{pre}_loss": float(loss.mean()),
            f"{pre}_loss_diff": float(diff.mean()),
            f"{pre}_loss_diff_low": low,
            f"{pre}_loss_diff_high": high,
            f"{pre}_loss_p": paired_permutation_test(loss, plain),
            f"{pre}_agree": 100 * float(agree.mean()),
            f"{pre}_agree_low": 100 * a_low,
            f"{pre}_agree_high": 100 * a_high,
            f"_{pre}_loss": loss,
            f"_{pre}_loss_plain": plain,
            f"_{pre}_agree": agree,
        }
    return line


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
            **_lm_line(info, keep),
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
        for pre in LM_TEXTS:
            found |= _lm_against_controls(t, control, pre)
        extra[i] = found
    for i, found in extra.items():
        for k, v in found.items():
            table.loc[i, k] = v
    for column in _LM_COLUMNS:
        if column not in table.columns:
            table[column] = np.nan
    tests = ["vs_control_reader_p", "vs_control_change_p"]
    tests += [f"vs_control_{pre}_{what}_p" for pre in LM_TEXTS for what in ("loss", "agree")]
    for p in tests:
        if p not in table.columns:
            table[p] = np.nan
        adjusted = f"{p}_holm"
        table[adjusted] = np.nan
        for _, group in table[table[p].notna()].groupby(family, sort=False):
            table.loc[group.index, adjusted] = holm(group[p].to_numpy())
    table["used"] = (table["vs_control_reader_p_holm"] < alpha) & (
        table.get("vs_control_reader", pd.Series(np.nan, index=table.index)) < 0
    )
    table["changed"] = (table["vs_control_change_p_holm"] < alpha) & (
        table["vs_control_change"] > 0
    )
    for pre in LM_TEXTS:  # the loss rises, and more than under the controls
        table[f"{pre}_used"] = (
            (table[f"{pre}_loss_diff_low"] > 0)
            & (table[f"vs_control_{pre}_loss_p_holm"] < alpha)
            & (table[f"vs_control_{pre}_loss"] > 0)
        )
    return table.drop(columns=[c for c in table.columns if c.startswith("_")])


def _lm_against_controls(t: pd.Series, control: pd.DataFrame, pre: str) -> dict[str, float]:
    """LEACE's language-model measures against the per-item mean of its controls' (each
    control of the same intervention reads the same items)."""
    arrays = [t.get(f"_{pre}_loss"), *control.get(f"_{pre}_loss", [])]
    if len(arrays) < 2 or not all(isinstance(a, np.ndarray) for a in arrays):
        return {}
    loss = np.vstack(control[f"_{pre}_loss"].tolist())
    agree = np.vstack(control[f"_{pre}_agree"].tolist())
    plain = t[f"_{pre}_loss_plain"]
    found: dict[str, float] = {}
    diffs, agrees = loss.mean(1) - plain.mean(), 100 * agree.mean(1)
    for name, values in (("loss_diff", diffs), ("agree", agrees)):
        found[f"control_{pre}_{name}"] = float(values.mean())
        found[f"control_{pre}_{name}_min"] = float(values.min())
        found[f"control_{pre}_{name}_max"] = float(values.max())
    for what, a, b, scale in (
        ("loss", t[f"_{pre}_loss"], loss.mean(0), 1.0),  # > 0: LEACE raises the loss more
        ("agree", t[f"_{pre}_agree"], agree.mean(0), 100.0),  # < 0: it changes more tokens
    ):
        gap = a - b
        low, high = mean_interval(gap)
        found[f"vs_control_{pre}_{what}"] = scale * float(gap.mean())
        found[f"vs_control_{pre}_{what}_low"] = scale * low
        found[f"vs_control_{pre}_{what}_high"] = scale * high
        found[f"vs_control_{pre}_{what}_p"] = paired_permutation_test(a, b)
    return found


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
        reader0, reprobed0 = getattr(first, "reader_plain", np.nan), first.reprobed_plain
        # a --layer K run probes no plain final layer: its re-probed score is "–", not nan
        shown = [_pct(x) for x in (reader0, reprobed0)]
        title = (
            f"### {first.encoder}: {first.intervened} edited out inside the forward pass; "
            f"effect on {first.task} at the final layer ({first.final_layer}; {first.probe} "
            f"probe; reader on plain output {shown[0]}, re-probed {shown[1]}; "
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
    lm = _lm_text(table)
    if lm:
        parts.append(lm)
    if curve is not None and not curve.empty:
        parts.append(_recovery_text(curve))
    return "\n\n".join(parts) + "\n"


def _lm_text(table: pd.DataFrame) -> str:
    """Per (model, intervened task): the language model's own output, one line per layer ℓ
    and text (the task's test items, the neutral text); n/a for a model without a head."""
    own = table[table["own_task"] & (table["method"] == "leace")]
    out = []
    for _, group in own.groupby(["model", "intervened_id"], sort=False):
        group = group[group["probe"] == group["probe"].iloc[0]].sort_values("layer")
        first = group.iloc[0]
        title = f"### {first.encoder}: {first.intervened} edited out; the language model's output"
        if not first.lm:
            out.append(f"{title}: n/a (no causal or masked language-model head in the checkpoint)")
            continue
        header = [
            "layer ℓ", "text", "n", "loss plain", "Δ loss LEACE [95% CI]",
            "Δ loss random, mean (range)", "LEACE − random [95% CI]", "top-1 agree LEACE",
            "agree random, mean (range)", "LEACE − random [95% CI]",
        ]  # fmt: skip
        rows = [
            _lm_row(t._asdict(), pre, text)
            for t in group.itertuples()
            for pre, text in LM_TEXTS.items()
            if not np.isnan(getattr(t, f"{pre}_loss"))
        ]
        source = f"; neutral text: {first.lm_neutral_source}" if first.lm_neutral_source else ""
        out.append(f"{title} ({first.lm} LM{source})\n\n" + markdown_table(header, rows))
    if not out:
        return ""
    legend = (
        "loss: mean negative log-likelihood (nats) of the tokens scored: causal, every token "
        "after the first from the ones before it; masked, 15% of the tokens (at least one, "
        "drawn per sentence) masked together. Δ: intervened minus plain, paired bootstrap 95% "
        "CI. top-1 agree: % of those tokens whose top prediction the edit left unchanged. "
        "LEACE − random: minus the controls' per-item mean, bootstrap 95% CI; * LEACE raises "
        "the loss (Δ's CI above 0) and more than the controls, or changes more top-1 "
        f"predictions (paired sign-flip test, Holm over layers, p < {ALPHA:g}). Test items the "
        "edit was fit on are left out."
    )
    return "\n\n".join([*out, legend])


def _lm_row(t: dict, pre: str, text: str) -> list[str]:
    """One line of the language-model table: layer ℓ's LEACE and controls on one text."""
    get = lambda name: t.get(f"{pre}_{name}", np.nan)  # noqa: E731
    vs = lambda what: t.get(f"vs_control_{pre}_{what}", np.nan)  # noqa: E731

    def spread(name: str, f: str) -> str:
        c = [t.get(f"control_{pre}_{name}{end}", np.nan) for end in ("", "_min", "_max")]
        return "–" if np.isnan(c[0]) else f"{c[0]:{f}} ({c[1]:{f}} … {c[2]:{f}})"

    agree_star = "*" if vs("agree_p_holm") < ALPHA and vs("agree") < 0 else ""
    return [
        str(t["layer"]), text, str(int(get("n"))), f"{get('loss_plain'):.3f}",
        _ci3(get("loss_diff"), get("loss_diff_low"), get("loss_diff_high")),
        spread("loss_diff", "+.3f"),
        _ci3(vs("loss"), vs("loss_low"), vs("loss_high")) + ("*" if t[f"{pre}_used"] else ""),
        _ci(get("agree"), get("agree_low"), get("agree_high")),
        spread("agree", ".1f"),
        _ci(vs("agree"), vs("agree_low"), vs("agree_high"), sign=True) + agree_star,
    ]  # fmt: skip


def _pct(v: float) -> str:
    """A percentage, or "–" for a score that was not measured (a --layer K run's plain
    final layer)."""
    return "–" if np.isnan(v) else f"{v:.1f}"


def _ci3(v: float, low: float, high: float) -> str:
    return "–" if np.isnan(v) else f"{v:+.3f} [{low:+.3f}, {high:+.3f}]"


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
        rows.append(["plain", *(_pct(plain.get(j, np.nan)) for j in reads)])
        out.append(
            f"### Recovery: {task} re-probed at each later layer after it was edited out at ℓ "
            "(LEACE / random, mean over seeds)\n\n" + markdown_table(header, rows)
        )
    return "\n\n".join(out)
