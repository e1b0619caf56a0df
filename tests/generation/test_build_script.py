import gzip
import importlib.util
import json
from pathlib import Path

import pytest

from sentprobe.errors import SentprobeError

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "build_sample_suite.py"
spec = importlib.util.spec_from_file_location("build_sample_suite", SCRIPT)
build = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build)


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory, make_corpus):
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for tokens in make_corpus(2000, seed=1):
            f.write(" ".join(tokens) + "\n")
    return path


def run(corpus_file, out, *extra):
    return build.main(
        [
            "--corpus",
            str(corpus_file),
            "--out",
            str(out),
            "--sizes",
            "120,30,30",
            "--wc-per-target",
            "3,1,1",
            "--wc-targets",
            "300",
            "--wc-first-rank",
            "21",
            *extra,
        ]
    )


def test_script_builds_a_reproducible_suite(corpus_file, tmp_path, capsys):
    assert run(corpus_file, tmp_path / "a") == 0
    assert run(corpus_file, tmp_path / "b") == 0
    for name in ("sentence_length.txt", "word_content.txt", "bigram_shift.txt", "manifest.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    manifest = json.loads((tmp_path / "a" / "manifest.json").read_text())
    wc = manifest["generator"]["params"]["WC"]
    assert wc["n_targets"] < 300 and "300 targets requested" in wc["note"]
    assert len(manifest["tasks"]["WC"]["labels"]) == wc["n_targets"]
    assert "using n_targets=" in capsys.readouterr().err


def test_script_reports_unfillable_sizes_and_writes_nothing(corpus_file, tmp_path, capsys):
    out = tmp_path / "c"
    assert run(corpus_file, out, "--sizes", "100000,500,500") == 1
    assert "error: SentLen" in capsys.readouterr().err
    assert not out.exists()


def test_missing_debian_package_gives_install_hint():
    with pytest.raises(SentprobeError, match="apt-get install python3.11-doc"):
        build.package_version("no-such-package-sentprobe")
