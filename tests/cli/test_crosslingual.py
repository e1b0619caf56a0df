"""``sentprobe map-words`` and ``map-encoder`` from the command line: outputs, measured
precision, and bad inputs as one ``error:`` line (exit 1)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from sentprobe.cli.main import app
from sentprobe.training.checkpoint import read_manifest


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def _vec(path: Path, words: list[str], matrix: np.ndarray) -> Path:
    lines = [f"{len(words)} {matrix.shape[1]}"]
    lines += [w + " " + " ".join(f"{v:.6f}" for v in row) for w, row in zip(words, matrix)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _rotated(tmp_path: Path, n: int = 120, dim: int = 10) -> tuple[Path, Path, Path]:
    rng = np.random.default_rng(0)
    tgt = rng.normal(size=(n, dim))
    q, _ = np.linalg.qr(rng.normal(size=(dim, dim)))
    src = _vec(tmp_path / "fr.vec", [f"fr{i}" for i in range(n)], tgt @ q.T)
    en = _vec(tmp_path / "en.vec", [f"en{i}" for i in range(n)], tgt)
    pairs = tmp_path / "dict.txt"
    pairs.write_text("".join(f"fr{i} en{i}\n" for i in range(n)), encoding="utf-8")
    return src, en, pairs


def test_map_words_writes_mapped_vectors_and_reports_precision(tmp_path: Path) -> None:
    src, en, pairs = _rotated(tmp_path)
    out = tmp_path / "mapped.vec"
    res = _invoke("map-words", "--src", str(src), "--tgt", str(en), "--dict", str(pairs),
                  "-o", str(out))  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "precision@1 100.0%, precision@5 100.0%" in res.output
    assert "96 pairs fitted, 24 source words held out" in res.output
    assert out.read_text(encoding="utf-8").splitlines()[0] == "120 10"


def test_map_words_bad_inputs_are_one_line(tmp_path: Path) -> None:
    src, en, pairs = _rotated(tmp_path)
    small = _vec(tmp_path / "small.vec", ["en0", "en1"], np.ones((2, 3)))
    res = _invoke("map-words", "--src", str(src), "--tgt", str(small), "--dict", str(pairs),
                  "-o", str(tmp_path / "x.vec"))  # fmt: skip
    assert res.exit_code == 1 and "dimension mismatch" in res.output
    assert not (tmp_path / "x.vec").exists()
    swapped = tmp_path / "swapped.txt"
    swapped.write_text("en0 fr0\n", encoding="utf-8")
    res = _invoke("map-words", "--src", str(src), "--tgt", str(en), "--dict", str(swapped),
                  "-o", str(tmp_path / "x.vec"))  # fmt: skip
    assert res.exit_code == 1 and "check the direction" in res.output


TEACHER = """
import numpy as np

def encode(sentences):
    out = np.zeros((len(sentences), 6), dtype=np.float32)
    for i, s in enumerate(sentences):
        for w in s.lower().split():
            out[i, sum(map(ord, w)) % 6] += 1.0
    return out
"""


def test_map_encoder_trains_a_run_and_rejects_misaligned_data(tmp_path: Path) -> None:
    teacher = tmp_path / "teacher.py"
    teacher.write_text(TEACHER, encoding="utf-8")
    words = ["chat", "chien", "dort", "mange", "le", "un", "petit", "grand"]
    rng = np.random.default_rng(1)
    lines = []
    for _ in range(40):
        s = " ".join(rng.choice(words, size=4))
        lines.append(f"{s}\t{s}")
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = tmp_path / "runs" / "map-xx"
    args = ["map-encoder", "--teacher", f"{teacher}:encode", "--parallel", str(pairs),
            "--lang", "fr", "-o", str(run), "--epochs", "1", "--valid-size", "8",
            "--batch-size", "8", "--emb-dim", "8", "--cache-dir", str(tmp_path / "c"),
            "-q"]  # fmt: skip
    res = _invoke(*args, "--valid-task", "mock/Mock")
    assert res.exit_code == 0, res.output
    manifest = read_manifest(run)
    assert manifest["name"] == "encode->fr/bilstm-max/map-xx" and len(manifest["epochs"]) == 1
    assert manifest["mapping"]["settings"]["monitor"] == "task"
    assert 0.0 <= manifest["epochs"][0]["valid_task"] <= 1.0
    assert "1 epochs, best epoch 1" in res.output
    xprobe = tmp_path / "runs" / "map-2x"  # X-Probe's student: 2 layers, 10% dropout
    res = _invoke(*[str(xprobe) if a == str(run) else a for a in args], "--layers", "2",
                  "--dropout", "0.1", "--patience", "3")  # fmt: skip
    assert res.exit_code == 0, res.output
    settings = read_manifest(xprobe)["mapping"]["settings"]
    assert (settings["layers"], settings["dropout"], settings["patience"]) == (2, 0.1, 3)
    assert read_manifest(xprobe)["encoder"]["options"] == {"layers": 2, "dropout": 0.1}
    bad = tmp_path / "bad.tsv"
    bad.write_text("a b\tc d\nno tab here\n", encoding="utf-8")
    res = _invoke(*[str(bad) if a == str(pairs) else a for a in args])
    assert res.exit_code == 1
    assert f"{bad}, line 2: no tab (expected source<TAB>target)" in res.output


def test_valid_task_must_be_in_the_students_language(capsys) -> None:
    """An English task cannot select a French student's epochs; a probing task in French
    may, with a warning that epochs are then selected on a probe."""
    from sentprobe.cli.crosslingual import _downstream
    from sentprobe.errors import SentprobeError

    with pytest.raises(
        SentprobeError, match="sample-en/SentLen: a en task, but the student reads fr"
    ):
        _downstream("sample-en/SentLen", "fr")
    _downstream("mock/Mock", "fr")  # no language given ("und"), not a probing task
    assert "probing task" not in capsys.readouterr().err
    _downstream("sample-fr/SentLen", "fr")
    assert "sample-fr/SentLen is a probing task (surface)" in " ".join(
        capsys.readouterr().err.split()
    )


def test_map_encoder_device(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--device auto`` trains where torch sees a GPU, else on the CPU; ``cuda`` without one
    and an unknown name are one-line errors before anything is written."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    teacher = tmp_path / "teacher.py"
    teacher.write_text(TEACHER, encoding="utf-8")
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("".join(f"le chat {w}\tle chat {w}\n" for w in "abcdefghijklmnop"), "utf-8")
    args = ["map-encoder", "--teacher", f"{teacher}:encode", "--parallel", str(pairs),
            "--lang", "fr", "--epochs", "1", "--valid-size", "4", "--batch-size", "4",
            "--emb-dim", "8", "--cache-dir", str(tmp_path / "c"), "-q"]  # fmt: skip
    for device, message in (("cuda", "--device cuda: no CUDA device"), ("tpu", "use cpu, cuda")):
        res = _invoke(*args, "-o", str(tmp_path / device), "--device", device)
        assert res.exit_code == 1 and message in res.output, res.output
        assert not (tmp_path / device).exists()
    res = _invoke(*args, "-o", str(tmp_path / "auto"), "--device", "auto")
    assert res.exit_code == 0, res.output
    assert len(read_manifest(tmp_path / "auto")["epochs"]) == 1
