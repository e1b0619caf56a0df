"""scripts/build_kim_sample.py rebuilds the shipped sample-kim-en byte for byte (needs the
Debian text packages and sample-en's corpus; about a minute: slow)."""

from pathlib import Path

import build_kim_sample as build
import pytest

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "build/sample_en/corpus.txt"


@pytest.mark.slow
@pytest.mark.skipif(not CORPUS.is_file(), reason="sample-en's corpus is not built here")
def test_rebuild_is_byte_identical(tmp_path):
    assert build.main(["--out", str(tmp_path / "k")]) == 0
    for path in sorted(build.DEFAULT_OUT.rglob("*")):
        if path.is_file() and path.name != "NOTICE":
            assert (tmp_path / "k" / path.relative_to(build.DEFAULT_OUT)).read_bytes() == (
                path.read_bytes()
            ), path.name
