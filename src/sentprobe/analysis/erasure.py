"""What erasing one task's property does to every task: the erased rows of ``run --erase``
(evaluation/erasure.py) against their plain rows, item by item.

Per (encoder, erased task, erasure) and task: accuracy before and after with the bootstrap CI
of the latter, the change with its paired bootstrap CI, McNemar's exact test Holm-adjusted
over the tasks of that erasure (analysis/stats.py). The erased task's own line is the sanity
check, twice: in sample (the probe trained on the erased vectors the eraser was fit on, at
chance by construction when LEACE works at all) and out of sample, by the held-out check (a
probe trained and scored on erased items the eraser never saw). Above the majority share
(the best constant prediction) beyond its CI, the erasure failed and the effects on the
other tasks mean little. The random-subspace controls of equal rank, one per control seed,
tell the effect of the property from the damage of removing any subspace of that size.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping

import numpy as np
import pandas as pd

from sentprobe.analysis.stats import accuracy_interval, holm, paired_test
from sentprobe.errors import SentprobeError
from sentprobe.evaluation.identity import TASK, resolve, task_names
from sentprobe.evaluation.intervention import PREFIX as INTERVENTION
from sentprobe.evaluation.predictions import Predictions
from sentprobe.reporting.controls import split_controls
from sentprobe.reporting.render import control_summary, csv_table, markdown_table

ALPHA = 0.05
METHOD_NAMES = {"leace": "LEACE", "random": "random"}
FIT_NAMES = {"train": "training split", "train+dev": "training and dev splits"}
#: The held-out check's columns (NaN on every line but an erased task's own LEACE line).
HELD_OUT = ("heldout", "heldout_low", "heldout_high", "heldout_majority", "heldout_n")


def _majority(predictions: Predictions) -> float:
    """The best constant prediction's accuracy on these test items."""
    gold = predictions.gold_labels()
    return Counter(gold.tolist()).most_common(1)[0][1] / len(gold)


def _checks(
    df: pd.DataFrame, predictions: Mapping[str, Predictions]
) -> dict[tuple[str, ...], dict[str, object]]:
    """The held-out checks (``extra["erasure"]["check"]``), by (plain row, the spec of the
    erasure they check, task identity, probe): score, CI, majority share, items, protocol."""
    found: dict[tuple[str, ...], dict[str, object]] = {}
    for r in df.itertuples():
        erasure = r.extra.get("erasure") if isinstance(r.extra, dict) else None
        if not erasure or not erasure.get("check") or r.key not in predictions:
            continue
        p = predictions[r.key]
        low, high = accuracy_interval([p.correct]) or (np.nan, np.nan)
        folds = r.extra.get("fold_scores")
        key = (r.base_row, erasure["of"]) + tuple(getattr(r, c) for c in TASK) + (r.probe,)
        found[key] = {
            "heldout": 100 * float(np.mean(p.correct)),
            "heldout_low": 100 * low,
            "heldout_high": 100 * high,
            "heldout_majority": 100 * _majority(p),
            "heldout_n": len(p.correct),
            "check": (
                f"{len(folds)}-fold cross-fitting within erased test"
                if folds
                else "trained on erased dev, scored on erased test"
            ),
        }
    return found


