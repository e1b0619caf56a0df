"""``sentprobe report`` and ``sentprobe crosslang``: tables of what a results store holds.

Both only read, so the store is opened read-only (no write lock: a run may be writing, the
file may be on read-only media).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from sentprobe.cli.console import error, note, show_warnings, warning, write_output
from sentprobe.cli.options import (
    DEFAULT_RESULTS,
    By,
    Format,
    Metric,
    Mode,
    ProbeFilter,
    ReportFormat,
    Results,
    TableOutput,
)
from sentprobe.errors import SentprobeError


def _load_results(results: Path, probe: str | None, encoders: list[str] | None = None):
    """The newest stored result of each identity (sentprobe.evaluation.identity), rows named
    apart where one label stands for several fingerprints; only ``probe``'s and those of
    ``encoders`` where given: any name the reports print for a row (``BoV-GloVe [mlp]``,
    ``nmt@epoch-2 (1a2b3c4d)``, the stored label, the tag); a name that names no row is an
    error, never silently dropped."""
    from sentprobe.evaluation.identity import resolve, row_display_names, select_rows
    from sentprobe.evaluation.store import ResultsStore

    if not results.is_file():
        raise SentprobeError(f"{results}: no results store here (run `sentprobe run` first)")
    with ResultsStore(results, readonly=True) as store:
        frame = store.to_frame()
    _flag_foreign(results, frame)
    frame = resolve(frame[frame["probe"] == probe] if probe else frame)
    whole = frame
    if encoders:
        frame, unmatched = select_rows(frame, encoders)
        if unmatched:
            known = ", ".join(dict.fromkeys(row_display_names(whole))) or "(none)"
            raise SentprobeError(
                f"{results}: -e {', '.join(map(repr, unmatched))} names no stored row "
                f"(rows: {known})"
            )
    return frame


def _flag_foreign(results: Path, frame) -> None:
    """One warning when results were made by another sentprobe version than this one."""
    from sentprobe import __version__
    from sentprobe.evaluation.provenance import foreign_reason

    reasons = [r for r in map(foreign_reason, frame["extra"]) if r is not None]
    if reasons:
        made = sorted(set(reasons))
        warning(
            f"{results}: {len(reasons)} of {len(frame)} results were made by another sentprobe "
            f"version or code, or other library versions ({'; '.join(made)}; this is "
            f"sentprobe {__version__}): `report --provenance` lists them, `sentprobe run` with "
            "the same settings computes them again"
        )


def stored_predictions(results: Path, frame) -> dict:
    """The per-item test predictions stored for ``frame``'s records (key -> Predictions)."""
    from sentprobe.evaluation.store import ResultsStore

    with ResultsStore(results, readonly=True) as store:
        return store.predictions_for(frame["key"])


def intervals(results: Path, frame):
    """The CI function of the results table: bootstrap intervals from the predictions
    stored for ``frame``'s records (records without any get no interval)."""
    from sentprobe.analysis.stats import interval_function

    return interval_function(stored_predictions(results, frame))


def compared(
    results: Path, frame, a: str, b: str, fmt: str, alpha: float = 0.05, seed: int = 0
) -> str:
    """``sentprobe compare``: paired tests of rows ``a`` and ``b`` on the real
    tasks (control tasks left out)."""
    from sentprobe.analysis.paired import compare_rows, comparison_text
    from sentprobe.reporting.controls import split_controls

    tasks, _ = split_controls(frame)
    found = stored_predictions(results, tasks)
    return comparison_text(compare_rows(tasks, found, a, b, alpha, seed), fmt)


def _agreement(results: Path, frame, fmt: str, by_task: bool) -> str:
    from sentprobe.analysis.prediction_agreement import agreement_text, prediction_agreement
    from sentprobe.reporting.controls import split_controls

    tasks, _ = split_controls(frame)
    agreement = prediction_agreement(tasks, stored_predictions(results, tasks))
    if len(agreement.rows) < 2:
        raise SentprobeError("prediction agreement needs two rows with stored predictions")
    return agreement_text(agreement, fmt, by_task=by_task)


