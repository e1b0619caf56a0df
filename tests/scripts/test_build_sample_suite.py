"""scripts/build_sample_suite.py on gold CoNLL-U (UD English-EWT from ../shared): every task it
writes is reproducible byte for byte (the target-form sidecar of a lexical task too), and a
corpus too small for the sizes writes nothing."""

import json
from pathlib import Path

import build_sample_suite as build


def run(corpus: Path, work: Path, out: Path, *extra: str) -> int:
    args = ["--corpus", str(corpus), "--work", str(work), "--out", str(out)]
    return build.main([*args, "--quiet", "--wc-first-rank", "101", *extra])


def check_identical(a: Path, b: Path) -> list[str]:
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir())
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    return names


def test_script_builds_a_reproducible_suite(tmp_path, ewt_subset, capsys):
    corpus = ewt_subset(tmp_path / "ewt.conllu", 6000)
    extra = ["--tasks", "SentLen,WC,BShift,TreeDepth,SubjNum,SOMO,CoordInv", "--sizes", "60,12,12"]
    extra += ["--wc-targets", "500", "--wc-per-target", "2,1,1", "--task-sizes", "TreeDepth=48,8,8"]
    assert run(corpus, tmp_path / "work", tmp_path / "a", *extra) == 0
    assert run(corpus, tmp_path / "work", tmp_path / "b", *extra) == 0  # annotations reused
    names = check_identical(tmp_path / "a", tmp_path / "b")
    assert "QUALITY.md" in names and "odd_man_out.txt" in names
    assert "subj_number.forms" in names and "odd_man_out.forms" not in names  # SOMO: no sidecar
    manifest = json.loads((tmp_path / "a" / "manifest.json").read_text())
    subj = manifest["tasks"]["SubjNum"]
    assert subj["forms"] == ["subj_number.forms"] and subj["params"]["bands"]["rule"] == "auto"
    assert subj["params"]["max_form_share"] == 0.1
    assert manifest["suite"] == "sample-en" and manifest["annotator"]
    assert manifest["sizes"]["TreeDepth"] == {"train": 48, "dev": 8, "test": 8}
    depth_counts = manifest["tasks"]["TreeDepth"]["counts"]
    assert sum(depth_counts["train"].values()) == 48 and len(depth_counts["train"]) == 8
    wc = manifest["tasks"]["WC"]
    assert wc["params"]["n_targets"] < 500 and "500 targets requested" in wc["note"]
    assert len(wc["labels"]) == wc["params"]["n_targets"]
    assert "using n_targets=" in capsys.readouterr().err


def test_script_reports_unfillable_sizes_and_writes_nothing(tmp_path, ewt_subset, capsys):
    corpus = ewt_subset(tmp_path / "ewt.conllu", 300)
    out = tmp_path / "c"
    assert (
        run(corpus, tmp_path / "work", out, "--tasks", "SentLen,Tense", "--sizes", "60,12,12") == 1
    )
    err = capsys.readouterr().err
    assert "error: SentLen" in err and "Tense" in err and "nothing was written" in err
    assert not out.exists()


def test_unknown_task_is_an_error(tmp_path, capsys):
    assert build.main(["--tasks", "Nope", "--out", str(tmp_path / "x")]) == 1
    assert "unknown task" in capsys.readouterr().err
