"""Does probing predict downstream performance? Spearman correlation across encoders.

Conneau et al. (2018, Fig. 2) correlate each probing task with each downstream task over
their 40+ encoders and grey the pairs that are not significant after correcting for multiple
comparisons; X-Probe (Ravishankar et al. 2019, Fig. 3) does the same per language with six
encoders and no significance test. Here every cell is a Spearman ρ over the encoders that
have both scores, with a two-sided p-value: exact (all n! pairings) for n <= 9 encoders,
where the t approximation scipy uses is unreliable, scipy's otherwise; p-values are
Holm-corrected across the whole matrix, and the number of encoders is part of every cell.

Downstream scores come from a CSV (``encoder,task,score`` and optionally ``language``) or
from MTEB result files (each task's ``main_score``). A downstream row with a language is
matched with the probing results of that language only (X-Probe's per-language view); one
without is matched with every probing language.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from sentprobe.analysis.stats import holm
from sentprobe.datasets.controls import is_control
from sentprobe.errors import DataError, SentprobeError
from sentprobe.io import read_csv_table
from sentprobe.reporting.crosslang import language_scores
from sentprobe.reporting.render import csv_table, latex_escape, latex_table, markdown_table

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: Fewest shared encoders a correlation is computed for (two points always correlate ±1).
MIN_ENCODERS = 3
#: Up to this many encoders, p-values are exact (all n! pairings; 9! = 362,880).
EXACT_MAX = 9
#: MTEB splits tried in this order when the caller names none (MSMARCO has only "dev").
MTEB_SPLITS = ("test", "dev", "validation", "train")
COLUMNS = [
    "probing_task",
    "probing_language",
    "downstream_task",
    "downstream_language",
    "n",
    "rho",
    "p",
    "p_holm",
    "significant",
]
FORMATS = ("markdown", "csv", "latex", "json")


# ---------------------------------------------------------------------------- input


def read_downstream(
    path: str | Path, split: str | None = None, rename: dict[str, str] | None = None
) -> pd.DataFrame:
    """Downstream scores as a frame (encoder, task, language, score, origin).

    ``path``: a CSV file (header ``encoder,task,score``, optional ``language``), an MTEB
    result JSON, or a directory searched recursively for MTEB result JSONs. ``split``: the
    MTEB split to read (default: the first of test, dev, validation, train the file has).
    ``rename`` maps downstream encoder names to the names in the results store.
    """
    path = Path(path)
    if not path.exists():
        raise SentprobeError(f"{path}: no such file or directory")
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.json") if p.name != "model_meta.json")
        if not files:
            raise SentprobeError(f"{path}: no MTEB result files (*.json) in this directory")
        frame = pd.concat([_read_mteb(f, split) for f in files], ignore_index=True)
    elif path.suffix.lower() == ".json":
        frame = _read_mteb(path, split)
    else:
        frame = _read_csv(path)
    if rename:
        frame["encoder"] = frame["encoder"].replace(rename)
    _check_unique(frame)
    return frame


def _read_csv(path: Path) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    table = read_csv_table(
        path,
        ("encoder", "task", "score"),
        None,
        comments=True,
        hint="encoder, task and score (optionally language)",
    )
    for lineno, row in table:
        for name in ("encoder", "task"):
            if not row[name]:
                raise DataError(path, lineno, f"empty {name}")
        try:
            score = float(row["score"])
        except ValueError:
            score = math.nan
        if not math.isfinite(score):
            raise DataError(path, lineno, f"score {row['score']!r} is not a finite number")
        rows.append(
            {
                "encoder": row["encoder"],
                "task": row["task"],
                "language": row.get("language", ""),
                "score": score,
                "origin": f"{path}, line {lineno}",
            }
        )
    if not rows:
        raise DataError(path, None, "no scores under the header")
    return pd.DataFrame(rows)


def _mteb_encoder(path: Path) -> str:
    """The model a result file belongs to: ``model_meta.json``'s name beside it, else the
    folder (MTEB writes ``<org__model>/<revision>/<Task>.json``)."""
    meta = path.parent / "model_meta.json"
    if meta.is_file():
        try:
            name = json.loads(meta.read_text(encoding="utf-8")).get("name")
        except (OSError, ValueError, AttributeError):
            name = None
        if isinstance(name, str) and name:
            return name
    folder = path.parent
    if re.fullmatch(r"[0-9a-f]{40}|no_revision_available|external", folder.name):
        folder = folder.parent
    return folder.name.replace("__", "/")


def _read_mteb(path: Path, split: str | None) -> pd.DataFrame:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise DataError(path, e.lineno, f"not valid JSON ({e.msg})") from None
    except UnicodeDecodeError as e:
        raise DataError(path, None, f"not valid UTF-8 ({e.reason})") from None
    if not isinstance(doc, dict):
        raise DataError(path, None, "not an MTEB result (expected a JSON object)")
    task = doc.get("task_name") or doc.get("mteb_dataset_name") or path.stem
    # MTEB >= 1.11: {"scores": {split: [{"main_score", "hf_subset", ...}]}};
    # older files: {split: {"main_score": ...}} or {split: {subset: {"main_score": ...}}}.
    splits = doc["scores"] if isinstance(doc.get("scores"), dict) else doc
    names = [split] if split else [s for s in MTEB_SPLITS if s in splits]
    if not names or names[0] not in splits:
        have = [k for k, v in splits.items() if isinstance(v, list | dict)]
        raise DataError(
            path,
            None,
            f"no {split or ' / '.join(MTEB_SPLITS)} split in this MTEB result "
            f"(splits: {', '.join(have) or 'none'})",
        )
    entries = splits[names[0]]
    if isinstance(entries, dict):
        if "main_score" in entries:
            entries = [{**entries, "hf_subset": "default"}]
        else:
            entries = [{**v, "hf_subset": k} for k, v in entries.items() if isinstance(v, dict)]
    rows = []
    encoder = _mteb_encoder(path)
    for entry in entries if isinstance(entries, list) else []:
        score = entry.get("main_score") if isinstance(entry, dict) else None
        if not isinstance(score, int | float) or not math.isfinite(score):
            continue  # MTEB writes null for a subset it could not score
        subset = str(entry.get("hf_subset", "default"))
        rows.append(
            {
                "encoder": encoder,
                "task": str(task),
                "language": "" if subset == "default" else subset,
                "score": float(score),
                "origin": str(path),
            }
        )
    if not rows:
        raise DataError(path, None, f"no main_score in split {names[0]!r}")
    return pd.DataFrame(rows)


def _check_unique(frame: pd.DataFrame) -> None:
    keys = ["encoder", "task", "language"]
    dup = frame[frame.duplicated(keys, keep=False)]
    if not dup.empty:
        first = dup.iloc[0]
        where = " and ".join(dup[(dup[keys] == first[keys]).all(axis=1)]["origin"].head(2))
        lang = f" ({first['language']})" if first["language"] else ""
        raise SentprobeError(
            f"two downstream scores for {first['encoder']} on {first['task']}{lang}: {where}"
        )


def parse_renames(values: Sequence[str] | None) -> dict[str, str]:
    """``--rename DOWNSTREAM=ENCODER`` values as a dict."""
    out: dict[str, str] = {}
    for value in values or []:
        old, sep, new = value.partition("=")
        if not sep or not old.strip() or not new.strip():
            raise SentprobeError(f"--rename: expected DOWNSTREAM=ENCODER, got {value!r}")
        out[old.strip()] = new.strip()
    return out


# ---------------------------------------------------------------------------- statistics


@cache
def _pairings(n: int) -> np.ndarray:
    """Every permutation of ``range(n)``, as an (n!, n) array."""
    return np.array(list(itertools.permutations(range(n))), dtype=np.int8)


def spearman(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    """Spearman's ρ and its two-sided p-value; (nan, nan) when either side is constant.

    Up to :data:`EXACT_MAX` points the p-value is exact: the share of all n! pairings of the
    ranks whose |ρ| reaches the observed one (ties keep their average ranks); beyond, scipy's
    t approximation.
    """
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(a) != len(b):
        raise ValueError("x and y must have the same length")
    if len(a) < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return math.nan, math.nan
    if len(a) > EXACT_MAX:
        result = scipy_stats.spearmanr(a, b)
        return float(result.statistic), float(result.pvalue)
    ra = scipy_stats.rankdata(a) - (len(a) + 1) / 2
    rb = scipy_stats.rankdata(b) - (len(b) + 1) / 2
    norm = math.sqrt(float(ra @ ra) * float(rb @ rb))
    rho = float(ra @ rb) / norm
    permuted = rb[_pairings(len(b))] @ ra / norm
    p = float(np.mean(np.abs(permuted) >= abs(rho) - 1e-12))
    return rho, p


def probing_scores(
    frame: pd.DataFrame, metric: str = "test_score", encoders: Sequence[str] | None = None
) -> pd.DataFrame:
    """Probing scores (points) per encoder x task x language, as the cross-language report
    reads them (latest record per unit, seeds averaged); baselines included: they count
    where the downstream file has scores for them. Control tasks (``T~control``) are not
    probing tasks: they are left out, so they neither add rows nor grow the Holm family."""
    if "task" in frame.columns:
        frame = frame[~frame["task"].astype(str).map(is_control)]
    return language_scores(frame, metric, encoders, include_baselines=True)


def correlate(probing: pd.DataFrame, downstream: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """One row per probing task x downstream task (x language): n, ρ, p, Holm-adjusted p and
    whether it is below ``alpha``. ``probing``: encoder, task, language, score (see
    :func:`probing_scores`); ``downstream``: see :func:`read_downstream`."""
    probe = probing[["encoder", "task", "language", "score"]].dropna(subset=["score"])
    down = downstream[["encoder", "task", "language", "score"]]
    _check_overlap(probe, down)
    rows = []
    for (dtask, dlang), d in down.groupby(["task", "language"], sort=False):
        matched = probe if not dlang else probe[probe["language"] == dlang]
        for (ptask, plang), p in matched.groupby(["task", "language"], sort=False):
            both = p.merge(d, on="encoder", suffixes=("_p", "_d"))
            n = len(both)
            rho, pval = (
                spearman(both["score_p"], both["score_d"]) if n >= MIN_ENCODERS else (math.nan,) * 2
            )
            rows.append([ptask, plang, dtask, dlang, n, rho, pval])
    cells = pd.DataFrame(rows, columns=COLUMNS[:7])
    tested = cells["p"].notna()
    if not tested.any():
        raise SentprobeError(
            f"no probing task and downstream task share {MIN_ENCODERS} or more encoders "
            f"(in the same language), so no correlation can be computed"
        )
    cells["p_holm"] = math.nan
    cells.loc[tested, "p_holm"] = holm(cells.loc[tested, "p"].to_numpy())
    cells["significant"] = cells["p_holm"] < alpha
    return cells


def _check_overlap(probe: pd.DataFrame, down: pd.DataFrame) -> None:
    """Fewer than three shared encoders: say which names are on each side."""
    mine, theirs = set(probe["encoder"]), set(down["encoder"])
    shared = mine & theirs
    if len(shared) >= MIN_ENCODERS:
        return

    def names(values: set[str]) -> str:
        listed = sorted(values)
        more = f" (+{len(listed) - 8} more)" if len(listed) > 8 else ""
        return ", ".join(listed[:8]) + more if listed else "none"

    raise SentprobeError(
        f"only {len(shared)} encoder(s) have both probing results and downstream scores "
        f"({names(shared)}); a correlation needs at least {MIN_ENCODERS}. Probing results: "
        f"{names(mine - shared)}; downstream: {names(theirs - shared)} "
        "(use --rename DOWNSTREAM=ENCODER when the same encoder has two names)"
    )


# ---------------------------------------------------------------------------- tables


def cell_labels(cells: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Row (probing) and column (downstream) label of every cell, in order.

    A probing row names its language when the probing results have several and the
    downstream column does not fix it; a column names its language when it has one.
    """
    several = cells["probing_language"].nunique() > 1
    rows = [
        f"{t} ({pl})" if several and not dl and pl else str(t)
        for t, pl, dl in zip(
            cells["probing_task"], cells["probing_language"], cells["downstream_language"]
        )
    ]
    columns = [
        f"{t} ({dl})" if dl else str(t)
        for t, dl in zip(cells["downstream_task"], cells["downstream_language"])
    ]
    return rows, columns