def _by_subtype(results: Path, frame, fmt: str) -> str:
    from sentprobe.analysis.subtypes import subtype_report, subtype_scores
    from sentprobe.evaluation.store import ResultsStore

    if fmt == "latex":
        raise SentprobeError("--by subtype prints markdown, csv or json")
    with ResultsStore(results, readonly=True) as store:
        found = store.predictions_for(frame["key"])
    return subtype_report(subtype_scores(frame, found), fmt)


def _one_mode(given: dict[str, bool]) -> None:
    """``report`` does one thing: the table, or one of its other modes. Two at once is a
    usage error (one line, exit 2), not one of them silently."""
    chosen = [flag for flag, on in given.items() if on]
    if len(chosen) > 1:
        error(f"report: {' and '.join(chosen)} are different outputs; give one of them per call")
        raise typer.Exit(2)


def _within_mode(options: dict[str, tuple[bool, str, bool]]) -> None:
    """An option that only one mode reads, given without that mode, would be ignored without
    a word: a usage error instead. ``options``: option -> (given, its mode, mode chosen)."""
    for option, (given, mode, chosen) in options.items():
        if given and not chosen:
            error(f"report: {option} belongs to {mode}; give it with {mode}")
            raise typer.Exit(2)


def report(
    results: Results = DEFAULT_RESULTS,
    fmt: Annotated[
        ReportFormat,
        typer.Option(
            "--format",
            "-f",
            help="Table format, or mteb: MTEB's results layout in the folder -o names "
            "(results/<model>/<revision>/<task>.json), which mteb.ResultCache(DIR) loads, or "
            "model-index: the Hub model card's results block for one encoder (-e NAME).",
        ),
    ] = ReportFormat.markdown,
    metric: Annotated[
        Metric, typer.Option(help="test_score, or dev_score (the selection score).")
    ] = Metric.test_score,
    encoder: Annotated[
        list[str] | None,
        typer.Option(  # noqa: UP007
            "--encoder", "-e", help="Only these rows (repeatable)."
        ),
    ] = None,
    layers: Annotated[
        bool,
        typer.Option(
            "--layers",
            help="For --layer all runs: per task the peak layer and the center of gravity "
            "(expected layer) instead of the table (docs/controls.md).",
        ),
    ] = False,
    reference: Annotated[
        Path | None,  # noqa: UP007
        typer.Option(
            help="Scores not measured by sentprobe, shown apart as reference rows: a CSV "
            "(columns row,task,score[,note]; score in %), or a paper's published table: "
            "conneau2018 (Table 2), xprobe2019 (Table 4), kim2019 (Table 3).",
        ),
    ] = None,
    probe: ProbeFilter = None,
    by: Annotated[
        By | None,  # noqa: UP007
        typer.Option(
            help="subtype: accuracy per item sub-type (kim2019: negation by pattern, "
            "prepositions by preposition, wh-words by wh-word), from the stored predictions, "
            "instead of the table (docs/function-words.md).",
        ),
    ] = None,
    ci: Annotated[
        bool,
        typer.Option(
            help="95% bootstrap confidence intervals of test scores (docs/statistics.md)."
        ),
    ] = True,
    compare: Annotated[
        str | None,  # noqa: UP007
        typer.Option(hidden=True, help="Removed: `sentprobe compare A B`."),
    ] = None,
    agreement: Annotated[
        bool,
        typer.Option(
            "--agreement",
            help="Instead of the table: the share of test items each pair of rows predicts "
            "alike (item-weighted over tasks; Kim et al. 2019 Fig. 2).",
        ),
    ] = False,
    by_task: Annotated[
        bool, typer.Option("--by-task", help="With --agreement: also one matrix per task.")
    ] = False,
    html: Annotated[
        Path | None,  # noqa: UP007
        typer.Option(
            help="Write the HTML report here instead of printing the table: one "
            "self-contained page with CIs, controls, layer curves, heatmaps, task metadata "
            "and provenance (docs/report.md).",
        ),
    ] = None,
    layer_curves: Annotated[
        Path | None,  # noqa: UP007
        typer.Option(help="Draw the layer curves of --layer all rows here (.png/.pdf/.svg)."),
    ] = None,
    layer_heatmap: Annotated[
        Path | None,  # noqa: UP007
        typer.Option(
            help="Draw layer x pooling heatmaps (with CIs) of runs with several --pooling "
            "here (.png/.pdf/.svg)."
        ),
    ] = None,
    downstream: Annotated[
        Path | None,  # noqa: UP007
        typer.Option(
            help="With --html: downstream scores (CSV encoder,task,score or MTEB results) to "
            "correlate with probing, as `sentprobe correlate`."
        ),
    ] = None,
    rename: Annotated[
        list[str] | None,  # noqa: UP007
        typer.Option(help="With --downstream: DOWNSTREAM=ENCODER name pairs (repeatable)."),
    ] = None,
    reference_row: Annotated[
        str | None,  # noqa: UP007
        typer.Option(help="With --html: the row the heatmap is relative to [default: Majority]."),
    ] = None,
    reference_language: Annotated[
        str | None,  # noqa: UP007
        typer.Option(help="With --html on several languages: the heatmap's reference language."),
    ] = None,
    curves: Annotated[
        Path | None,  # noqa: UP007
        typer.Option(
            help="Draw probing accuracy against epoch (and against size for a --dim sweep) of "
            "trained runs here (.png/.pdf/.svg), with their validation metric (docs/training.md)."
        ),
    ] = None,
    runs: Annotated[
        str, typer.Option(help="With --curves: the training run directories (a glob).")
    ] = "runs/*",
    erasure: Annotated[
        bool,
        typer.Option(
            "--erasure",
            help="Instead of the table: what erasing each task's property (run --erase) does "
            "to every task, against the random-subspace controls, with CIs and paired tests, "
            "and each erasure's held-out check on items the eraser never saw "
            "(docs/erasure.md).",
        ),
    ] = False,
    intervention: Annotated[
        bool,
        typer.Option(
            "--intervention",
            help="Instead of the table: decodable vs used (run --intervene): per layer, what "
            "editing a task's property out inside the forward pass does to the final output "
            "(a language model's: its own loss and top-1 predictions too), against random "
            "edits of the same rank, with CIs and paired tests, and the "
            "property's recovery in later layers (docs/erasure.md).",
        ),
    ] = False,
    provenance: Annotated[
        bool,
        typer.Option(
            "--provenance",
            help="Instead of the table: the settings each stored result ran with (what "
            "--save-config writes), grouped.",
        ),
    ] = False,
    output: TableOutput = None,
) -> None:
    """Print the paper-style table of everything stored in a results store, then control
    accuracy and selectivity, MDL codelengths and reference rows where there are any; or
    write the HTML report (--html), the layer curves (--layer-curves) and the layer x pooling
    heatmaps (--layer-heatmap)."""
    from sentprobe.reporting.compose import report_text
    from sentprobe.reporting.reference import reference_rows

    if compare is not None:
        pair = " ".join(n.strip() for n in compare.split(","))
        error(f"report --compare is a command of its own: sentprobe compare {pair}")
        raise typer.Exit(2)
    _one_mode(
        {
            "--by": by is not None,
            "--provenance": provenance,
            "--curves": curves is not None,
            "--agreement": agreement,
            ("--html" if html else "--layer-curves" if layer_curves else "--layer-heatmap"): (
                html is not None or layer_curves is not None or layer_heatmap is not None
            ),
            "--layers": layers,
            "--erasure": erasure,
            "--intervention": intervention,
        }
    )
    _within_mode(
        {
            "--by-task": (by_task, "--agreement", agreement),
            "--downstream": (downstream is not None, "--html", html is not None),
            "--rename": (bool(rename), "--downstream", downstream is not None),
            "--reference-row": (reference_row is not None, "--html", html is not None),
            "--reference-language": (reference_language is not None, "--html", html is not None),
            "--runs": (runs != "runs/*", "--curves", curves is not None),
        }
    )
    rows = reference_rows(reference) if reference is not None else None
    frame = _load_results(results, probe, encoder)
    if by is not None:
        write_output(_by_subtype(results, frame, fmt.value), output)
        return
    if provenance:
        from sentprobe.cli.config import run_config_text

        write_output(run_config_text(frame), output)
        return
    if curves is not None:
        from sentprobe.reporting.curves import curves_from_runs

        note(f"wrote {curves_from_runs(frame, runs, curves, metric.value)}")
        return
    if agreement:
        write_output(_agreement(results, frame, fmt.value, by_task), output)
        return
    if erasure:
        from sentprobe.analysis.erasure import erasure_effects, erasure_text

        effects = erasure_effects(frame, stored_predictions(results, frame))
        write_output(erasure_text(effects, fmt.value), output)
        return
    if intervention:
        from sentprobe.analysis.intervention import (
            intervention_effects,
            intervention_text,
            recovery,
        )

        found = stored_predictions(results, frame)
        effects = intervention_effects(frame, found)
        write_output(intervention_text(effects, recovery(frame, found), fmt.value), output)
        return
    if html is not None or layer_curves is not None or layer_heatmap is not None:
        from sentprobe.cli.report_html import write_report_files

        write_report_files(
            results,
            frame,
            html_path=html,
            layer_curves=layer_curves,
            layer_heatmap=layer_heatmap,
            metric=metric.value,
            reference=rows,
            reference_row=reference_row,
            reference_language=reference_language,
            downstream=downstream,
            rename=rename,
        )
        return
    if layers:
        from sentprobe.analysis.layers import layers_report

        write_output(layers_report(frame, fmt.value), output)
        return
    if fmt is ReportFormat.model_index:
        from sentprobe.reporting.model_index import model_index

        write_output(model_index(frame), output)
        return
    interval = intervals(results, frame) if ci and not frame.empty else None
    if fmt is ReportFormat.mteb:
        from sentprobe.reporting.mteb import write_mteb_results

        if output is None:
            raise SentprobeError("--format mteb writes a folder: name it with -o DIR")
        files = write_mteb_results(frame, output, interval)
        note(f"wrote {len(files)} MTEB result files under {output / 'results'}")
        return
    table = report_text(frame, fmt.value, metric.value, rows, interval=interval)
    write_output(table, output)
    if "warnings" in frame.columns:  # stored with each result: shown cached or not
        show_warnings(frame)


