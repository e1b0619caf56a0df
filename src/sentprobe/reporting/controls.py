"""What the probe could do without the property: control-task accuracy and selectivity
(Hewitt & Liang, 2019) and MDL codelengths (Voita & Titov, 2020), beside the results table.

Control tasks are stored as tasks named ``<task>~control`` (``sentprobe.datasets.controls``),
one per control map: seed ``s`` probes the map drawn with seed ``s`` (its ``extra`` says
``control_seed``). They are not columns of the results table but tables below it: for each
row and task with a control result, the control accuracy, the control's *ceiling* (the test
accuracy of a perfect memoriser of the control function, per map: mean and minimum) and
``selectivity = accuracy - control accuracy`` (points), each control record paired with the
same seed's task record, or with the task's one record where its probe has no seed, so a ±
is over control maps. A control whose labels are the task's renamed one to one
(``control_permutes``) has selectivity 0 by construction: shown "n/a" with the reason.
MDL results are records of the probe ``mdl`` whose ``extra`` holds the codelengths in bits;
reports give the compression (uniform / online codelength) with the saving in bits beside it
(uniform - online) and ``2^-saving``, the code's own bound on the chance that labels without
signal are coded that short. CSV and JSON keep every digit; text shows compression to three
decimals, codelengths and savings in bits.
"""

from __future__ import annotations

import pandas as pd

from sentprobe.datasets.controls import controlled_name, is_control
from sentprobe.errors import SentprobeError
from sentprobe.evaluation.identity import TASK, resolve, task_names
from sentprobe.reporting.render import (
    csv_table,
    json_records,
    latex_escape,
    latex_table,
    markdown_table,
)
from sentprobe.reporting.tables import IntervalFn, probe_mark, results_table

#: A control result matches its task's result of the same row, probe, seed, source, language.
_MATCH = ["row_id", "probe", "seed", "base", "task_source", "language"]
#: One cell of the tidy frame: a row (display name, one per fingerprint), a task, a probe.
_CELL = ["encoder", *TASK, "probe"]
#: Tidy columns of :func:`method_frame` (percent for scores, bits for codelengths).
TIDY = (
    "encoder",
    "task",
    "probe",
    "seeds",
    "score",
    "control_maps",
    "control_score",
    "control_ceiling",
    "control_ceiling_min",
    "control_agreement",
    "control_agreement_min",
    "control_agreement_max",
    "maps_agreement",
    "maps_agreement_max",
    "selectivity",
    "notes",
)
MDL_TIDY = ("codelength_bits", "saving_bits", "no_signal_bound", "compression")
CONTROL_MDL_TIDY = tuple(f"control_{c}" for c in MDL_TIDY)
#: Why a control's selectivity is not shown (its labels are the task's, renamed).
PERMUTED = (
    "n/a: the control's labels are the task's renamed one to one (its keys are the words the "
    "labels name, as on WC), so its selectivity is 0 by construction and says nothing"
)


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


def _extra(frame: pd.DataFrame) -> list[dict]:
    column = frame["extra"] if "extra" in frame.columns else [None] * len(frame)
    return [e if isinstance(e, dict) else {} for e in column]


def _dev_scores(frame: pd.DataFrame) -> list:
    return list(frame["dev_score"]) if "dev_score" in frame.columns else [None] * len(frame)


