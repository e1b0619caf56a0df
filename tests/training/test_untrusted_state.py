"""A run folder from someone else cannot run code: a ``state.pt`` carrying a pickle payload
is refused with one line on resume of ``sentprobe train`` and ``sentprobe map-encoder``, and
the payload never runs; an epoch folder or state file that links outside the run is refused
too, nothing written through it (docs/security.md)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from typer.testing import CliRunner

from sentprobe.cli.main import app
from sentprobe.training.checkpoint import STATE_FILE, completed_epochs, read_manifest


class _Payload:
    """Unpickling this calls ``open(marker, "w")``: the file appears if the payload runs."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def _plant(run: Path, marker: Path) -> Path:
    """Replace the last epoch's state file by one that keeps its values and adds a payload."""
    state = run / f"epoch-{completed_epochs(read_manifest(run))[-1]}" / STATE_FILE
    values = torch.load(state, weights_only=True)
    torch.save({**values, "extra": _Payload(marker)}, state)
    return state


def _refused(res, state: Path, marker: Path, run: Path, epochs: int) -> None:
    assert res.exit_code == 1, res.output
    errors = [line for line in res.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and str(state) in errors[0] and "refused" in errors[0], res.output
    assert "io.open" in errors[0] or "builtins.open" in errors[0], errors
    assert "Traceback" not in res.output
    assert not marker.exists()  # the payload never ran
    assert len(completed_epochs(read_manifest(run))) == epochs  # nothing trained on it


def test_train_resume_refuses_a_state_file_with_code(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.tsv"
    words = ["a", "b", "c", "d", "e"]
    rows = [f"{words[i % 5]} {words[i % 3]}\t{words[i % 4]} {words[i % 2]}" for i in range(40)]
    pairs.write_text("\n".join(rows) + "\n", encoding="utf-8")
    run = tmp_path / "run"
    args = ["train", "--arch", "cnn-max", "--objective", "translation", "--data", str(pairs),
            "-o", str(run), "--vectors", "none", "--preset", "demo", "--dim", "8",
            "--batch-size", "8", "-q"]  # fmt: skip
    res = CliRunner().invoke(app, [*args, "--epochs", "1"])
    assert res.exit_code == 0, res.output
    marker = tmp_path / "payload-ran"
    good = (run / "epoch-1" / STATE_FILE).read_bytes()
    state = _plant(run, marker)
    res = CliRunner().invoke(app, [*args, "--epochs", "2"])
    _refused(res, state, marker, run, epochs=1)
    # the same run with a good state file, its next epoch folder a link elsewhere: resuming
    # writes nothing there; a state file that links out is not read either
    state.write_bytes(good)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (run / "epoch-2").symlink_to(elsewhere, target_is_directory=True)
    res = CliRunner().invoke(app, [*args, "--epochs", "2"])
    assert res.exit_code == 1 and "outside" in res.output and "Traceback" not in res.output
    assert list(elsewhere.iterdir()) == []
    (run / "epoch-2").unlink()
    state.rename(elsewhere / STATE_FILE)
    state.symlink_to(elsewhere / STATE_FILE)
    res = CliRunner().invoke(app, [*args, "--epochs", "2"])
    assert res.exit_code == 1 and "outside" in res.output, res.output
    assert completed_epochs(read_manifest(run)) == [1]


def test_train_refuses_a_mid_epoch_checkpoint_with_code(tmp_path: Path) -> None:
    """``resume.pt`` (``--checkpoint-every``/``--max-steps``) is read as safely as
    ``state.pt``: a payload in it is refused with one line and never runs."""
    text = tmp_path / "text.txt"
    text.write_text("".join(f"w{i % 7} w{i % 5} w{i % 3} .\n" for i in range(40)), "utf-8")
    run = tmp_path / "run"
    args = ["train", "--arch", "cnn-max", "--objective", "autoencoder", "--data", str(text),
            "-o", str(run), "--vectors", "none", "--preset", "demo", "--dim", "8",
            "--batch-size", "8", "-q", "--epochs", "1"]  # fmt: skip
    res = CliRunner().invoke(app, [*args, "--max-steps", "2"])
    assert res.exit_code == 0 and "stopped after 2 steps" in res.output, res.output
    state, marker = run / "resume.pt", tmp_path / "payload-ran"
    torch.save({**torch.load(state, weights_only=True), "extra": _Payload(marker)}, state)
    res = CliRunner().invoke(app, args)
    _refused(res, state, marker, run, epochs=0)


TEACHER = """
import numpy as np

def encode(sentences):
    out = np.zeros((len(sentences), 6), dtype=np.float32)
    for i, s in enumerate(sentences):
        for w in s.split():
            out[i, sum(map(ord, w)) % 6] += 1.0
    return out
"""


def test_map_encoder_resume_refuses_a_state_file_with_code(tmp_path: Path) -> None:
    teacher = tmp_path / "teacher.py"
    teacher.write_text(TEACHER, encoding="utf-8")
    rng = np.random.default_rng(0)
    words = ["chat", "chien", "dort", "mange", "le", "un"]
    lines = [" ".join(rng.choice(words, size=4)) for _ in range(40)]
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("".join(f"{s}\t{s}\n" for s in lines), encoding="utf-8")
    run = tmp_path / "map"
    args = ["map-encoder", "--teacher", f"{teacher}:encode", "--parallel", str(pairs),
            "--lang", "fr", "-o", str(run), "--valid-size", "8", "--batch-size", "8",
            "--emb-dim", "8", "--cache-dir", str(tmp_path / "cache"), "-q"]  # fmt: skip
    res = CliRunner().invoke(app, [*args, "--epochs", "1"])
    assert res.exit_code == 0, res.output
    marker = tmp_path / "payload-ran"
    state = _plant(run, marker)
    res = CliRunner().invoke(app, [*args, "--epochs", "2"])
    _refused(res, state, marker, run, epochs=1)


def test_an_annotations_link_in_a_run_folder_is_not_written_through(tmp_path: Path) -> None:
    """``train --objective seq2tree -o RUN`` stores its parses under ``RUN/annotations``: a
    run folder whose ``annotations`` is a link elsewhere is refused in one line, nothing
    written where it points; without the link the same command trains."""
    from sentprobe.annotation.backends.base import Annotator
    from sentprobe.annotation.record import AnnotatedSentence
    from sentprobe.registry import annotators

    class Chain(Annotator):
        name = "chain-test"

        def __init__(self, arg=None, **options) -> None:
            pass

        def annotate(self, sentences, *, pretokenized=False):
            for s in sentences:
                toks = s.split() if isinstance(s, str) else list(s)
                yield AnnotatedSentence(
                    tokens=toks, upos=["X"] * len(toks), heads=list(range(len(toks))),
                    deprels=["root"] + ["dep"] * (len(toks) - 1), lang="en",
                )  # fmt: skip

    annotators.register("chain-test", Chain)
    text = tmp_path / "text.txt"
    words = ["a", "b", "c", "d", "e"]
    text.write_text("".join(f"{words[i % 5]} {words[i % 3]} {words[i % 2]}\n" for i in range(40)))
    run = tmp_path / "run"
    run.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (run / "annotations").symlink_to(elsewhere, target_is_directory=True)
    args = ["train", "--arch", "cnn-max", "--objective", "seq2tree", "--data", str(text),
            "-o", str(run), "--vectors", "none", "--preset", "demo", "--dim", "8",
            "--batch-size", "8", "--annotator", "chain-test", "--epochs", "1", "-q"]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 1, res.output
    errors = [line for line in res.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "'annotations'" in errors[0] and "outside" in errors[0], errors
    assert "Traceback" not in res.output
    assert list(elsewhere.iterdir()) == []
    assert sorted(p.name for p in run.iterdir()) == ["annotations"]
    (run / "annotations").unlink()
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert any((run / "annotations").iterdir())


def test_probing_a_run_whose_epoch_links_out_is_refused(tmp_path: Path) -> None:
    """``run -e runs/NAME`` read the weights of an ``epoch-K`` folder that is a link out of
    the run: refused in one line before anything is read or stored."""
    import shutil
    import sqlite3

    pairs = tmp_path / "pairs.tsv"
    words = ["a", "b", "c", "d", "e"]
    rows = [f"{words[i % 5]} {words[i % 3]}\t{words[i % 4]} {words[i % 2]}" for i in range(40)]
    pairs.write_text("\n".join(rows) + "\n", encoding="utf-8")
    run = tmp_path / "run"
    res = CliRunner().invoke(app, [
        "train", "--arch", "cnn-max", "--objective", "translation", "--data", str(pairs),
        "-o", str(run), "--vectors", "none", "--preset", "demo", "--dim", "8",
        "--batch-size", "8", "-q", "--epochs", "1"])  # fmt: skip
    assert res.exit_code == 0, res.output
    elsewhere = tmp_path / "elsewhere"
    shutil.move(run / "epoch-1", elsewhere)
    (run / "epoch-1").symlink_to(elsewhere, target_is_directory=True)
    task = tmp_path / "t.txt"
    lines = [f"tr\t{'x' if i % 2 else 'y'}\ta b c {i}" for i in range(12)]
    task.write_text("\n".join([*lines, "te\tx\ta b", "te\ty\tc d"]) + "\n", encoding="utf-8")
    store = tmp_path / "r.sqlite"
    res = CliRunner().invoke(app, ["run", "-e", f"{run}@epoch-1", "-t", str(task), "--results",
                                   str(store), "--baselines", "none", "-q"])  # fmt: skip
    assert res.exit_code == 1, res.output
    errors = [line for line in res.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "'epoch-1/encoder.safetensors'" in errors[0], errors
    assert "outside" in errors[0] and "Traceback" not in res.output
    if store.exists():
        assert sqlite3.connect(store).execute("SELECT COUNT(*) FROM results").fetchone() == (0,)
