"""The file boundary (issue 47), by the cases planted in the issue: a link where sentprobe
writes or resumes, a folder link out of an output folder, a store whose schema is not
sentprobe's, a suite that links out, a FIFO where a file is read. Each ends in one line, with
nothing written outside the folder named and nothing lost."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import pytest

from sentprobe.cli.main import main
from sentprobe.datasets import download as dl
from sentprobe.datasets.download import git_blob_id, published_suites

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dnc_fixture import write_release  # noqa: E402


def run_cli(monkeypatch, capsys, *args: str) -> tuple[int, list[str]]:
    """(exit code, stderr lines) of ``sentprobe ARGS``."""
    monkeypatch.setattr(sys, "argv", ["sentprobe", *args])
    code = 0
    try:
        main()
    except SystemExit as e:
        code = int(e.code or 0)
    return code, capsys.readouterr().err.strip().splitlines()


@pytest.fixture
def dnc_mirror(tmp_path, monkeypatch) -> Path:
    tree = write_release(tmp_path / "mirror")
    files = {
        p.relative_to(tree).as_posix(): git_blob_id(p)[0]
        for p in sorted(tree.rglob("*"))
        if p.is_file()
    }
    suite = dataclasses.replace(published_suites()["dnc"], files=files, sizes={"items": 110})
    monkeypatch.setattr(dl, "published_suites", lambda: {"dnc": suite})
    return tree


def test_a_planted_part_link_is_refused_and_its_target_kept(
    dnc_mirror, tmp_path, monkeypatch, capsys
):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("precious\n")
    out = tmp_path / "dl1"
    (out / "NLI").mkdir(parents=True)
    part = out / "NLI" / "nli-negation_data.json.part"
    part.symlink_to(victim / "precious.txt")
    code, err = run_cli(monkeypatch, capsys, "download", "dnc", "--mirror", str(dnc_mirror),
                        "-o", str(out))  # fmt: skip
    assert code == 1 and len(err) == 1, err
    assert "nli-negation_data.json.part" in err[0] and "link" in err[0]
    assert (victim / "precious.txt").read_text() == "precious\n"
    assert part.is_symlink()  # left for the user to look at
    assert not (out / "NLI" / "nli-negation_data.json").exists()


def test_a_planted_part_link_inside_the_folder_is_refused_too(
    dnc_mirror, tmp_path, monkeypatch, capsys
):
    out = tmp_path / "dl1"
    (out / "NLI").mkdir(parents=True)
    (out / "keep.txt").write_text("keep\n")
    (out / "NLI" / "nli-negation_data.json.part").symlink_to(out / "keep.txt")
    code, err = run_cli(monkeypatch, capsys, "download", "dnc", "--mirror", str(dnc_mirror),
                        "-o", str(out))  # fmt: skip
    assert code == 1 and len(err) == 1 and "symbolic link" in err[0], err
    assert (out / "keep.txt").read_text() == "keep\n"


def test_a_folder_link_out_of_the_download_folder_is_refused(
    dnc_mirror, tmp_path, monkeypatch, capsys
):
    victim = tmp_path / "victim2"
    victim.mkdir()
    out = tmp_path / "dl2"
    out.mkdir()
    (out / "NLI").symlink_to(victim)
    code, err = run_cli(monkeypatch, capsys, "download", "dnc", "--mirror", str(dnc_mirror),
                        "-o", str(out))  # fmt: skip
    assert code == 1 and len(err) == 1, err
    assert "NLI" in err[0] and "outside" in err[0]
    assert list(victim.iterdir()) == []
    assert not (out / "ACCEPTABILITY").exists()  # refused before anything was fetched


def test_a_clean_download_still_works(dnc_mirror, tmp_path, monkeypatch, capsys):
    out = tmp_path / "dl"
    code, err = run_cli(monkeypatch, capsys, "download", "dnc", "--mirror", str(dnc_mirror),
                        "-o", str(out))  # fmt: skip
    assert code == 0, err
    assert "6 files verified" in "\n".join(err)
    assert not [p for p in out.rglob("*") if p.name.endswith(".part")]
    assert oct(os.stat(out / "NLI").st_mode & 0o777) == oct(0o777 & ~_umask())


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
