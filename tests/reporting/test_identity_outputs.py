"""Issue 46: outputs that merged or split identities: the lowest-ceiling table keeps en and
fr apart; ``report -f json`` has one schema whatever the store holds; the MTEB export writes
one result per table row (a seeded row's mean), refuses several probes in one line, and
names models from the identity as ``as_mteb_model`` does."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from sentprobe.cli.main import app
from sentprobe.evaluation.store import ResultsStore


def _report(path, *args):
    result = CliRunner().invoke(app, ["report", "--results", str(path), "--no-ci", *args])
    return result


def _controls_store(tmp_path, make_record):
    path = tmp_path / "r.sqlite"
    ceilings = {("en", 0): 0.95, ("en", 1): 0.997, ("fr", 0): 0.913, ("fr", 1): 0.871}
    with ResultsStore(path) as s:
        for lang in ("en", "fr"):
            common = dict(language=lang, task_source=f"sample-{lang}", task_hash=f"h-{lang}")
            for seed in (0, 1):
                s.add(make_record("enc", "Tense", 0.8, seed=seed, **common), f"t{lang}{seed}")
                extra = {"control_ceiling": ceilings[(lang, seed)], "control_seed": seed}
                s.add(
                    make_record("enc", "Tense~control", 0.6, seed=seed, extra=extra, **common),
                    f"c{lang}{seed}",
                )
    return path


@pytest.mark.parametrize("fmt", ["markdown", "latex"])
def test_lowest_ceiling_table_keeps_languages_apart(tmp_path, make_record, fmt):
    result = _report(_controls_store(tmp_path, make_record), "-f", fmt)
    assert result.exit_code == 0, result.output
    lowest = result.output.split("lowest over the control maps")[1]
    lowest = lowest.split("\n\n")[1] if fmt == "markdown" else lowest[:2000]
    assert "95.0" in lowest and "87.1" in lowest  # en's minimum and fr's