def correlation_matrix(cells: pd.DataFrame, value: str = "rho") -> pd.DataFrame:
    """``value`` (rho, p, p_holm, n, significant) as a probing x downstream matrix."""
    rows, columns = cell_labels(cells)
    wide = cells.assign(_row=rows, _col=columns).pivot_table(
        index="_row", columns="_col", values=value, aggfunc="first", sort=False, dropna=False
    )
    wide = wide.reindex(index=list(dict.fromkeys(rows)), columns=list(dict.fromkeys(columns)))
    wide.index.name, wide.columns.name = "probing", "downstream"
    return wide


def n_summary(cells: pd.DataFrame) -> str:
    """ "n = 6" or "n = 4-6": how many encoders the tested cells rest on."""
    n = cells.loc[cells["p"].notna(), "n"]
    lo, hi = int(n.min()), int(n.max())
    return f"n = {lo}" if lo == hi else f"n = {lo}-{hi}"


def caption(cells: pd.DataFrame, alpha: float = 0.05) -> str:
    tests = int(cells["p"].notna().sum())
    return (
        f"Spearman ρ across encoders ({n_summary(cells)}); * = Holm-adjusted p < {alpha:g} "
        f"over the {tests} correlations tested; - = fewer than {MIN_ENCODERS} shared encoders"
    )