def erasure_effects(
    frame: pd.DataFrame, predictions: Mapping[str, Predictions], alpha: float = ALPHA
) -> pd.DataFrame:
    """One line per (encoder, erased task, method, control seed, task) with stored
    predictions for both the erased and the plain result of the same task, probe and seed
    (the first seed); scores and changes in points. ``erased_task`` marks the erased task's
    own line; on its LEACE line the held-out check (``heldout`` with its CI, the majority
    share of its items, ``check``: how it was scored). ``failed_in_sample``: LEACE left the
    task above majority (lower CI bound above the majority share) for a probe trained on the
    vectors it was fit on; ``failed_held_out``: the held-out check did; ``failed``: either."""
    df, _ = split_controls(resolve(frame))
    df = df[~df["erasure"].str.startswith(INTERVENTION)]  # inside the forward pass: not here
    df = df.assign(task_label=task_names(df))
    df = df[df["seed"] == df.groupby(["base_row", *TASK, "probe"])["seed"].transform("min")]
    checks = _checks(df, predictions)
    plain = df[df["erasure"] == ""]
    by_identity = {
        (r.row_id, *(getattr(r, c) for c in TASK), r.probe): r for r in plain.itertuples()
    }
    label_of: dict[tuple[str, str, str], str] = {}  # (hash, name, language): display name
    for h, task, language, label in zip(
        df["task_hash"], df["task"], df["language"], df["task_label"], strict=True
    ):
        label_of.setdefault((h, task, language), label)
    lines = []
    for r in df[df["erasure"] != ""].itertuples():
        erasure = r.extra["erasure"]
        if erasure.get("check"):  # a held-out check: joined to the line of its erasure
            continue
        before = by_identity.get((r.base_row, *(getattr(r, c) for c in TASK), r.probe))
        if before is None or r.key not in predictions or before.key not in predictions:
            continue
        a, b = predictions[r.key], predictions[before.key]
        if not np.array_equal(a.gold_labels(), b.gold_labels()):
            continue
        test = paired_test(a.correct, b.correct)
        ci = accuracy_interval([a.correct]) or (np.nan, np.nan)
        what = (erasure["task_hash"], erasure["task"], erasure["language"])
        own = (r.task_hash, r.task, r.language) == what
        identity = (r.base_row, r.erasure, *(getattr(r, c) for c in TASK), r.probe)
        check = checks.get(identity, {}) if own and erasure["method"] == "leace" else {}
        lines.append(
            {
                "encoder": before.encoder,
                "erased": label_of.get(what, erasure["task"]),
                "erased_id": "|".join(map(str, what)),
                "method": erasure["method"],
                "fit": erasure.get("fit", "train"),
                "rank": erasure["rank"],
                "erasure_seed": erasure["seed"],
                "probe": r.probe,
                "task": r.task_label,
                "n": test.n,
                "before": 100 * test.accuracy_b,
                "after": 100 * test.accuracy_a,
                "after_low": 100 * ci[0],
                "after_high": 100 * ci[1],
                "majority": 100 * _majority(a),
                "diff": 100 * test.diff,
                "diff_low": 100 * test.diff_low,
                "diff_high": 100 * test.diff_high,
                "p_mcnemar": test.p_mcnemar,
                "erased_task": own,
                **{c: check.get(c, np.nan) for c in HELD_OUT},
                "check": check.get("check", ""),
            }
        )
    table = pd.DataFrame(lines)
    if table.empty:
        raise SentprobeError(
            "no erased results with stored predictions next to their plain results: "
            "run `sentprobe run --erase TASK ...` first"
        )
    one = ["encoder", "erased_id", "fit", "method", "erasure_seed", "probe"]  # one erasure
    groups = table.groupby(one, sort=False)["p_mcnemar"]
    table["p_holm"] = groups.transform(lambda p: pd.Series(holm(p.to_numpy()), index=p.index))
    table["significant"] = table["p_holm"] < alpha
    own = table["erased_task"] & (table["method"] == "leace")
    table["failed_in_sample"] = own & (table["after_low"] > table["majority"])
    table["failed_held_out"] = own & (table["heldout_low"] > table["heldout_majority"])
    table["failed"] = table["failed_in_sample"] | table["failed_held_out"]
    return table


def sanity_lines(table: pd.DataFrame) -> list[str]:
    """One line per erasure on its own task, in sample and by its held-out check: at
    chance, or plainly that it failed."""
    out = []
    for t in table[table["erased_task"] & (table["method"] == "leace")].itertuples(index=False):
        what = f"{t.encoder}, {t.task} after LEACE"
        score = f"{t.after:.1f} [{t.after_low:.1f}, {t.after_high:.1f}]"
        held = f"{t.heldout:.1f} [{t.heldout_low:.1f}, {t.heldout_high:.1f}]"
        if t.failed_in_sample:
            out.append(
                f"ERASURE FAILED: {what}: {score}, above majority {t.majority:.1f}; the "
                "property is still decodable, so the changes on other tasks do not measure "
                "its use."
            )
        if t.failed_held_out:
            out.append(
                f"ERASURE FAILED out of sample: {what}: held-out check ({t.check}) {held}, "
                f"above majority {t.heldout_majority:.1f}; the property is still decodable on "
                "items the eraser never saw, so the changes on other tasks do not measure its "
                f"use (in sample: {score})."
            )
        if np.isnan(t.heldout):
            out.append(
                f"{what}: {score}, majority {t.majority:.1f}"
                + ("" if t.failed_in_sample else ": at chance in sample only")
                + "; no held-out check stored (run the erasure again)."
            )
        elif t.failed_in_sample and not t.failed_held_out:
            out.append(
                f"{what}: held-out check ({t.check}) {held}, majority "
                f"{t.heldout_majority:.1f}: at chance out of sample."
            )
        elif not t.failed:
            out.append(
                f"{what}: {score}, majority {t.majority:.1f}: erased (at chance); held-out "
                f"check ({t.check}) {held}, majority {t.heldout_majority:.1f}: erased out of "
                "sample too."
            )
    return out


