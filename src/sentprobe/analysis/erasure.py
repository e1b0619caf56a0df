"""What erasing one task's property does to every task: the erased rows of ``run --erase``
(evaluation/erasure.py) against their plain rows, item by item.

Per (encoder, erased task, erasure) and task: accuracy before and after with the bootstrap CI
of the latter, the change with its paired bootstrap CI, McNemar's exact test Holm-adjusted
over the tasks of that erasure (analysis/stats.py). The erased task's own line is the sanity
check: after a working erasure its accuracy is no better than the best constant prediction
(the test split's majority class share) within its CI; above it, the erasure failed and the
effects on the other tasks mean little. The random-subspace control of equal rank tells the
effect of the property from the damage of removing any subspace of that size.
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
from sentprobe.evaluation.predictions import Predictions
from sentprobe.reporting.controls import split_controls
from sentprobe.reporting.render import csv_table, markdown_table

ALPHA = 0.05
METHOD_NAMES = {"leace": "LEACE", "random": "random"}


def _majority(predictions: Predictions) -> float:
    """The best constant prediction's accuracy on these test items."""
    gold = predictions.gold_labels()
    return Counter(gold.tolist()).most_common(1)[0][1] / len(gold)


def erasure_effects(
    frame: pd.DataFrame, predictions: Mapping[str, Predictions], alpha: float = ALPHA
) -> pd.DataFrame:
    """One line per (encoder, erased task, method, task) with stored predictions for both the
    erased and the plain result of the same task, probe and seed (the first seed); scores and
    changes in points. ``erased_task`` marks the erased task's own line, ``failed`` a LEACE
    erasure that left it above majority (lower CI bound above the majority share)."""
    df, _ = split_controls(resolve(frame))
    df = df.assign(task_label=task_names(df))
    df = df[df["seed"] == df.groupby(["base_row", *TASK, "probe"])["seed"].transform("min")]
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
        before = by_identity.get((r.base_row, *(getattr(r, c) for c in TASK), r.probe))
        if before is None or r.key not in predictions or before.key not in predictions:
            continue
        a, b = predictions[r.key], predictions[before.key]
        if not np.array_equal(a.gold_labels(), b.gold_labels()):
            continue
        test = paired_test(a.correct, b.correct)
        ci = accuracy_interval([a.correct]) or (np.nan, np.nan)
        erasure = r.extra["erasure"]
        what = (erasure["task_hash"], erasure["task"], erasure["language"])
        own = (r.task_hash, r.task, r.language) == what
        lines.append(
            {
                "encoder": before.encoder,
                "erased": label_of.get(what, erasure["task"]),
                "erased_id": "|".join(map(str, what)),
                "method": erasure["method"],
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
            }
        )
    table = pd.DataFrame(lines)
    if table.empty:
        raise SentprobeError(
            "no erased results with stored predictions next to their plain results: "
            "run `sentprobe run --erase TASK ...` first"
        )
    one = ["encoder", "erased_id", "method", "erasure_seed", "probe"]  # one erasure
    groups = table.groupby(one, sort=False)["p_mcnemar"]
    table["p_holm"] = groups.transform(lambda p: pd.Series(holm(p.to_numpy()), index=p.index))
    table["significant"] = table["p_holm"] < alpha
    above = table["after_low"] > table["majority"]
    table["failed"] = table["erased_task"] & (table["method"] == "leace") & above
    return table


def sanity_lines(table: pd.DataFrame) -> list[str]:
    """One line per erasure on its own task: at chance, or plainly that it failed."""
    out = []
    for t in table[table["erased_task"]].itertuples(index=False):
        what = f"{t.encoder}, {t.task} after {METHOD_NAMES.get(t.method, t.method)}"
        score = f"{t.after:.1f} [{t.after_low:.1f}, {t.after_high:.1f}]"
        if t.failed:
            out.append(
                f"ERASURE FAILED: {what}: {score}, above majority {t.majority:.1f}; the "
                "property is still decodable, so the changes on other tasks do not measure "
                "its use."
            )
        elif t.method == "leace":
            out.append(f"{what}: {score}, majority {t.majority:.1f}: erased (at chance).")
    return out


def _cell(t: pd.Series) -> str:
    d, lo, hi = t["diff"], t["diff_low"], t["diff_high"]
    return f"{d:+.1f}{'*' if t['significant'] else ''} [{lo:+.1f}, {hi:+.1f}]"


def erasure_text(table: pd.DataFrame, fmt: str = "markdown", alpha: float = ALPHA) -> str:
    """The effects as one markdown table per (encoder, erased task), or csv/json records."""
    if fmt == "csv":
        return csv_table(table)
    if fmt == "json":
        return json.dumps(json.loads(table.to_json(orient="records")), indent=2) + "\n"
    if fmt != "markdown":
        raise SentprobeError("--erasure prints markdown, csv or json")
    parts = []
    for (encoder, _, probe), group in table.groupby(["encoder", "erased_id", "probe"], sort=False):
        erased = group["erased"].iloc[0]
        leace = group[group["method"] == "leace"].set_index("task")
        control = group[group["method"] == "random"].set_index("task")
        rank = int(leace["rank"].max()) if len(leace) else int(control["rank"].max())
        seed = int(control["erasure_seed"].iloc[0]) if len(control) else 0
        header = ["Task", "before", "after LEACE [95% CI]", "Δ LEACE [95% CI]",
                  "after random [95% CI]", "Δ random [95% CI]"]  # fmt: skip
        rows = []
        for task, before in group.groupby("task", sort=False)["before"].first().items():
            cells = [str(task), f"{before:.1f}"]
            for side in (leace, control):
                if task not in side.index:
                    cells += ["–", "–"]
                    continue
                t = side.loc[task]
                cells.append(f"{t['after']:.1f} [{t['after_low']:.1f}, {t['after_high']:.1f}]")
                cells.append(_cell(t))
            rows.append(cells)
        title = f"### {encoder}: {erased} erased ({probe} probe; rank {rank})"
        notes = sanity_lines(group)
        legend = (
            f"Δ: after minus before, points, paired bootstrap 95% CI; * McNemar's exact test "
            f"Holm-adjusted over the tasks of one erasure, p < {alpha:g}. LEACE fit on "
            f"{erased}'s training split; random: a random subspace of the same rank "
            f"(seed {seed}), the damage of erasing any subspace that size."
        )
        parts.append("\n".join([title, "", *notes, "", markdown_table(header, rows), legend]))
    return "\n\n".join(parts) + "\n"