def correlation_table(cells: pd.DataFrame, fmt: str = "markdown", alpha: float = 0.05) -> str:
    """markdown/latex: the matrix of ρ (``*`` = significant after Holm) under its caption;
    csv/json: one record per cell with n, ρ, p and the Holm-adjusted p."""
    if fmt not in FORMATS:
        raise SentprobeError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if fmt == "csv":
        return csv_table(cells.round({"rho": 4}))
    if fmt == "json":
        records = [
            {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
            for r in cells.to_dict(orient="records")
        ]
        for r in records:
            r["significant"] = bool(r["significant"])
        return json.dumps(records, indent=2, ensure_ascii=False) + "\n"
    rho, sig = correlation_matrix(cells, "rho"), correlation_matrix(cells, "significant")
    text = [
        [
            "-" if pd.isna(v) else f"{v:+.2f}" + ("*" if bool(sig.loc[r, c]) else "")
            for c, v in rho.loc[r].items()
        ]
        for r in rho.index
    ]
    note = caption(cells, alpha)
    if fmt == "latex":
        body = latex_table(
            ["Probing", *(latex_escape(str(c)) for c in rho.columns)],
            [[latex_escape(str(r)), *row] for r, row in zip(rho.index, text)],
            notes=[latex_escape(note).replace("ρ", r"$\rho$")],
        )
        return body
    table = markdown_table(
        ["Probing", *rho.columns], [[r, *row] for r, row in zip(rho.index, text)]
    )
    return f"{table}\n{note}\n"


def correlation_cells(
    frame: pd.DataFrame,
    downstream: str | Path,
    metric: str = "test_score",
    encoders: Sequence[str] | None = None,
    rename: dict[str, str] | None = None,
    split: str | None = None,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """:func:`correlate` of a results frame against a downstream file, in one call."""
    scores = read_downstream(downstream, split, rename)
    return correlate(probing_scores(frame, metric, encoders), scores, alpha)


def correlation_heatmap(cells: pd.DataFrame, alpha: float = 0.05) -> Figure:
    """The matrix as a heatmap (Conneau et al.'s Figure 2), n in the title."""
    from sentprobe.reporting.plots import correlation_figure

    title = f"Spearman ρ, probing vs downstream, across encoders ({n_summary(cells)})"
    return correlation_figure(
        correlation_matrix(cells, "rho"), correlation_matrix(cells, "significant"), title, alpha
    )
