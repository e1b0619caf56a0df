"""``report --format mteb -o DIR``: stored results in MTEB's results layout, which MTEB's own
``ResultCache(DIR).load_results()`` (and ``TaskResult.from_disk``) read back.

The layout is MTEB's: ``DIR/results/<model>/<revision>/<task>.json`` beside a
``model_meta.json``, one file per result identity (sentprobe.evaluation.identity) less its
seed: a model folder per encoder fingerprint, a file per task (source, language, name), the
mean over seeds. A row probed as ``-e mteb:NAME`` keeps MTEB's model name and revision; when
its fingerprint says more (other weights), a short hash of the whole fingerprint is appended
to the revision, so two sets of weights never share a folder. Any other row is named after
its label with a short hash of its fingerprint as the revision. Files are named as
:func:`~sentprobe.datasets.mteb_tasks.to_mteb_tasks` names the task (``sample-en/Tense`` ->
``sentprobe.sample-en.Tense``), with the task's own language code, so MTEB's loader finds
them for those tasks. Each file's ``test`` score has MTEB's ``main_score`` (accuracy as a
fraction) and sentprobe's extra fields: the 95% bootstrap interval, the dev score, the probe
and its selection, the number of seeds, and, where a control task was run, the control
accuracy, its ceiling and the selectivity (controls are no tasks of their own).

Every folder and file name is built from stored text, so each is limited to a safe alphabet
and checked with :func:`sentprobe.io.inside`: a crafted store cannot write outside ``DIR``.
All paths are checked before the first file is written. The JSON is written directly, so
this works without the ``mteb`` package.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from sentprobe.datasets.controls import is_control
from sentprobe.datasets.identity import full_task_name, mteb_name
from sentprobe.datasets.mteb_tasks import MTEB_LANGUAGES
from sentprobe.errors import SentprobeError
from sentprobe.evaluation.identity import TASK, resolve, short_hash
from sentprobe.io import atomic_write_text, inside
from sentprobe.reporting.controls import selectivity_frame

#: ``-e mteb:NAME`` fingerprints: ``mteb|NAME@REVISION[|weights=...]``.
_MTEB_FINGERPRINT = re.compile(r"^mteb\|(?P<name>[^|]+)@(?P<revision>[^|@]+)(?P<rest>\|.*)?$")
#: What a folder or file name made from stored text may hold (no separators, no ``..``).
_SAFE = re.compile(r"^[\w+-][\w.+-]{0,199}$")


def _safe(part: str, what: str) -> str:
    if not _SAFE.match(part) or ".." in part:
        raise SentprobeError(
            f"{what} {part!r} cannot be a folder or file name (letters, digits, '.', '_', "
            "'+', '-' only): refused, nothing written"
        )
    return part


def model_folder(encoder: str, fingerprint: str) -> tuple[str, str]:
    """(MTEB model name, revision) of a stored row: distinct for distinct fingerprints; a
    row that is no MTEB model is named as ``as_mteb_model`` names its encoder
    (:func:`sentprobe.encoders.mteb.mteb_model_name`)."""
    from sentprobe.encoders.mteb import mteb_model_name

    found = _MTEB_FINGERPRINT.match(fingerprint or "")
    if found:
        rest = found["rest"]
        return found["name"], found["revision"] + (f"-{short_hash(fingerprint)}" if rest else "")
    return mteb_model_name(encoder, fingerprint or encoder)


def _row_fingerprint(rows: pd.DataFrame) -> str:
    """The fingerprint of one table row: its encoder's, or, for a seeded row whose draws have
    a fingerprint each, the row's (``extra["row_fingerprint"]``, its row identity)."""
    prints = list(dict.fromkeys(rows["encoder_fingerprint"].astype(str)))
    return prints[0] if len(prints) == 1 else str(rows["row_id"].iloc[0])


def _folder_name(name: str) -> str:
    """MTEB's folder of a model name (``/`` as ``__``), other unsafe characters as ``_``."""
    return re.sub(r"[^\w.+-]", "_", name.replace("/", "__")).lstrip(".") or "model"


def _mteb_version() -> str | None:
    try:
        from importlib.metadata import version

        return version("mteb")
    except Exception:  # not installed: MTEB's loader accepts a missing version
        return None


