"""The report's figures: layer curves, heatmaps relative to a reference, layer × pooling and
erasure heatmaps, correlation and agreement matrices, drawn with matplotlib's object API (no
pyplot: no GUI backend, no global figure state, safe in a server or a test).

Each ``*_figure`` function takes data already computed (frames of scores, matrices) and
returns a :class:`~matplotlib.figure.Figure`; :func:`save_figure` writes one to a file
(format by extension, atomically) and :func:`figure_svg` gives the inline SVG the HTML report
embeds. All heatmaps share :func:`draw_heatmap`, so every matrix looks alike: tasks as rows,
a diverging map centred at parity, every cell annotated with its value. Long because the
figures share that heatmap, its colour scale and the matplotlib set-up; one module keeps one
look.
"""

from __future__ import annotations

import io
import math
import re
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sentprobe.errors import SentprobeError
from sentprobe.io import atomic_write_bytes

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.colors import Normalize
    from matplotlib.figure import Figure

#: Cells that have no value (missing, not computed).
MISSING_COLOUR = "#e4e4e4"
#: Cells whose value is not significant: drawn in this grey, value in GREY_TEXT.
GREY_CELL, GREY_TEXT = "#d9d9d9", "#6b6b6b"
#: One colour per line in the layer curves (colour-blind safe: Okabe-Ito).
LINE_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")


def _matplotlib() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise SentprobeError("plots need matplotlib: pip install 'sentprobe[plots]'") from None
    return matplotlib


def new_figure(width: float, height: float) -> Figure:
    """A figure with constrained layout (labels never overlap the panels)."""
    _matplotlib()
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


@contextmanager
def _as_written(fig: Figure) -> Iterator[None]:
    """Every text of ``fig`` drawn as written, never as math: a task or encoder name with
    ``$`` in it (``$\\sqrt$``) would otherwise go to matplotlib's math parser, which fails."""
    from matplotlib.text import Text

    for text in fig.findobj(Text):
        text.set_parse_math(False)
    with _matplotlib().rc_context({"text.parse_math": False}):  # tick labels made at drawing
        yield


def save_figure(fig: Figure, path: str | Path, dpi: int = 150) -> Path:
    """Write ``fig`` as PNG, PDF or SVG (by extension), replacing ``path`` only when done."""
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".") or "png"
    if fmt not in ("png", "pdf", "svg"):
        raise SentprobeError(f"{path}: unknown image format {fmt!r}; use .png, .pdf or .svg")
    buffer = io.BytesIO()
    with _as_written(fig):
        fig.savefig(buffer, format=fmt, dpi=dpi)
    try:
        return atomic_write_bytes(path, buffer.getvalue())
    except OSError as e:
        raise SentprobeError(f"{path}: cannot write ({e.strerror or e})") from None


def figure_svg(fig: Figure, salt: str = "") -> str:
    """``fig`` as an ``<svg>`` element to inline in HTML: text stays text (smaller, sharp,
    searchable), no XML prologue or metadata block; ``salt`` makes the element ids of one
    figure differ from another's in the same page (both the hashed ids of clip paths and
    glyphs, and the plain group ids)."""
    matplotlib = _matplotlib()
    buffer = io.StringIO()
    with (
        _as_written(fig),
        matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": f"sentprobe{salt}"}),
    ):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :]
    start, end = svg.find("<metadata>"), svg.find("</metadata>")
    if 0 <= start < end:
        svg = svg[:start] + svg[end + len("</metadata>") :]
    # matplotlib names groups figure_1, axes_1...: the same in every figure of a page
    return re.sub(r'id="([A-Za-z][\w.]*_\d+)"', rf'id="{salt or "fig"}-\1"', svg)


# ---------------------------------------------------------------------------- heatmaps


