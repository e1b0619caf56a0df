"""Probing accuracy as encoders train: against epoch (Conneau et al. 2018, Fig. 1) and
against embedding size (their Fig. 3), with the training objective's validation metric.

Inputs: the results store's rows of trained runs (encoder labels ``NAME@epoch-K``, written
by ``sentprobe run -e runs/NAME@all``) and the runs' manifests (``training.checkpoint``),
which give each epoch's validation metric and the run's ``dim``. One panel per run: one line
per probing task, the validation metric dashed on a second axis. Runs that differ only in
``dim`` (a ``--dim`` sweep: same architecture, objective and data) get a panel per group
with the size on the x axis, each run at its last probed epoch (a run of a sweep probed at
one epoch only has no panel of its own). Where a run decoded (autoencoder, translation,
Seq2Tree), the second axis is its validation BLEU.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from sentprobe.datasets.controls import is_control
from sentprobe.errors import SentprobeError
from sentprobe.evaluation.identity import resolve, row_names, run_folder, task_names
from sentprobe.reporting.plots import LINE_COLOURS, new_figure, save_figure

_EPOCH = re.compile(r"^(?P<run>.+)@epoch-(?P<epoch>\d+)$")
METRIC_LABEL = {"ppl": "validation perplexity", "acc": "validation accuracy (%)",
                "token_acc": "validation token accuracy (%)", "mse": "validation MSE",
                "retrieval": "validation retrieval (share)",
                "task": "validation task accuracy (share)",
                "bleu": "validation BLEU (greedy decoding)"}  # fmt: skip


def epoch_scores(frame: pd.DataFrame, metric: str = "test_score") -> pd.DataFrame:
    """Rows of trained-run epochs: run, epoch, task, score (mean over seeds, in %).

    One point per (run, epoch, task identity, probe), the newest result per identity: tasks
    of one name in several languages or sources are named apart as in the results table, and
    with several probes each gets its own line (``task [probe]``). Runs of one name whose
    weights differ at an epoch (two folders, or an ``@best`` row beside its ``@all`` twin)
    are drawn as runs of their own, each name followed by a short hash of its fingerprint,
    with a warning (``train --name`` gives runs names of their own)."""
    df = resolve(frame)
    df = df[~df["task"].map(is_control)]  # control tasks have their own tables
    parsed = df["encoder_label"].str.extract(_EPOCH)
    df = df.assign(run=parsed["run"], epoch=pd.to_numeric(parsed["epoch"]))
    df = df.dropna(subset=["run"])
    if df.empty:
        return pd.DataFrame(columns=["run", "epoch", "task", "score"])
    df["task"] = task_names(df)
    if df["probe"].nunique() > 1:
        df["task"] = df["task"] + " [" + df["probe"] + "]"
    df["folder"] = df["encoder_fingerprint"].map(run_folder)
    weights = df["encoder_fingerprint"].str.replace(r"#epoch-\d+$", "", regex=True)
    # a run is its folder: rows of one name from two folders are two runs; a row without a
    # folder (an older store) is told apart by its weights at one epoch
    where = df["folder"].where(df["folder"] != "", weights)
    clashes = where.groupby([df["run"], df["epoch"], df["task"], df["seed"]]).nunique()
    clashing = set(clashes[clashes > 1].index.get_level_values("run"))
    folders = df.groupby("run")["folder"].nunique()
    clashing |= set(folders[folders > 1].index)
    if clashing:
        named = df["run"].isin(clashing)
        key = df["folder"].where(df["folder"] != "", weights)
        df.loc[named, "run"] = row_names(df.loc[named, "run"], key[named])
        warnings.warn(
            f"runs named {', '.join(sorted(clashing))} have results of different runs (run "
            "folders of one name, or weights that differ at one epoch): drawn as runs of their "
            "own; `sentprobe train --name` gives runs names of their own",
            stacklevel=2,
        )
    keys = ["run", "epoch", "task", "folder"]
    out = df.groupby(keys, as_index=False, sort=False)[metric].mean()
    return out.rename(columns={metric: "score"}).assign(score=lambda d: 100 * d["score"])


def _manifests_by_run(
    scores: pd.DataFrame, manifests: Mapping[str, Mapping[str, Any]]
) -> dict[str, Mapping[str, Any]]:
    """Each drawn run's manifest: the one of its folder (``manifests`` keyed by resolved
    folder), else the one of its name (an older store's rows name no folder; a name held by
    two folders names neither). A drawn run without one is warned about: its curve is drawn
    without the validation axis."""
    names: dict[str, list[str]] = {}
    for folder, m in manifests.items():
        names.setdefault(str(m.get("name") or Path(folder).name), []).append(folder)
    out: dict[str, Mapping[str, Any]] = {}
    for run, folder in scores.groupby("run", sort=False)["folder"].first().items():
        if folder and folder in manifests:
            out[str(run)] = manifests[folder]
        elif not folder and len(names.get(str(run), [])) == 1:
            out[str(run)] = manifests[names[str(run)][0]]
        elif str(run) in manifests:  # a mapping keyed by run name (the Python API)
            out[str(run)] = manifests[str(run)]
    missing = [str(r) for r in scores["run"].unique() if str(r) not in out]
    if missing and manifests:
        warnings.warn(
            f"no manifest among the given runs for {', '.join(missing)}: drawn without "
            "the validation axis (give their folders with --runs)",
            stacklevel=3,
        )
    return out


def _validation(manifest: Mapping[str, Any]) -> tuple[str, dict[int, float]]:
    """What the second axis shows: BLEU per epoch where the run decoded (autoencoder,
    translation, Seq2Tree; Conneau et al.'s Fig. 1 shows BLEU for NMT), else the run's
    validation metric (``valid[name]`` of ``sentprobe train`` runs, ``valid_<monitor>`` of
    cross-lingual students)."""
    from sentprobe.training.checkpoint import epoch_metrics

    bleu = {int(e["epoch"]): float(e["valid"]["bleu"])
            for e in manifest.get("epochs", []) if "bleu" in e.get("valid", {})}  # fmt: skip
    if bleu:
        return "bleu", bleu
    try:
        name, _, values = epoch_metrics(dict(manifest))
    except SentprobeError:
        return "loss", {}
    return name, values


def _sweeps(manifests: Mapping[str, Mapping[str, Any]]) -> dict[str, list[str]]:
    """Runs grouped by everything but ``dim``; groups of two sizes or more."""
    groups: dict[str, list[str]] = {}
    for run, m in manifests.items():
        settings = m.get("settings", {})
        sizes = {k: v for k, v in settings.get("sizes", {}).items() if k != "dim"}
        sizes["arch_options"] = {  # the CNN's channels follow its size
            k: v for k, v in sizes.get("arch_options", {}).items() if k != "channels"
        }
        config = {k: v for k, v in settings.get("config", {}).items() if k != "dim"}
        config["overrides"] = {k: v for k, v in config.get("overrides", {}).items() if k != "dim"}
        key = repr((m.get("arch"), m.get("objective"), settings.get("data"), sizes, config))
        groups.setdefault(key, []).append(run)
    out = {}
    for runs in groups.values():
        dims = {manifests[r]["encoder"]["dim"] for r in runs}
        if len(dims) > 1:
            first = manifests[runs[0]]
            out[f"{first['arch']} / {first['objective']}"] = runs
    return out


def _panel(ax: Any, x: list, lines: dict[str, list[float]], xlabel: str) -> None:
    for k, (task, ys) in enumerate(sorted(lines.items())):
        ax.plot(x, ys, marker="o", ms=3, color=LINE_COLOURS[k % len(LINE_COLOURS)],
                linestyle="-" if k < len(LINE_COLOURS) else ":", label=task)  # fmt: skip
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(xlabel)
    ax.set_ylabel("probing accuracy (%)")
    ax.grid(alpha=0.3)


def _twin(ax: Any, x: list, values: list[float], metric: str) -> None:
    if not values:
        return
    twin = ax.twinx()
    twin.plot(x, values, color="#7f7fbf", linestyle="--", marker="s", ms=3)
    twin.set_ylabel(METRIC_LABEL.get(metric, f"validation {metric}"), color="#5f5f9f")
    if metric == "ppl" and max(values) / max(min(values), 1e-9) > 10:
        twin.set_yscale("log")


def learning_curves(
    frame: pd.DataFrame,
    manifests: Mapping[str, Mapping[str, Any]],
    path: str | Path,
    metric: str = "test_score",
) -> Path:
    """Write the curves (PNG/PDF/SVG by extension); see the module docstring."""
    scores = epoch_scores(frame, metric)
    if scores.empty:
        raise SentprobeError(
            "no trained-run results to draw (probe runs first: sentprobe run -e 'runs/NAME@all')"
        )
    manifests = _manifests_by_run(scores, manifests)
    runs = sorted(scores["run"].unique())
    sweeps = _sweeps({r: manifests[r] for r in runs if r in manifests})
    # a run of a sweep probed at one epoch only is a point of the sweep's panel, not a panel
    swept = {r for group in sweeps.values() for r in group}
    epochs_of = scores.groupby("run")["epoch"].nunique()
    runs = [r for r in runs if not (r in swept and epochs_of[r] == 1)]
    n = len(runs) + len(sweeps)
    cols = min(3, n)
    rows = math.ceil(n / cols)
    fig = new_figure(5.2 * cols, 3.6 * rows + 0.6)
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    for ax, run in zip(axes, runs):
        part = scores[scores["run"] == run]
        epochs = sorted(part["epoch"].unique())
        wide = part.pivot(index="epoch", columns="task", values="score").reindex(epochs)
        _panel(ax, epochs, {t: wide[t].tolist() for t in wide.columns}, "epoch")
        ax.set_title(run, fontsize=9)
        if run in manifests:
            name, valid = _validation(manifests[run])
            shown = [e for e in epochs if e in valid]
            _twin(ax, shown, [valid[e] for e in shown], name)
    for ax, (title, group) in zip(axes[len(runs) :], sweeps.items()):
        dims: list[int] = []
        lines: dict[str, list[float]] = {}
        last_valid: list[float] = []
        for run in sorted(group, key=lambda r: manifests[r]["encoder"]["dim"]):
            part = scores[scores["run"] == run]
            last = part[part["epoch"] == part["epoch"].max()]
            dims.append(manifests[run]["encoder"]["dim"])
            for task, score in zip(last["task"], last["score"]):
                lines.setdefault(task, []).append(score)
            name, by_epoch = _validation(manifests[run])
            last_valid.append(by_epoch.get(int(part["epoch"].max()), math.nan))
        _panel(ax, dims, {t: v for t, v in lines.items() if len(v) == len(dims)}, "encoder size")
        ax.set_title(f"{title}: size sweep", fontsize=9)
        _twin(ax, dims, last_valid, name)
    for ax in axes[n:]:
        ax.set_visible(False)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 10, 4 * cols),
               fontsize=8)  # fmt: skip
    return save_figure(fig, path)


def curves_from_runs(
    frame: pd.DataFrame, runs: str | Path, path: str | Path, metric: str = "test_score"
) -> Path:
    """:func:`learning_curves` with the manifests of the run directories ``runs`` matches
    (a glob such as ``runs/*``), keyed by resolved folder: a row is drawn beside the
    validation metric of its own folder, never of another folder's run of the same name."""
    import glob

    from sentprobe.training.checkpoint import MANIFEST, read_manifest

    manifests = {}
    for d in sorted(glob.glob(str(Path(runs).expanduser()))):
        if (Path(d) / MANIFEST).is_file():
            manifests[str(Path(d).resolve())] = read_manifest(d)
    return learning_curves(frame, manifests, path, metric)