def crosslang(
    reference: Annotated[str, typer.Option(help="Reference language (e.g. en).")] = "en",
    results: Results = DEFAULT_RESULTS,
    fmt: Annotated[
        Format,
        typer.Option(
            "--format", "-f", help="markdown/latex (both tables), json (both), csv (relative)."
        ),
    ] = Format.markdown,
    metric: Annotated[Metric, typer.Option(help="test_score or dev_score.")] = Metric.test_score,
    mode: Annotated[
        Mode,
        typer.Option(
            help="gain: each language's gain over its own Majority baseline minus the "
            "reference language's (points; needs the Majority rows); diff: raw difference in "
            "points; ratio: score / reference (X-Probe Fig. 4). diff and ratio keep differences "
            "in class balance."
        ),
    ] = Mode.gain,
    encoder: Annotated[
        list[str] | None,
        typer.Option("--encoder", "-e", help="Only these encoders (repeatable)."),  # noqa: UP007
    ] = None,
    probe: ProbeFilter = None,
    include_baselines: Annotated[
        bool, typer.Option(help="Keep Majority/Length/NB/BoV rows (left out by default).")
    ] = False,
    heatmap: Annotated[
        Path | None,
        typer.Option(help="Also draw the relative scores as a heatmap (.png/.pdf/.svg)."),  # noqa: UP007
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the tables here.")
    ] = None,  # noqa: UP007
) -> None:
    """Compare languages: scores relative to a reference language per encoder x task (by
    default each language's gain over its own majority class, minus the reference's), per
    task the mean and standard deviation across languages and encoders (X-Probe), and each
    language's Majority baseline."""
    from sentprobe.reporting.crosslang import crosslang_report, relative_heatmap

    frame = _load_results(results, probe)
    kw: dict[str, Any] = {
        "encoders": encoder,
        "include_baselines": include_baselines,
        "metric": metric.value,
    }
    text = crosslang_report(frame, reference, fmt.value, mode=mode.value, **kw)
    if heatmap is not None:
        relative_heatmap(frame, reference, heatmap, mode=mode.value, **kw)
        note(f"wrote {heatmap}")
    write_output(text.rstrip("\n"), output)