def _cell(t: pd.Series) -> str:
    d, lo, hi = t["diff"], t["diff_low"], t["diff_high"]
    return f"{d:+.1f}{'*' if t['significant'] else ''} [{lo:+.1f}, {hi:+.1f}]"


def _control_cells(control: pd.DataFrame, task: str) -> list[str]:
    """The random controls' two cells of ``task``: one seed with its CIs; several seeds
    their mean and, in parentheses, their range."""
    rows = control[control["task"] == task]
    if rows.empty:
        return ["–", "–"]
    if len(rows) == 1:
        t = rows.iloc[0]
        return [f"{t['after']:.1f} [{t['after_low']:.1f}, {t['after_high']:.1f}]", _cell(t)]
    s = control_summary(rows).iloc[0]
    star = "*" if s["significant"] else ""
    return [
        f"{s['after']:.1f} ({s['after_min']:.1f}–{s['after_max']:.1f})",
        f"{s['diff']:+.1f}{star} ({s['diff_min']:+.1f} … {s['diff_max']:+.1f})",
    ]


def erasure_text(table: pd.DataFrame, fmt: str = "markdown", alpha: float = ALPHA) -> str:
    """The effects as one markdown table per (encoder, erased task, fit), or csv/json
    records (every control seed a line of its own, with its CIs)."""
    if fmt == "csv":
        return csv_table(table)
    if fmt == "json":
        return json.dumps(json.loads(table.to_json(orient="records")), indent=2) + "\n"
    if fmt != "markdown":
        raise SentprobeError("--erasure prints markdown, csv or json")
    parts = []
    keys = ["encoder", "erased_id", "fit", "probe"]
    for (encoder, _, fit, probe), group in table.groupby(keys, sort=False):
        erased = group["erased"].iloc[0]
        leace = group[group["method"] == "leace"].set_index("task")
        control = group[group["method"] == "random"]
        rank = int(leace["rank"].max()) if len(leace) else int(control["rank"].max())
        seeds = sorted(int(s) for s in control["erasure_seed"].unique())
        header = ["Task", "before", "after LEACE [95% CI]", "Δ LEACE [95% CI]",
                  "held-out check [95% CI]"]  # fmt: skip
        if len(seeds) > 1:
            header += [f"after random, mean ({len(seeds)} seeds: range)", "Δ random, mean (range)"]
        else:
            header += ["after random [95% CI]", "Δ random [95% CI]"]
        rows = []
        for task, before in group.groupby("task", sort=False)["before"].first().items():
            cells = [str(task), f"{before:.1f}"]
            if task in leace.index:
                t = leace.loc[task]
                cells.append(f"{t['after']:.1f} [{t['after_low']:.1f}, {t['after_high']:.1f}]")
                cells.append(_cell(t))
                held = t["heldout"]
                cells.append(
                    "–"
                    if np.isnan(held)
                    else f"{held:.1f} [{t['heldout_low']:.1f}, {t['heldout_high']:.1f}]"
                    + (" FAILED" if t["failed_held_out"] else "")
                )
            else:
                cells += ["–", "–", "–"]
            cells += _control_cells(control, str(task))
            rows.append(cells)
        fitted = "" if fit == "train" else f", fit on {fit}"
        title = f"### {encoder}: {erased} erased ({probe} probe; rank {rank}{fitted})"
        notes = sanity_lines(group)
        checks = [c for c in leace["check"] if c] if len(leace) else []
        how = checks[0] if checks else "not stored"
        which = (
            f"seed {seeds[0]}, with its CIs"
            if len(seeds) == 1
            else f"seeds {', '.join(map(str, seeds))}: their mean and range; `--format csv` "
            "gives each seed's CIs; * where any seed's change is significant"
        )
        legend = (
            f"Δ: after minus before, points, paired bootstrap 95% CI; * McNemar's exact test "
            f"Holm-adjusted over the tasks of one erasure, p < {alpha:g}. LEACE fit on "
            f"{erased}'s {FIT_NAMES.get(fit, fit)}; held-out check: a probe on items the eraser "
            f"never saw ({how}), bootstrap 95% CI, FAILED when above the majority share "
            "beyond it. Random: a random subspace of the same rank in LEACE's z-scored "
            f"coordinates ({which}), the damage of erasing any subspace that size."
        )
        parts.append("\n".join([title, "", *notes, "", markdown_table(header, rows), legend]))
    return "\n\n".join(parts) + "\n"