def selectivity_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The records of real tasks paired with their control results, one line per control
    record (so per map), with ``control_score``, ``control_seed`` (the map's seed),
    ``control_ceiling`` (None where not stored) and ``selectivity`` columns (fractions, as
    ``test_score``; selectivity NaN where the control permutes the task's labels, with
    ``selectivity_note`` saying so). A control record pairs with the same seed's task record,
    or with the task's seed-0 record where that says no seed changes it; ``extra`` is the
    control record's (the pair depends on its map), and ``control_dev_score`` its dev score."""
    tasks, controls = split_controls(frame)
    columns = [
        "control_score",
        "control_dev_score",
        "control_seed",
        "control_ceiling",
        "control_agreement",
        "control_agreement_with",
    ]
    if tasks.empty or controls.empty:
        empty = [*columns, "selectivity", "selectivity_note"]
        return tasks.iloc[0:0].assign(**{c: [] for c in empty})
    left, right = _latest(tasks), _latest(controls)
    extras = _extra(right)
    right = right.assign(
        control_score=right["test_score"],
        control_dev_score=_dev_scores(right),
        control_seed=[int(e.get("control_seed", 0)) for e in extras],
        control_ceiling=[e.get("control_ceiling") for e in extras],
        control_agreement=[e.get("control_agreement") for e in extras],
        control_agreement_with=[e.get("control_agreement_with") or {} for e in extras],
        control_permutes=[bool(e.get("control_permutes")) for e in extras],
        control_extra=[{**e, "seeded": True} for e in extras],  # the pair depends on its map
    )
    right = right[[*_MATCH, *columns, "control_permutes", "control_extra"]]
    exact = left.merge(right, on=_MATCH, how="inner")
    fixed = left[[e.get("seeded") is False for e in _extra(left)]]
    shared = [c for c in _MATCH if c != "seed"]
    alone = right.merge(exact[_MATCH], on=_MATCH, how="left", indicator=True)
    alone = alone[alone["_merge"] == "left_only"].drop(columns="_merge")
    spread = fixed.drop(columns="seed").merge(alone, on=shared, how="inner")
    merged = pd.concat([exact, spread], ignore_index=True).drop(columns="base")
    permutes = merged.pop("control_permutes").astype(bool)
    merged["selectivity"] = (merged["test_score"] - merged["control_score"]).where(~permutes)
    merged["selectivity_note"] = [PERMUTED if p else "" for p in permutes]
    merged["extra"] = merged.pop("control_extra")
    return merged.sort_values(["encoder", "probe", "task", "seed"], kind="stable")


def mdl_frame(frame: pd.DataFrame, controls: bool = False) -> pd.DataFrame:
    """Records with MDL results, with ``codelength_bits``, ``saving_bits`` (uniform - online
    codelength), ``no_signal_bound`` (``2^-saving``, at most 1) and ``compression``: of real
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
    out["codelength_bits"] = [float(e["codelength"]) for e in chosen]
    # uniform = compression x online codelength where a record lacks the uniform's own
    saving = [
        float(e.get("uniform_codelength", e["compression"] * e["codelength"])) - e["codelength"]
        for e in chosen
    ]
    out["saving_bits"] = saving
    out["no_signal_bound"] = [2.0**-s if s > 0 else 1.0 for s in saving]
    out["compression"] = [float(e["compression"]) for e in chosen]
    return out


def method_frame(frame: pd.DataFrame, interval: IntervalFn | None = None) -> pd.DataFrame:
    """One tidy row per (encoder, task, probe): mean over seeds of the score, its 95% CI
    (``ci_low``/``ci_high``, with ``interval`` as the results table's), and where known the
    number of control maps, the control score (mean over maps), its ceiling (mean and
    minimum over maps), selectivity (percent), MDL codelength and saving (bits), its
    ``2^-saving`` and compression, of the task and of its control task, and ``notes``: why a
    number says nothing (a collapsed probe, a control that permutes the labels). Nothing is
    rounded."""
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
    notes: dict[tuple, list[str]] = {}
    cells = list(df[keys].itertuples(index=False, name=None))
    for cell, extra, dev in zip(cells, _extra(df), _dev_scores(df), strict=True):
        if reason := probe_mark(extra, dev)[1]:
            notes.setdefault(cell, []).append(reason)
    sel = selectivity_frame(frame)
    if not sel.empty:
        sel = sel.assign(control_ceiling=pd.to_numeric(sel["control_ceiling"]))
        grouped = sel.groupby(keys, sort=False)
        out = out.join(grouped["control_seed"].nunique().rename("control_maps"))
        out = out.join(grouped[["control_score", "control_ceiling", "selectivity"]].mean() * 100)
        out = out.join(grouped["control_ceiling"].min().rename("control_ceiling_min") * 100)
        agreement = pd.to_numeric(sel["control_agreement"]) * 100
        by_cell = agreement.groupby([sel[k] for k in keys], sort=False)
        for name, how in (("", "mean"), ("_min", "min"), ("_max", "max")):
            out = out.join(by_cell.agg(how).rename(f"control_agreement{name}"))
        between = {cell: _between_maps(group) for cell, group in sel.groupby(keys, sort=False)}
        for side, name in enumerate(("maps_agreement", "maps_agreement_max")):
            out[name] = [between.get(cell, (None, None))[side] for cell in out.index]
        for cell, reasons in grouped["selectivity_note"]:
            for reason in dict.fromkeys(r for r in reasons if r):
                notes.setdefault(cell, []).append(f"selectivity {reason}")
        cells = list(sel[keys].itertuples(index=False, name=None))
        for cell, extra, dev in zip(cells, _extra(sel), sel["control_dev_score"], strict=True):
            if reason := probe_mark(extra, dev)[1]:
                notes.setdefault(cell, []).append(f"control: {reason}")
    mdl = mdl_frame(frame)
    if not mdl.empty:
        out = out.join(mdl.groupby(keys, sort=False)[list(MDL_TIDY)].mean())
    control_mdl = mdl_frame(frame, controls=True)
    if not control_mdl.empty:
        named = dict(zip(MDL_TIDY, CONTROL_MDL_TIDY, strict=True))
        means = control_mdl.groupby(keys, sort=False)[list(MDL_TIDY)].mean()
        out = out.join(means.rename(columns=named))
    out["notes"] = ["; ".join(dict.fromkeys(notes.get(cell, []))) for cell in out.index]
    out = out.reset_index()
    out["task"] = task_names(out)
    return out.drop(columns=["task_source", "language"])


def _between_maps(group: pd.DataFrame) -> tuple[float | None, float | None]:
    """(mean, highest) percent of test items that two of ``group``'s control maps label
    alike, over the pairs of its maps (each map's record holds its agreement with the maps
    of lower seeds); (None, None) with fewer than two maps."""
    seeds = set(group["control_seed"])
    found = {
        (j, int(k)): float(v)
        for j, agree in zip(group["control_seed"], group["control_agreement_with"], strict=True)
        for k, v in agree.items()
        if int(k) in seeds and v is not None
    }
    if not found:
        return None, None
    values = [100 * v for v in found.values()]
    return sum(values) / len(values), max(values)


def agreement_table(sel: pd.DataFrame, fmt: str, decimals: int = 1) -> str:
    """Per task (a property of its control maps, the same for every row): each map's test
    agreement with the task's labels, and the mean and highest agreement between two maps,
    in percent; "" where no record says."""
    known = sel.dropna(subset=["control_agreement"])
    if known.empty:
        return ""
    known = known.assign(name=task_names(known))
    maps = sorted({int(s) for s in known["control_seed"]})
    rows = []
    for name, group in known.groupby("name", sort=False):
        group = group.drop_duplicates("control_seed")
        each = dict(zip(group["control_seed"], group["control_agreement"], strict=True))
        mean, high = _between_maps(group)
        cells = [each.get(m) for m in maps] + [
            None if mean is None else mean / 100,
            None if high is None else high / 100,
        ]
        rows.append([str(name), *("" if v is None else f"{100 * v:.{decimals}f}" for v in cells)])
    header = ["task", *(f"map {m}" for m in maps), "between maps", "between maps, highest"]
    if fmt == "latex":
        return latex_table(
            [latex_escape(h) for h in header], [[latex_escape(c) for c in r] for r in rows]
        )
    return markdown_table(header, rows)


#: Titles of the control sections; the ± of each is over control maps.
_OVER_MAPS = "; ± sd over control maps, seed s probing the map drawn with seed s"


def methods_report(
    frame: pd.DataFrame, fmt: str, decimals: int = 1, interval: IntervalFn | None = None
) -> str:
    """The control and MDL tables (markdown/latex: one titled table per measure in the results
    table's layout; csv/json: the tidy :func:`method_frame`, unrounded, with the CIs of
    ``interval``); "" when there is nothing. Compression has three decimals, codelengths and
    savings are in bits."""
    frame = resolve(frame)
    sel, mdl = selectivity_frame(frame), mdl_frame(frame)
    if sel.empty and mdl.empty:
        return ""
    if fmt in ("csv", "json"):
        tidy = method_frame(frame, interval)
        if fmt == "csv":
            return csv_table(tidy)
        return json_records(tidy.to_dict(orient="records"))
    sections = []
    if not sel.empty:  # the control's dev score decides whether the control probe collapsed
        sel = sel.assign(dev_score=sel["control_dev_score"])
        maps = sel.groupby(["encoder", "probe", *TASK])["control_seed"].nunique()
        several = bool((maps > 1).any())
        over = _OVER_MAPS if several else ""
        sections.append(
            (f"Control task accuracy (%{over})", results_table(sel, "control_score", fmt, decimals))
        )
        ceiling = sel.dropna(subset=["control_ceiling"])
        ceiling = ceiling.assign(  # a property of the map, not of a probe: no collapse marks
            control_ceiling=ceiling["control_ceiling"].astype(float),
            extra=[{"seeded": True}] * len(ceiling),
        )
        if not ceiling.empty:
            what = "%: test accuracy of a perfect memoriser of the control function"
            sections.append(
                (
                    f"Control ceiling ({what}{over})",
                    results_table(ceiling, "control_ceiling", fmt, decimals),
                )
            )
            if several:
                lowest = ceiling.sort_values("control_ceiling", kind="stable")
                cell = ["encoder", "probe", *TASK, "row_id", "erasure"]  # the full identity
                keys = [c for c in cell if c in lowest.columns]
                lowest = lowest.drop_duplicates(keys).assign(seed=0)
                sections.append(
                    (
                        "Control ceiling, lowest over the control maps (%)",
                        results_table(lowest, "control_ceiling", fmt, decimals),
                    )
                )
        if agreement := agreement_table(sel, fmt, decimals):
            sections.append(
                (
                    "Control labels' agreement with the task's labels, and between control "
                    "maps (% of test items; chance for random labels with the task's counts: "
                    "the sum of the squared label shares)",
                    agreement,
                )
            )
        undefined = [  # n/a, with the reason, where the control permutes the task's labels
            {**e, "undefined": note} if note else e
            for e, note in zip(sel["extra"], sel["selectivity_note"], strict=True)
        ]
        sections.append(
            (
                f"Selectivity (accuracy - control accuracy, points{over})",
                results_table(sel.assign(extra=undefined), "selectivity", fmt, decimals),
            )
        )
    if not mdl.empty:
        sections += [
            (
                "MDL compression (uniform / online codelength)",
                results_table(mdl, "compression", fmt, 3, percent=False),
            ),
            (
                "MDL saving (bits: uniform - online codelength; labels without signal are "
                "coded this short with probability at most 2^-saving)",
                results_table(mdl, "saving_bits", fmt, 1, percent=False),
            ),
            (
                "MDL online codelength (bits)",
                results_table(mdl, "codelength_bits", fmt, 1, percent=False),
            ),
        ]
    control_mdl = mdl_frame(frame, controls=True)
    if not control_mdl.empty:
        sections.append(
            (
                "MDL compression of the control tasks",
                results_table(control_mdl, "compression", fmt, 3, percent=False),
            )
        )
    if fmt == "markdown":
        return "\n".join(f"**{title}**\n\n{table}" for title, table in sections)
    if fmt == "latex":
        return "\n".join(f"% {title}\n{table}" for title, table in sections)
    raise SentprobeError(f"unknown table format {fmt!r}")
