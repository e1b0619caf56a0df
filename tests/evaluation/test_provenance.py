"""Provenance: every stored result names the sentprobe and library versions that computed it
(command line and Python alike), ``report --provenance`` shows them, and a result made by
another sentprobe version is flagged by ``report`` and computed again by ``run``."""

from __future__ import annotations

import dataclasses
import json
import sys
from importlib import metadata
from pathlib import Path

from typer.testing import CliRunner

import sentprobe
from sentprobe.cli.main import app
from sentprobe.evaluation.provenance import package_versions
from sentprobe.evaluation.store import ResultsStore

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
RUN = ["run", "-e", "bov-glove", "-t", "mock/Mock", "--baselines", "none", "-q"]


def test_version_has_one_source():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert sentprobe.__version__ == metadata.version("sentprobe") == pyproject
    init = (ROOT / "src/sentprobe/__init__.py").read_text()
    assert f'"{pyproject}"' not in init  # not written a second time


def test_results_from_python_record_versions(tmp_path):
    frame = sentprobe.run(
        ["bov-glove"],
        "mock/Mock",
        results=tmp_path / "r.sqlite",
        baselines="none",
        cache_dir=tmp_path / "cache",
        progress=False,
    )
    assert len(frame) == 1
    versions = frame["extra"].iloc[0]["versions"]
    assert versions["sentprobe"] == sentprobe.__version__
    for name in ("numpy", "scikit-learn", "torch", "transformers"):
        assert versions[name] == metadata.version(name)
    assert versions == package_versions()


def test_another_versions_result_is_flagged_and_computed_again(tmp_path):
    results = tmp_path / "r.sqlite"
    args = [*RUN, "--results", str(results)]
    assert CliRunner().invoke(app, args).exit_code == 0
    with ResultsStore(results) as store:
        ((key, record),) = store.items()
        assert record.extra["versions"]["sentprobe"] == sentprobe.__version__
        old = {**record.extra["versions"], "sentprobe": "0.0.1"}
        store.add(dataclasses.replace(record, extra={**record.extra, "versions": old}), key)

    report = CliRunner().invoke(app, ["report", "--results", str(results)])
    assert report.exit_code == 0
    assert "1 of 1 results were made by another sentprobe version (0.0.1; this is" in report.output
    shown = CliRunner().invoke(app, ["report", "--results", str(results), "--provenance"])
    assert "Computed by sentprobe 0.0.1, numpy " in shown.output
    assert "**Made by another sentprobe version than this one" in shown.output

    rerun = CliRunner().invoke(app, args)
    assert rerun.exit_code == 0
    assert "made by sentprobe 0.0.1 are computed again" in rerun.output
    with ResultsStore(results, readonly=True) as store:
        ((_, again),) = store.items()
    assert again.extra["versions"]["sentprobe"] == sentprobe.__version__
    assert again.created >= record.created
    shown = CliRunner().invoke(app, ["report", "--results", str(results), "--provenance"])
    assert f"Computed by sentprobe {sentprobe.__version__}, numpy " in shown.output
    assert "Made by another" not in shown.output and "warning" not in shown.output
    quiet = CliRunner().invoke(app, args)  # same version now: reused, nothing said
    assert "computed again" not in quiet.output


def test_unrecorded_versions_count_as_another_version(tmp_path):
    results = tmp_path / "r.sqlite"
    assert CliRunner().invoke(app, [*RUN, "--results", str(results)]).exit_code == 0
    with ResultsStore(results) as store:
        ((key, record),) = store.items()
        extra = {k: v for k, v in record.extra.items() if k != "versions"}
        # add() would stamp this process's versions: write the old row as an old store had it
        store._db.execute("UPDATE results SET extra=? WHERE key=?", (json.dumps(extra), key))
    shown = CliRunner().invoke(app, ["report", "--results", str(results), "--provenance"])
    assert "Computed by versions not recorded (stored by an older sentprobe)." in shown.output
    rerun = CliRunner().invoke(app, [*RUN, "--results", str(results)])
    assert "made by an older sentprobe (no version) are computed again" in rerun.output
