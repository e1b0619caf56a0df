"""A suite from someone else cannot make sentprobe read or write outside its folder: a
manifest entry, a task file or a split file naming ``../..``, an absolute path or a
symbolic link that leads out is refused with one line, and the file outside is never read;
an annotation folder's chunk list cannot make a rebuild read or delete files elsewhere
(docs/security.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gen_synth import CountingAnnotator
from sentprobe.annotation.store import annotate_corpus, read_annotated
from sentprobe.cli.main import app
from sentprobe.datasets.loaders import load_tasks
from sentprobe.errors import DataError

LINES = [
    f"{s}\t{'ab'[i % 2]}\tsentence number {i} ."
    for s, n in (("tr", 8), ("te", 4))
    for i in range(n)
]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A valid SentEval file outside every suite: loading it would succeed."""
    secret = tmp_path / "elsewhere" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    return secret


def _manifest_suite(tmp_path: Path, file: str) -> Path:
    suite = tmp_path / "shared" / "suite"
    suite.mkdir(parents=True)
    manifest = {"suite": "x", "tasks": {"T": {"file": file, "labels": ["a", "b"]}}}
    (suite / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return suite


@pytest.mark.parametrize("kind", ["dotdot", "absolute", "symlink"])
def test_manifest_entry_outside_the_suite_is_refused(tmp_path, outside, kind):
    names = {"dotdot": "../../elsewhere/secret.txt", "absolute": str(outside), "symlink": "t.txt"}
    suite = _manifest_suite(tmp_path, names[kind])
    if kind == "symlink":
        (suite / "t.txt").symlink_to(outside)
    with pytest.raises(DataError, match="outside") as info:
        load_tasks(suite)
    assert str(suite / "manifest.json") in str(info.value) and "\n" not in str(info.value)


def test_symlinked_task_files_leading_out_are_refused(tmp_path, outside):
    senteval = tmp_path / "senteval"
    senteval.mkdir()
    (senteval / "past_present.txt").symlink_to(outside)
    xprobe = tmp_path / "xprobe" / "fr" / "Tense"
    xprobe.mkdir(parents=True)
    (xprobe / "te.txt").write_text("une phrase .\ta\n", encoding="utf-8")
    (xprobe / "tr.txt").symlink_to(outside)
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "Tense").symlink_to(xprobe, target_is_directory=True)
    for suite in (senteval, tmp_path / "xprobe", linked):
        with pytest.raises(DataError, match="outside"):
            load_tasks(suite)
    # inside the folder, a link is fine; a file the user names directly is read as named
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / "real.txt").write_text("\n".join(LINES) + "\n", encoding="utf-8")
    (inner / "past_present.txt").symlink_to(inner / "real.txt")
    assert len(load_tasks(inner)) == 2
    assert sorted(load_tasks(outside)[0].splits["train"].labels) == ["a"] * 4 + ["b"] * 4


def test_cli_refuses_in_one_line(tmp_path, outside):
    suite = _manifest_suite(tmp_path, "../../elsewhere/secret.txt")
    results = tmp_path / "results.sqlite"
    args = ["run", "-t", str(suite), "--baselines", "majority", "--results", str(results)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 1 and "Traceback" not in res.output
    errors = [line for line in res.output.splitlines() if "outside" in line]
    assert len(errors) == 1 and str(suite / "manifest.json") in errors[0], res.output
    assert not results.exists()


SENTS = [f"sentence {i} here ." for i in range(12)]


@pytest.mark.parametrize("name", ["../victim.txt", "/tmp/../VICTIM", "chunk-000000.jsonl.gz"])
def test_annotation_chunks_outside_the_folder_are_never_read_or_deleted(tmp_path, name):
    out = tmp_path / "suite.annotations"
    annotate_corpus(SENTS, out, CountingAnnotator(), chunk_size=5, progress=False)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n", encoding="utf-8")
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    if name.startswith("chunk-"):  # a chunk file that is a link out
        (out / name).unlink()
        (out / name).symlink_to(victim)
    else:
        manifest["chunks"][0]["file"] = name.replace("/tmp/..", str(tmp_path)).replace(
            "VICTIM", "victim.txt"
        )
    manifest["chunks"][0]["input_sha256"] = "changed"  # a rebuild would delete it as stale
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(DataError, match="chunk|outside"):
        list(read_annotated(out))
    with pytest.raises(DataError, match="chunk|outside"):
        annotate_corpus(SENTS, out, CountingAnnotator(), chunk_size=5, progress=False)
    assert victim.read_text(encoding="utf-8") == "keep me\n"