def draw_heatmap(
    ax: Axes,
    grid: np.ndarray,
    rows: Sequence[str],
    columns: Sequence[str],
    norm: Normalize,
    cmap: str = "RdBu",
    text: Sequence[Sequence[str]] | None = None,
    grey: np.ndarray | None = None,
    fontsize: float = 7,
) -> Any:
    """Draw ``grid`` (rows x columns, NaN = missing) on ``ax`` with each cell annotated.

    ``text``: the annotation per cell (default: the value with one decimal); ``grey``: a
    boolean mask of cells drawn grey instead of coloured (not significant). Returns the image
    for a colour bar.
    """
    grid = np.asarray(grid, dtype=float)
    shown = np.ma.masked_invalid(np.where(grey, np.nan, grid) if grey is not None else grid)
    image = ax.imshow(shown, cmap=cmap, norm=norm, aspect="auto", interpolation="nearest")
    ax.set_facecolor(MISSING_COLOUR)
    if grey is not None and grey.any():
        from matplotlib.colors import ListedColormap

        mask = np.ma.masked_where(~(grey & ~np.isnan(grid)), np.ones_like(grid))
        ax.imshow(mask, cmap=ListedColormap([GREY_CELL]), aspect="auto", interpolation="nearest")
    tilt = len(columns) > 4 or max((len(str(c)) for c in columns), default=0) > 8
    ax.set_xticks(
        range(len(columns)),
        list(columns),
        rotation=40 if tilt else 0,
        ha="right" if tilt else "center",
        rotation_mode="anchor",
        fontsize=8,
    )
    ax.set_yticks(range(len(rows)), list(rows), fontsize=8)
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.set_xticks(np.arange(-0.5, len(columns)), minor=True)
    ax.set_yticks(np.arange(-0.5, len(rows)), minor=True)
    ax.grid(which="minor", color="white", linewidth=1.2)
    ax.tick_params(which="minor", length=0)
    cmap_obj = image.get_cmap()
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            v = grid[i, j]
            label = text[i][j] if text is not None else ("–" if math.isnan(v) else f"{v:.1f}")
            if math.isnan(v) or (grey is not None and grey[i, j]):
                colour = GREY_TEXT
            else:
                r, g, b, _ = cmap_obj(norm(v))
                colour = "white" if 0.299 * r + 0.587 * g + 0.114 * b < 0.5 else "black"
            ax.text(j, i, label, ha="center", va="center", fontsize=fontsize, color=colour)
    return image


def add_colorbar(fig: Figure, image: Any, axes: Any, label: str) -> None:
    """A slim colour bar beside ``axes`` with small tick labels."""
    bar = fig.colorbar(image, ax=axes, shrink=0.8, aspect=30)
    bar.set_label(label, fontsize=8)
    bar.ax.tick_params(labelsize=7)
    bar.outline.set_visible(False)


def diverging_norm(values: np.ndarray, centre: float, fallback: float) -> Normalize:
    """A norm centred at ``centre`` spanning the largest deviation (``fallback`` if none)."""
    from matplotlib.colors import TwoSlopeNorm

    finite = np.asarray(values, dtype=float)
    finite = finite[np.isfinite(finite)]
    spread = float(np.max(np.abs(finite - centre))) if finite.size else 0.0
    spread = spread if spread > 0 else fallback
    return TwoSlopeNorm(vcenter=centre, vmin=centre - spread, vmax=centre + spread)


def language_panels_figure(
    rel: pd.DataFrame,
    tasks: Sequence[str],
    reference: str,
    metric: str = "test_score",
    mode: str = "diff",
) -> Figure:
    """X-Probe's Figure 4: one panel per encoder, tasks x languages, each cell the score
    relative to ``reference`` (points, or a ratio), one colour scale for all panels.
    ``rel``: columns encoder, task, language, relative (``crosslang.relative_scores``)."""
    languages = sorted(rel["language"].unique())
    panels = list(dict.fromkeys(rel["encoder"]))
    points = mode != "ratio"  # diff, or gain over the language's own majority (crosslang)
    centre = 0.0 if points else 1.0
    norm = diverging_norm(rel["relative"].to_numpy(), centre, 1.0 if points else 0.1)
    width = 1.2 + len(panels) * (0.9 + 0.75 * len(languages))
    fig = new_figure(max(4.0, width), 1.4 + 0.45 * len(tasks))
    axes = fig.subplots(1, len(panels), squeeze=False, sharey=True)[0]
    image = None
    for ax, encoder in zip(axes, panels, strict=True):
        sub = rel[rel["encoder"] == encoder].pivot_table(
            index="task", columns="language", values="relative", aggfunc="mean", dropna=False
        )
        grid = sub.reindex(index=list(tasks), columns=languages).to_numpy(dtype=float)
        text = [
            ["–" if math.isnan(v) else f"{v:+.1f}" if points else f"{v:.2f}" for v in r]
            for r in grid
        ]
        image = draw_heatmap(ax, grid, tasks, languages, norm, text=text)
        ax.set_title(encoder, fontsize=9)
    label = {"diff": f"points vs {reference}", "ratio": f"ratio to {reference}"}.get(
        mode, f"gain over majority vs {reference} (points)"
    )
    assert image is not None  # one panel per encoder, and there is at least one
    add_colorbar(fig, image, list(axes), label)
    fig.suptitle(f"{metric} relative to {reference}", fontsize=10)
    return fig


