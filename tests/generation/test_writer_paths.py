"""Writing a suite into a folder that holds links elsewhere (an existing suite from someone
else, rebuilt in place) writes nothing outside it: a task file or task folder leading out is
refused with one line before anything is written (docs/security.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentprobe.errors import DataError
from sentprobe.generation import BigramShift, SentenceLength, build_manifest
from sentprobe.generation.writer import write_generated_suite

SIZES = {"train": 60, "dev": 12, "test": 12}


def _tasks(corpus):
    return [SentenceLength().generate(corpus, SIZES, 1), BigramShift().generate(corpus, SIZES, 1)]


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize("layout", ["senteval", "xprobe"])
def test_links_out_of_the_suite_are_never_written_through(corpus, tmp_path, layout):
    tasks = _tasks(corpus)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("keep me\n", encoding="utf-8")
    out = tmp_path / "suite"
    out.mkdir()
    if layout == "senteval":  # the second task's file links out: the first is not written
        (out / tasks[1].file).symlink_to(elsewhere / "keep.txt")
    else:
        (out / "en").symlink_to(elsewhere, target_is_directory=True)
    manifest = build_manifest(tasks, suite="t", language="en")
    with pytest.raises(DataError, match="outside") as info:
        write_generated_suite(out, tasks, manifest, layout=layout, lang="en")
    assert "\n" not in str(info.value)
    assert _files(elsewhere) == ["keep.txt"]
    assert (elsewhere / "keep.txt").read_text(encoding="utf-8") == "keep me\n"
    assert not (out / "manifest.json").exists() and not (out / tasks[0].file).exists()
