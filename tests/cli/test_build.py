"""``sentprobe build`` from gold CoNLL-U: tasks, manifest, quality report; nothing on failure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from gen_treebank import write_treebank

ENV = {**os.environ, "HF_HUB_OFFLINE": "1"}


def build(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sentprobe", "build", "-q", *args],
        cwd=cwd,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_build_from_gold_conllu_is_deterministic(tmp_path, ewt_subset):
    corpus = ewt_subset(tmp_path / "ewt.conllu", n=3000)
    args = ["-c", str(corpus), "--tasks", "SentLen,BShift,Tense", "--sizes", "60,12,12"]
    first = build(*args, "-o", "suite1", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    second = build(*args, "-o", "suite2", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    for name in ("sentence_length.txt", "bigram_shift.txt", "past_present.txt"):
        a, b = (tmp_path / "suite1" / name).read_bytes(), (tmp_path / "suite2" / name).read_bytes()
        assert a == b and len(a.splitlines()) == 84
    manifest = json.loads((tmp_path / "suite1" / "manifest.json").read_text())
    assert set(manifest["tasks"]) == {"SentLen", "BShift", "Tense"}
    assert manifest["tasks"]["Tense"]["counts"]["train"] == {"PAST": 30, "PRES": 30}
    assert "Quality report" in (tmp_path / "suite1" / "QUALITY.md").read_text()


def test_build_that_cannot_be_filled_writes_nothing(tmp_path, ewt_subset):
    corpus = ewt_subset(tmp_path / "ewt.conllu", n=500)
    res = build(
        "-c",
        str(corpus),
        "-o",
        "suite",
        "--tasks",
        "SentLen,WC",
        "--sizes",
        "5000,1000,1000",
        cwd=tmp_path,
    )
    assert res.returncode == 1
    assert "nothing was written" in res.stderr and "WC" in res.stderr
    assert not (tmp_path / "suite").exists()


# ---------------------------------------------------------------------------- --sizes auto

XPROBE_NINE = ["SentLen", "WC", "TreeDepth", "BShift", "Tense", "SubjNum", "ObjNum", "SOMO",
               "CoordInv"]  # fmt: skip


def run_cli(monkeypatch, capsys, *args: str) -> tuple[int, str]:
    """``sentprobe build`` in this process (fast); returns exit code and stderr."""
    from sentprobe.cli.main import main

    monkeypatch.setattr(sys, "argv", ["sentprobe", "build", "-q", *args])
    try:
        main()
        code = 0
    except SystemExit as e:
        code = int(e.code or 0)
    return code, capsys.readouterr().err


def test_auto_sizes_from_two_conllu_files_give_all_nine_tasks(tmp_path, monkeypatch, capsys):
    from sentprobe.analysis import audit_suite
    from sentprobe.datasets.loaders import load_tasks

    dev, test = write_treebank(tmp_path / "tb")
    out = tmp_path / "suite"
    args = ["-c", str(dev), "-c", str(test), "--lang", "xx", "-o", str(out)]
    code, err = run_cli(monkeypatch, capsys, *args, "--sizes", "auto:200,20,20")
    assert code == 0, err
    manifest = json.loads((out / "manifest.json").read_text())
    assert list(manifest["tasks"]) == XPROBE_NINE  # X-Probe's nine, no TopConst
    assert manifest["source"] == [str(dev), str(test)]
    assert manifest["sizes"].startswith("auto (largest balanced sizes, 10:1:1, at most 200/20/20")
    assert manifest["bands"]["tier"] == "small corpus" and manifest["bands"]["lexical"] == [1, 5000]
    for name, entry in manifest["tasks"].items():
        sizes = entry["params"]["sizes"]
        k = sizes["units"]
        for split, n in (("train", 10 * k), ("dev", k), ("test", k)):
            assert set(entry["counts"][split].values()) == {n}, (name, split)  # balanced
        assert 10 * k * len(entry["labels"]) <= 200
    assert manifest["tasks"]["Tense"]["params"]["freq_band"] == [1, 5000]
    assert sorted(p.name for p in (tmp_path / "suite.annotations").iterdir()) == [
        "01-xx_synth-ud-part1",
        "02-xx_synth-ud-part2",
    ]
    quality = (out / "QUALITY.md").read_text()
    assert "WC relaxed: first_rank 2001 ->" in quality
    tasks = load_tasks(out)  # a built X-Probe suite loads through its manifest
    assert [t.metadata.paper_name for t in tasks] == XPROBE_NINE
    assert {t.metadata.language for t in tasks} == {"xx"} and tasks[0].name == "suite/SentLen"
    report = audit_suite(out, baselines=False)
    assert report.counts()["error"] == 0 and len(report.tasks) == 9


def test_explicit_settings_win_and_bad_ones_are_clean_errors(tmp_path, monkeypatch, capsys):
    (corpus,) = write_treebank(tmp_path / "tb", parts=1)
    base = ["-c", str(corpus), "--lang", "xx", "--tasks", "Tense,TreeDepth"]
    out = tmp_path / "s"
    code, err = run_cli(
        monkeypatch,
        capsys,
        *base,
        "-o",
        str(out),
        "--sizes",
        "auto:200,20,20",
        "--freq-band",
        "2,4000",
        "--set",
        "TreeDepth.depths=4,6",
    )
    assert code == 0, err
    tasks = json.loads((out / "manifest.json").read_text())["tasks"]
    assert tasks["Tense"]["params"]["freq_band"] == [2, 4000]
    assert tasks["TreeDepth"]["labels"] == ["4", "5", "6"]
    for bad, message in (
        (["--set", "TreeDepth"], "TASK.PARAM=VALUE"),
        (["--set", "Nope.x=1"], "unknown task 'Nope'"),
        (["--set", "WC.targets=5"], "WC has no parameter 'targets'"),
        (["--set", "WC.n_targets=many"], "expected a value like 1000"),
        (["--sizes", "auto:1,2"], "three integers"),
        (["--freq-band", "9,1"], "LOW <= HIGH"),
        (["-c", str(tmp_path / "missing.conllu")], "no such corpus file"),
    ):
        code, err = run_cli(monkeypatch, capsys, *base, "-o", str(tmp_path / "x"), *bad)
        assert code == 1 and message in err and "Traceback" not in err, (bad, err)
    assert not (tmp_path / "x").exists()


def test_gold_treebank_dev_and_test_give_all_nine_tasks(tmp_path, shared_data, monkeypatch, capsys):
    """French GSD dev+test (~0.8k sentences) fills every X-Probe task; Russian GSD, whose 19
    single-conjunction coordinations cannot make one balanced CoordInv unit, builds the other
    eight with --skip-failed and says why CoordInv is missing."""
    from sentprobe.analysis import audit_suite

    ud = shared_data / "ud" / "ru_gsd"
    ru = ["-c", str(ud / "ru_gsd-ud-dev.conllu.gz"), "-c", str(ud / "ru_gsd-ud-test.conllu.gz")]
    code, err = run_cli(
        monkeypatch, capsys, *ru, "--lang", "ru", "--sizes", "auto", "-o", str(tmp_path / "ru"),
        "--skip-failed",
    )  # fmt: skip
    assert code == 0, err
    assert "CoordInv" in err and "qualifying sentences" in err
    ru_tasks = json.loads((tmp_path / "ru" / "manifest.json").read_text())["tasks"]
    assert list(ru_tasks) == [t for t in XPROBE_NINE if t != "CoordInv"]

    ud = shared_data / "ud" / "fr_gsd"
    out = tmp_path / "fr"
    args = ["-c", str(ud / "fr_gsd-ud-dev.conllu.gz"), "-c", str(ud / "fr_gsd-ud-test.conllu.gz")]
    args += ["--lang", "fr", "--sizes", "auto", "-o", str(out)]
    code, err = run_cli(monkeypatch, capsys, *args)
    assert code == 0, err
    manifest = json.loads((out / "manifest.json").read_text())
    assert list(manifest["tasks"]) == XPROBE_NINE
    for entry in manifest["tasks"].values():
        assert entry["params"]["sizes"]["units"] >= 1
    assert (out / "fr" / "past_present" / "te.txt").read_text().count("\t") >= 2
    assert audit_suite(out, baselines=False).counts()["error"] == 0