def _controls(frame: pd.DataFrame) -> dict[tuple, dict[str, Any]]:
    """Per (row, task identity): the control accuracy, ceiling and selectivity (means over
    seeds, fractions) where a control task was run with the same row, probe and seed."""
    sel = selectivity_frame(frame)
    out: dict[tuple, dict[str, Any]] = {}
    for cell, group in sel.groupby(["row_id", *TASK], sort=False):
        ceiling = pd.to_numeric(group["control_ceiling"]).dropna()
        out[cell] = {
            "sentprobe_control_score": float(group["control_score"].mean()),
            "sentprobe_control_ceiling": float(ceiling.mean()) if len(ceiling) else None,
            "sentprobe_selectivity": float(group["selectivity"].mean()),
        }
    return out


def write_mteb_results(
    frame: pd.DataFrame,
    out: str | Path,
    interval: Callable[[Sequence[str]], tuple[float, float] | None] | None = None,
) -> list[Path]:
    """Write one MTEB result file per (row, task identity) of ``frame`` under ``out``;
    returns them (see the module docstring)."""
    if frame.empty:
        raise SentprobeError("no stored results to write")
    df = resolve(frame)
    controls = _controls(df)
    df = df[~df["task"].map(is_control)]
    cell = ["row_id", *TASK]  # one file per table row and task identity
    several = df.groupby(cell, sort=False)["probe"].nunique()
    if (several > 1).any():
        first = df[df.set_index(cell).index.isin(several[several > 1].index)].iloc[0]
        probes = ", ".join(sorted(set(df.loc[df["row_id"] == first["row_id"], "probe"])))
        raise SentprobeError(
            f"{first['encoder']} on {first['task']} has results of several probes ({probes}); "
            "MTEB's layout holds one per model and task: choose one with --probe"
        )
    root = Path(out) / "results"
    version = _mteb_version()
    files: dict[Path, str] = {}  # every path checked before anything is written
    for row, rows in df.groupby("row_id", sort=False):
        shown = str(rows["encoder"].iloc[0])  # the label, told apart where two rows share one
        name, revision = model_folder(shown, _row_fingerprint(rows))
        folder = f"{_safe(_folder_name(name), 'model name')}/{_safe(revision, 'revision')}"
        meta = {"name": name, "revision": revision, "sentprobe_row": shown}
        files[inside(root, f"{folder}/model_meta.json")] = json.dumps(meta, indent=2) + "\n"
        for task_id, cells in rows.groupby(list(TASK), sort=False):
            source, language, short = (str(part) for part in task_id)
            full = full_task_name(short, source)
            task_file = _safe(mteb_name(short, language, source), "task name")
            doc = _result(cells, full, task_file, version, interval)
            doc["scores"]["test"][0].update(controls.get((row, *task_id), {}))
            path = inside(root, f"{folder}/{task_file}.json")
            if path in files:
                raise SentprobeError(f"two results would both be written to {path}: refused")
            files[path] = json.dumps(doc, indent=2) + "\n"
    return [atomic_write_text(path, text) for path, text in files.items()]


def _result(
    cells: pd.DataFrame,
    full_name: str,
    mteb_name: str,
    version: str | None,
    interval: Callable[[Sequence[str]], tuple[float, float] | None] | None,
) -> dict[str, Any]:
    """MTEB's result document of one (row, task identity): means over its seeds."""
    bounds = interval(list(cells["key"])) if interval is not None else None
    accuracy = float(cells["test_score"].mean())
    dev = cells["dev_score"].dropna()
    score: dict[str, Any] = {
        "accuracy": accuracy,
        "main_score": accuracy,
        "hf_subset": "default",
        "languages": [MTEB_LANGUAGES.get(str(cells["language"].iloc[0]), "und-Zyyy")],
        "sentprobe_ci95_low": None if bounds is None else float(bounds[0]),
        "sentprobe_ci95_high": None if bounds is None else float(bounds[1]),
        "sentprobe_dev_score": float(dev.mean()) if len(dev) else None,
        "sentprobe_probe": str(cells["probe"].iloc[0]),
        "sentprobe_selection": str(cells["selection"].iloc[0]),
        "sentprobe_seeds": int(cells["seed"].nunique()),
        "sentprobe_task": full_name,
    }
    return {
        "dataset_revision": str(cells["task_hash"].iloc[-1]),
        "task_name": mteb_name,
        "mteb_version": version,
        "scores": {"test": [score]},
        "evaluation_time": float(
            cells["encode_seconds"].fillna(0).sum() + cells["probe_seconds"].fillna(0).sum()
        ),
        "kg_co2_emissions": None,
    }
