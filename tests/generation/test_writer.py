import json
from pathlib import Path

from sentprobe.generation import BigramShift, SentenceLength, build_manifest, write_suite

SIZES = {"train": 60, "dev": 12, "test": 12}


def build(corpus, out: Path, seed: int) -> Path:
    tasks = [
        SentenceLength().generate(corpus, SIZES, seed),
        BigramShift().generate(corpus, SIZES, seed),
    ]
    return write_suite(out, tasks, build_manifest(tasks, suite="t", language="en"))


def test_write_suite_layout_and_manifest(corpus, tmp_path):
    manifest_path = build(corpus, tmp_path / "suite", seed=1)
    out = manifest_path.parent
    assert sorted(p.name for p in out.iterdir()) == [
        "bigram_shift.txt",
        "manifest.json",
        "sentence_length.txt",
    ]  # no temp files left
    manifest = json.loads(manifest_path.read_text())
    entry = manifest["tasks"]["SentLen"]
    assert entry["file"] == "sentence_length.txt" and entry["labels"] == list("012345")
    assert entry["counts"]["train"] == {str(i): 10 for i in range(6)}
    lines = (out / "sentence_length.txt").read_text().splitlines()
    assert len(lines) == 84
    assert [ln.split("\t")[0] for ln in lines] == ["tr"] * 60 + ["va"] * 12 + ["te"] * 12
    assert all(len(ln.split("\t")) == 3 for ln in lines)


def test_same_seed_gives_byte_identical_files(corpus, tmp_path):
    a = build(corpus, tmp_path / "a", seed=3).parent
    b = build(corpus, tmp_path / "b", seed=3).parent
    for name in ("sentence_length.txt", "bigram_shift.txt", "manifest.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes()
