"""A lean install, simulated in seconds: with the package of an extra made unimportable, every
command that needs it fails in one line naming the extra (``pip install 'sentprobe[EXTRA]'``),
before any work. The real lean install (a fresh venv from PyPI) is tests/test_lean_install.py."""

from __future__ import annotations

import sys

import pytest
from typer.testing import CliRunner

from sentprobe.cli.main import app

#: (hidden package, command line, the extra the error must name). matplotlib is not here:
#: ``report --html`` without it writes the page without figures, and the figure commands
#: need stored results of a kind (layers, training runs, downstream scores) set up elsewhere.
CASES = [
    ("datasets", ["export", "mock", "-o", "{tmp}/x"], "hf-datasets"),
    ("datasets", ["push", "mock", "me/mock"], "hf-datasets"),
    ("datasets", ["run", "-e", "bov-glove", "-t", "hf:someone/data", "-q"], "hf-datasets"),
    ("mteb", ["run", "-e", "mteb:sentence-transformers/all-MiniLM-L6-v2", "-t", "mock"], "mteb"),
    ("ray", ["run", "-e", "bov-glove", "-t", "mock", "--executor", "ray"], "ray"),
    ("accelerate", ["run", "-e", "hf:org/model", "-t", "mock", "--device-map", "auto"], "offload"),
    ("concept_erasure", ["run", "-e", "bov-glove", "-t", "mock", "--erase", "mock"], "erasure"),
    ("spacy", ["build", "-c", "{tmp}/corpus.txt", "-o", "{tmp}/suite"], "spacy"),
    (
        "sacrebleu",
        [
            "train",
            "--arch",
            "bilstm-max",
            "--objective",
            "autoencoder",
            "--data",
            "{tmp}/corpus.txt",
            "-o",
            "{tmp}/run",
        ],
        "train",
    ),
]


@pytest.mark.parametrize(
    ("hidden", "args", "extra"), CASES, ids=[c[0] + "-" + c[1][0] for c in CASES]
)
def test_a_missing_extra_is_one_line_naming_it(hidden, args, extra, tmp_path, monkeypatch):
    (tmp_path / "corpus.txt").write_text("The cat sat on the mat .\nA dog ran .\n")
    for name in list(sys.modules):  # imported already: hide it and its submodules too
        if name == hidden or name.startswith(hidden + "."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, hidden, None)  # `import hidden` now raises ImportError
    # annotators loaded by earlier tests in this process are kept; a lean install has none
    monkeypatch.setattr("sentprobe.annotation.backends.base._LOADED", {})
    result = CliRunner().invoke(app, [a.format(tmp=tmp_path) for a in args])
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert f"sentprobe[{extra}]" in lines[0], lines[0]