def relative_rows_figure(wide: pd.DataFrame, reference: str, title: str = "") -> Figure:
    """Rows (encoders) x tasks, each cell the row's score minus ``reference``'s (points):
    X-Probe's Figure 4 with a reference row instead of a reference language. ``wide``:
    scores in points, rows = encoders, columns = tasks, ``reference`` among the rows."""
    if reference not in wide.index:
        raise SentprobeError(f"no row {reference!r} to compare with")
    diff = wide.drop(index=reference) - wide.loc[reference]
    if diff.empty:
        raise SentprobeError(f"only {reference!r} in the results: nothing to compare with")
    grid = diff.to_numpy(dtype=float)
    text = [["–" if math.isnan(v) else f"{v:+.1f}" for v in r] for r in grid]
    rows, tasks = [str(r) for r in diff.index], [str(c) for c in diff.columns]
    fig = new_figure(max(4.5, 2.2 + 0.62 * len(tasks)), max(2.0, 1.2 + 0.36 * len(rows)))
    ax = fig.subplots()
    image = draw_heatmap(ax, grid, rows, tasks, diverging_norm(grid, 0.0, 1.0), text=text)
    add_colorbar(fig, image, ax, f"points vs {reference}")
    ax.set_title(title or f"Test accuracy relative to {reference} (points)", fontsize=10)
    return fig


