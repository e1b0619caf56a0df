"""The metadata sections of the HTML report: what each task is (sizes from the records,
licence and source from the registry), each built-in suite's manifest summary and its
QUALITY.md with the audit findings, and the provenance of the results (encoder fingerprints,
library versions, when)."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd

from sentprobe.io import inside, read_text
from sentprobe.reporting import html


def _suite_dirs() -> dict[str, Path]:
    from sentprobe.datasets.builtin import SAMPLE_DIRS
    from sentprobe.datasets.loaders import read_manifest

    out = {}
    for directory in SAMPLE_DIRS:
        manifest = read_manifest(directory) if (directory / "manifest.json").is_file() else None
        if manifest and manifest.get("suite"):
            out[str(manifest["suite"])] = directory
    return out


def _short(value: Any, limit: int = 300) -> str:
    """A manifest value as one line: a mapping as ``key: value; ...`` (a single nested
    mapping unwrapped), anything longer than ``limit`` cut with an ellipsis."""
    while (
        isinstance(value, dict) and len(value) == 1 and isinstance(next(iter(value.values())), dict)
    ):
        value = next(iter(value.values()))
    if isinstance(value, dict):
        text = "; ".join(f"{k}: {_short(v, limit)}" for k, v in value.items())
    else:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def suite_info(name: str, directory: Path) -> html.SuiteInfo:
    """A suite's manifest summary, its QUALITY.md and the audit findings section of it."""
    from sentprobe.datasets.loaders import read_manifest

    manifest = read_manifest(directory) or {}
    generator = manifest.get("generator") or {}
    fields = {
        "language": str(manifest.get("language", "")),
        "layout": str(manifest.get("layout", "")),
        "description": _short(manifest.get("description", ""), 600),
        "source": _short(manifest.get("source", ""), 600),
        "license": _short(manifest.get("license", "")),
        "corpus sha256": str(manifest.get("corpus_sha256", "")),
        "annotator": _short(manifest.get("annotator", "")),
        "generator": _short(generator),
        "sizes": _short(manifest.get("sizes", "")),
    }
    quality = directory / "QUALITY.md"
    text = read_text(inside(directory, "QUALITY.md")) if quality.is_file() else ""
    findings = ""
    match = re.search(r"^## Warnings and errors\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    if match:
        findings = match.group(1).strip()
    return html.SuiteInfo(name, str(directory), fields, text, findings)


def task_section(frame: pd.DataFrame) -> tuple[list[html.TaskInfo], list[html.SuiteInfo]]:
    """One entry per task of the results (sizes and classes from the records; description,
    license and source from the registry), and the suites they come from."""
    from sentprobe import registry
    from sentprobe.datasets.builtin import register_builtin
    from sentprobe.evaluation.identity import task_names
    from sentprobe.reporting.controls import split_controls

    register_builtin()
    tasks, _ = split_controls(frame)
    suites = _suite_dirs()
    infos, used = [], []
    last = tasks.sort_values("created", kind="stable") if "created" in tasks.columns else tasks
    last = last.drop_duplicates(["task", "task_source", "language"], keep="last")
    shown = list(task_names(last))  # as the results table names them
    for rec, name in zip(last.itertuples(index=False), shown, strict=True):
        source = str(rec.task_source or "")
        names = [f"{source}/{rec.task}", str(rec.task)]
        entry = next((registry.tasks.get(n) for n in names if n in registry.tasks), None)
        meta = getattr(entry, "metadata", None)
        fields = {
            "suite": source,
            "language": str(rec.language or ""),
            "category": str(rec.category or ""),
            "train / dev / test": f"{rec.n_train} / {rec.n_dev or '– (5-fold CV)'} / {rec.n_test}",
            "classes": str(rec.n_classes),
            "task data hash": str(rec.task_hash),
        }
        description = ""
        if meta is not None and source not in suites:  # a suite's tasks: see the suite
            fields["license"] = _short(meta.license)
            fields["source"] = _short(meta.source)
            description = meta.description
        infos.append(html.TaskInfo(name, fields, description))
        if source in suites and source not in used:
            used.append(source)
    return infos, [suite_info(s, suites[s]) for s in used]


def provenance(frame: pd.DataFrame, results: Path) -> list[html.SimpleTable]:
    """Encoders with their fingerprints and when they ran; library versions; the report."""
    rows = []
    for (encoder, probe), group in frame.groupby(["encoder", "probe"], sort=False):
        fps = sorted(set(group["encoder_fingerprint"].astype(str)))
        created = group["created"].astype(str).str.replace("T", " ").str[:16]
        rows.append(
            [
                str(encoder),
                str(probe),
                "; ".join(fps),
                str(int(group["dim"].max())) if "dim" in group else "",
                str(len(group)),
                f"{created.min()} – {created.max()[-5:]}"
                if created.min()[:10] == created.max()[:10]
                else f"{created.min()} – {created.max()}",
            ]
        )
    encoders = html.SimpleTable(
        "Encoders",
        ["Row", "Probe", "Fingerprint (model, revision, layer, pooling)", "Dim", "Records", "Run"],
        rows,
        "A result is reused only while its fingerprint, the task data hash and the probe's "
        "settings are unchanged.",
    )
    from sentprobe.evaluation.provenance import package_versions, versions_line

    computed = pd.Series([versions_line(extra) for extra in frame["extra"]]).value_counts()
    made = html.SimpleTable(
        "Versions that computed the results",
        ["Versions", "Records"],
        [[line, str(count)] for line, count in computed.items()],
        "Each stored result records them; `sentprobe run` computes again a result made by "
        "another sentprobe version.",
    )
    versions = [[name, version] for name, version in package_versions().items()]
    libs = html.SimpleTable(
        "Libraries (when this report was made)", ["Package", "Version"], versions
    )
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    this = html.SimpleTable(
        "This report",
        ["", ""],
        [["results store", str(results.resolve())], ["records", str(len(frame))], ["created", now]],
    )
    return [encoders, made, libs, this]
