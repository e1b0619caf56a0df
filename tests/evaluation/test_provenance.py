"""Provenance: every stored result names the sentprobe version and source, the library
versions and the environment that computed it (command line and Python alike), ``report
--provenance`` shows them, and a result made by another sentprobe version or code, or another
major.minor of a decisive library, is flagged by ``report`` and computed again by ``run``
(``--keep-other-versions`` reuses it)."""

from __future__ import annotations

import dataclasses
import json
import sys
from importlib import metadata
from pathlib import Path

import pytest
from typer.testing import CliRunner

import sentprobe
from sentprobe.cli.main import app
from sentprobe.evaluation import provenance
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
    assert "1 of 1 results were made by another sentprobe version or code" in report.output
    assert "(sentprobe 0.0.1; this is sentprobe" in report.output
    shown = CliRunner().invoke(app, ["report", "--results", str(results), "--provenance"])
    assert "Computed by sentprobe 0.0.1, sentprobe-code " in shown.output
    assert "**Made by another sentprobe version than this one" in shown.output

    rerun = CliRunner().invoke(app, args)
    assert rerun.exit_code == 0
    assert "made by sentprobe 0.0.1 are computed again" in rerun.output
    with ResultsStore(results, readonly=True) as store:
        ((_, again),) = store.items()
    assert again.extra["versions"]["sentprobe"] == sentprobe.__version__
    assert again.created >= record.created
    shown = CliRunner().invoke(app, ["report", "--results", str(results), "--provenance"])
    assert f"Computed by sentprobe {sentprobe.__version__}, sentprobe-code " in shown.output
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


def _restamp(results: Path, **changes: str) -> None:
    """Rewrite the stored record's versions as another installation would have stored them."""
    with ResultsStore(results) as store:
        ((key, record),) = store.items()
        versions = {**record.extra["versions"], **changes}
        store.add(dataclasses.replace(record, extra={**record.extra, "versions": versions}), key)


def test_the_environment_is_recorded(tmp_path):
    results = tmp_path / "r.sqlite"
    assert CliRunner().invoke(app, [*RUN, "--results", str(results)]).exit_code == 0
    with ResultsStore(results, readonly=True) as store:
        ((_, record),) = store.items()
    env = record.extra["environment"]
    assert env["threads"] >= 1 and env["machine"] and env["platform"]
    assert env["blas"] and env["blas"][0]["internal_api"]  # numpy's BLAS, as threadpoolctl sees it
    assert record.extra["versions"]["sentprobe-code"] == provenance.source_hash()


@pytest.mark.parametrize(
    "changes,said",
    [
        ({"sentprobe-code": "0" * 16}, "other sentprobe code (" + "0" * 16 + ")"),
        ({"torch": "1.13.1", "scikit-learn": "1.0.2"}, "scikit-learn 1.0.2, torch 1.13.1"),
    ],
)
def test_other_code_or_library_minor_is_flagged_computed_again_or_kept(tmp_path, changes, said):
    results = tmp_path / "r.sqlite"
    args = [*RUN, "--results", str(results)]
    assert CliRunner().invoke(app, args).exit_code == 0
    _restamp(results, **changes)
    report = CliRunner().invoke(app, ["report", "--results", str(results)])
    assert said in report.output
    kept = CliRunner().invoke(app, [*args, "--keep-other-versions"])
    assert kept.exit_code == 0 and "computed again" not in kept.output
    rerun = CliRunner().invoke(app, args)
    assert f"made by {said} are computed again" in rerun.output
    with ResultsStore(results, readonly=True) as store:
        ((_, again),) = store.items()
    assert again.extra["versions"] == package_versions()


def test_a_patch_release_of_a_library_is_not_foreign():
    here = package_versions()
    patched = {**here, "torch": ".".join(here["torch"].split("+")[0].split(".")[:2]) + ".999"}
    assert provenance.foreign_reason({"versions": here}) is None
    assert provenance.foreign_reason({"versions": patched}) is None


def test_the_source_hash_follows_the_code(tmp_path, monkeypatch):
    """Any edit of a source file changes the hash (a checkout's uncommitted edit included)."""
    package = tmp_path / "sentprobe"
    (package / "evaluation").mkdir(parents=True)
    (package / "a.py").write_text("x = 1\n")
    fake = package / "evaluation" / "provenance.py"
    fake.write_text("")
    monkeypatch.setattr(provenance, "__file__", str(fake))
    provenance.source_hash.cache_clear()
    try:
        first = provenance.source_hash()
        provenance.source_hash.cache_clear()
        (package / "a.py").write_text("x = 2\n")
        assert provenance.source_hash() != first
    finally:
        provenance.source_hash.cache_clear()