def layer_pooling_figure(cells: pd.DataFrame, max_width: float = 20.0) -> Figure:
    """One heatmap per (model, task): poolings x layers, each cell its score (points) and,
    where ``cells`` has ``low``/``high``, ± half the CI's width below it. ``cells``: columns
    base (the model), task, pooling, layer, score[, low, high]; poolings keep their order.
    As many panels side by side as fit in ``max_width`` inches."""
    from matplotlib.colors import Normalize

    panels = list(dict.fromkeys(zip(cells["base"], cells["task"], strict=True)))
    poolings = list(dict.fromkeys(cells["pooling"]))
    layers = sorted(set(cells["layer"]))
    width = 1.0 + 0.55 * len(layers) + 0.08 * max(len(str(p)) for p in poolings)
    ncols = max(1, min(int(max_width // width), len(panels)))
    nrows = math.ceil(len(panels) / ncols)
    fig = new_figure(0.6 + width * ncols, 0.4 + (0.9 + 0.42 * len(poolings)) * nrows)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for k, ax in enumerate(axes.flat):
        if k >= len(panels):
            ax.set_visible(False)
            continue
        base, task = panels[k]
        panel = cells[(cells["base"] == base) & (cells["task"] == task)]
        grid = panel.pivot_table(index="pooling", columns="layer", values="score", dropna=False)
        grid = grid.reindex(index=poolings, columns=layers).to_numpy(dtype=float)
        half = np.full_like(grid, np.nan)
        if {"low", "high"} <= set(panel.columns):
            width_ci = (panel["high"] - panel["low"]) / 2
            spread = panel.assign(half=width_ci).pivot_table(
                index="pooling", columns="layer", values="half", dropna=False
            )
            half = spread.reindex(index=poolings, columns=layers).to_numpy(dtype=float)
        text = [
            [
                "–" if math.isnan(v) else f"{v:.1f}" + ("" if math.isnan(h) else f"\n±{h:.1f}")
                for v, h in zip(row, half_row, strict=True)
            ]
            for row, half_row in zip(grid, half, strict=True)
        ]
        finite = grid[np.isfinite(grid)]
        low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        norm = Normalize(low - 0.5 * (high - low) - 1e-9, high)  # the lowest cell stays light
        draw_heatmap(ax, grid, poolings, [str(x) for x in layers], norm, cmap="Blues", text=text)
        ax.set_title(f"{base} · {task}", fontsize=9)
        ax.set_xlabel("layer", fontsize=8)
    fig.suptitle("Test accuracy by layer and pooling (%)", fontsize=10)
    return fig


def correlation_figure(
    rho: pd.DataFrame, significant: pd.DataFrame, title: str, alpha: float = 0.05
) -> Figure:
    """Conneau et al.'s Figure 2: Spearman ρ, probing tasks x downstream tasks, coloured from
    -1 to 1; cells not significant after Holm correction are grey, missing ones blank."""
    from matplotlib.colors import Normalize

    grid = rho.to_numpy(dtype=float)
    grey = ~significant.reindex_like(rho).fillna(False).to_numpy(dtype=bool)
    text = [["–" if math.isnan(v) else f"{v:+.2f}" for v in r] for r in grid]
    rows, columns = [str(r) for r in rho.index], [str(c) for c in rho.columns]
    fig = new_figure(max(4.5, 2.4 + 0.62 * len(columns)), max(2.2, 1.4 + 0.36 * len(rows)))
    ax = fig.subplots()
    image = draw_heatmap(ax, grid, rows, columns, Normalize(-1.0, 1.0), text=text, grey=grey)
    add_colorbar(fig, image, ax, "Spearman ρ")
    ax.set_xlabel(f"grey: not significant (Holm-adjusted p ≥ {alpha:g})", fontsize=8)
    # a narrow matrix must not clip its title: wrapped before layout, about 11 characters of
    # 10-point text per inch, "n = 5" kept on one line
    width = max(24, int(fig.get_size_inches()[0] * 11))
    wrapped = textwrap.fill(title.replace(" = ", "\0"), width).replace("\0", " = ")
    ax.set_title(wrapped, fontsize=10)
    return fig


def agreement_figure(matrix: pd.DataFrame, title: str = "") -> Figure:
    """Rows x rows, each cell the share of test items two rows predict alike, in percent
    (``matrix`` holds fractions 0-1)."""
    from matplotlib.colors import Normalize

    grid = 100.0 * matrix.to_numpy(dtype=float)
    labels = [str(r) for r in matrix.index]
    finite = grid[np.isfinite(grid)]
    low = float(np.floor(finite.min() / 10) * 10) if finite.size else 0.0
    text = [["–" if math.isnan(v) else f"{v:.0f}" for v in r] for r in grid]
    size = max(3.5, 1.8 + 0.5 * len(labels))
    fig = new_figure(size + 1.0, size)
    ax = fig.subplots()
    columns = [str(c) for c in matrix.columns]
    norm = Normalize(min(low, 90.0), 100.0)
    image = draw_heatmap(ax, grid, labels, columns, norm, cmap="Blues", text=text)
    add_colorbar(fig, image, ax, "% of test items predicted alike")
    ax.set_title(title or "Prediction agreement (%)", fontsize=10)
    return fig


def erasure_figure(table: pd.DataFrame, alpha: float = 0.05) -> Figure:
    """Erased task -> effect on task: one row per (encoder, erased task, fit) for LEACE and one
    for its random controls, one column per task, each cell the change in accuracy (points)
    with its 95% CI beneath (the controls: their mean, and the range over control seeds where
    there are several); cells not significant (Holm-adjusted McNemar; a control: no seed)
    grey. The last column, "held-out check", is the erased task's held-out accuracy minus its
    majority share, with its CI beneath: not grey where the erasure failed out of sample.
    ``table``: analysis.erasure's effects."""
    from sentprobe.reporting.render import control_summary

    fits = [("" if f == "train" else f", fit {f}") for f in table["fit"]]
    table = table.assign(
        line=[
            f"{e}: −{t} ({'LEACE' if m == 'leace' else 'random'}{f})"
            for e, t, m, f in zip(
                table["encoder"], table["erased"], table["method"], fits, strict=True
            )
        ]
    )
    check = "held-out check"
    lines, tasks = list(dict.fromkeys(table["line"])), list(dict.fromkeys(table["task"]))
    columns = [*tasks, check]
    grid = np.full((len(lines), len(columns)), np.nan)
    grey = np.zeros(grid.shape, dtype=bool)
    text = [["–"] * len(columns) for _ in lines]
    for i, line in enumerate(lines):
        rows = table[table["line"] == line]
        if (rows["method"] == "random").all():
            summary = control_summary(rows)
            for task, s in summary.iterrows():
                j = tasks.index(str(task))
                grid[i, j], grey[i, j] = s["diff"], not s["significant"]
                if s["seeds"] > 1:
                    spread = f"{s['diff_min']:+.1f} … {s['diff_max']:+.1f}"
                    text[i][j] = f"{s['diff']:+.1f}\n({spread}; {s['seeds']} seeds)"
                else:
                    t = rows[rows["task"] == task].iloc[0]
                    text[i][j] = f"{t['diff']:+.1f}\n[{t['diff_low']:+.1f}, {t['diff_high']:+.1f}]"
            continue
        for t in rows.itertuples(index=False):
            j = tasks.index(t.task)
            grid[i, j], grey[i, j] = t.diff, not t.significant
            text[i][j] = f"{t.diff:+.1f}\n[{t.diff_low:+.1f}, {t.diff_high:+.1f}]"
            if t.erased_task and not np.isnan(t.heldout):
                k = len(tasks)
                grid[i, k] = t.heldout - t.heldout_majority
                grey[i, k] = not t.failed_held_out
                text[i][k] = (
                    f"{t.heldout:.1f} vs {t.heldout_majority:.1f}"
                    f"\n[{t.heldout_low:.1f}, {t.heldout_high:.1f}]"
                    + ("\nFAILED" if t.failed_held_out else "")
                )
    fig = new_figure(max(4.5, 2.6 + 0.9 * len(columns)), max(2.0, 1.3 + 0.5 * len(lines)))
    ax = fig.subplots()
    image = draw_heatmap(
        ax, grid, lines, columns, diverging_norm(grid, 0.0, 1.0), text=text, grey=grey, fontsize=6
    )
    add_colorbar(fig, image, ax, "change in accuracy (points)")
    ax.set_xlabel(
        f"grey: not significant (McNemar, Holm-adjusted p ≥ {alpha:g}); held-out check: "
        "accuracy vs majority on items the eraser never saw, grey unless above it beyond its CI",
        fontsize=7,
    )
    ax.set_title("Erased task → effect on task (points, 95% CI)", fontsize=10)
    return fig


# ---------------------------------------------------------------------------- layer curves


def layer_curves_figure(
    curves: pd.DataFrame,
    peaks: Mapping[tuple[str, str], int] | None = None,
    centres: Mapping[tuple[str, str], float] | None = None,
    chance: Mapping[str, float] | None = None,
    title: str = "Test accuracy by layer",
    columns: int = 5,
) -> Figure:
    """One small panel per task: accuracy (%) against layer, a line per model, with the
    95% CI as a band where ``curves`` has ``low``/``high``.

    ``curves``: columns model, task, layer, score (and optionally low, high), in points.
    ``peaks``/``centres``: per (model, task), the peak layer (marked with a dot and its
    number) and the centre of gravity (a dashed tick); ``chance``: per task, a dotted line
    (the Majority baseline).
    """
    tasks = list(dict.fromkeys(curves["task"]))
    models = list(dict.fromkeys(curves["model"]))
    ncols = max(1, min(columns, len(tasks)))
    nrows = math.ceil(len(tasks) / ncols)
    fig = new_figure(1.2 + 2.3 * ncols, 0.8 + 2.0 * nrows)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=True)
    for k, ax in enumerate(axes.flat):
        if k >= len(tasks):
            ax.set_visible(False)
            continue
        task = tasks[k]
        for m, model in enumerate(models):
            colour = LINE_COLOURS[m % len(LINE_COLOURS)]
            data = curves[(curves["task"] == task) & (curves["model"] == model)]
            data = data.sort_values("layer")
            if data.empty:
                continue
            x, y = data["layer"].to_numpy(), data["score"].to_numpy(dtype=float)
            if {"low", "high"} <= set(data.columns) and data["low"].notna().any():
                ax.fill_between(
                    x,
                    data["low"].to_numpy(dtype=float),
                    data["high"].to_numpy(dtype=float),
                    color=colour,
                    alpha=0.18,
                    linewidth=0,
                )
            ax.plot(x, y, color=colour, linewidth=1.6, marker="o", markersize=2.5, label=model)
            peak = (peaks or {}).get((model, task))
            if peak is not None and peak in set(x.tolist()):
                py = float(y[list(x).index(peak)])
                ax.plot(
                    [peak],
                    [py],
                    marker="o",
                    markersize=6,
                    color=colour,
                    markeredgecolor="white",
                    zorder=5,
                )
                ax.annotate(
                    f"L{peak}",
                    (peak, py),
                    textcoords="offset points",
                    xytext=(0, 6),
                    ha="center",
                    fontsize=7,
                    color=colour,
                )
            centre = (centres or {}).get((model, task))
            if centre is not None and math.isfinite(centre):
                ax.axvline(centre, color=colour, linestyle="--", linewidth=0.9, alpha=0.7)
        if chance and task in chance:
            ax.axhline(chance[task], color="#888888", linestyle=":", linewidth=1)
        ax.set_title(task, fontsize=9)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.25, linewidth=0.5)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("layer", fontsize=8)
    for ax in axes[:, 0]:
        ax.set_ylabel("accuracy (%)", fontsize=8)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    if len(models) > 1:
        fig.legend(
            handles,
            labels,
            loc="outside lower center",
            ncols=min(4, len(models)),
            fontsize=8,
            frameon=False,
        )
    notes = []
    if peaks:
        notes.append("dot: peak layer")
    if centres:
        notes.append("dashed: centre of gravity")
    if "low" in curves.columns and curves["low"].notna().any():
        notes.append("band: 95% CI")
    if chance:
        notes.append("dotted: Majority")
    fig.suptitle(title + (f"  ({'; '.join(notes)})" if notes else ""), fontsize=10)
    return fig
