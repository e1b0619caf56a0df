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
    lines = capsys.readouterr().err.strip().splitlines()
    errors = [line for line in lines if line.startswith("error:")]
    assert "Traceback" not in "\n".join(lines)
    return code, errors if code else lines


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


TEACHER = """
import numpy as np

def encode(sentences):
    out = np.zeros((len(sentences), 6), dtype=np.float32)
    for i, s in enumerate(sentences):
        for w in s.split():
            out[i, sum(map(ord, w)) % 6] += 1.0
    return out
"""


def _map_encoder_args(tmp_path: Path) -> tuple[list[str], Path]:
    import numpy as np

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
    return args, run


def test_a_planted_teacher_partial_link_is_refused_on_resume(tmp_path, monkeypatch, capsys):
    args, run = _map_encoder_args(tmp_path)
    code, err = run_cli(monkeypatch, capsys, *args, "--epochs", "1")
    assert code == 0, err
    teacher = next(run.glob("teacher-*.f32"))
    teacher.unlink()  # as after a run killed while encoding
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    (run / f"{teacher.name}.partial").symlink_to(victim)
    epochs = sorted(p.name for p in run.glob("epoch-*"))
    code, err = run_cli(monkeypatch, capsys, *args, "--epochs", "2")
    assert code == 1 and len(err) == 1, err
    assert ".partial" in err[0] and "link" in err[0]
    assert victim.read_bytes() == b"precious"
    assert sorted(p.name for p in run.glob("epoch-*")) == epochs  # nothing lost


def test_a_planted_teacher_file_link_is_refused(tmp_path, monkeypatch, capsys):
    """The complete teacher file was trusted on its size: a link to a file of that size
    elsewhere would be read as the teacher's vectors."""
    args, run = _map_encoder_args(tmp_path)
    code, err = run_cli(monkeypatch, capsys, *args, "--epochs", "1")
    assert code == 0, err
    teacher = next(run.glob("teacher-*.f32"))
    elsewhere = tmp_path / "elsewhere.f32"
    elsewhere.write_bytes(bytes(teacher.stat().st_size))
    teacher.unlink()
    teacher.symlink_to(elsewhere)
    code, err = run_cli(monkeypatch, capsys, *args, "--epochs", "2")
    assert code == 1 and len(err) == 1 and "symbolic link" in err[0], err


def test_a_pairs_link_is_refused_as_a_link(tmp_path, monkeypatch, capsys):
    args, run = _map_encoder_args(tmp_path)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep").write_text("keep")
    run.mkdir()
    (run / ".pairs").symlink_to(victim, target_is_directory=True)
    code, err = run_cli(monkeypatch, capsys, *args, "--epochs", "1")
    assert code == 1 and len(err) == 1, err
    assert ".pairs" in err[0] and "link" in err[0] and "File exists" not in err[0]
    assert [p.name for p in victim.iterdir()] == ["keep"]


TASK = [f"tr\t{'a' if i % 2 else 'b'}\tsentence number {i} here" for i in range(20)] + [
    "va\ta\tdev sentence one",
    "va\tb\tdev sentence two",
    "te\ta\ttest sentence one",
    "te\tb\ttest sentence two",
]


@pytest.mark.parametrize(
    "planted",
    [
        ["CREATE UNIQUE INDEX ix ON results(seed)"],
        ["CREATE INDEX ix2 ON predictions(dtype)"],
        [  # the results table made again without its primary key: REPLACE keeps duplicates
            "ALTER TABLE results RENAME TO old",
            "CREATE TABLE results AS SELECT * FROM old",
            "DROP TABLE old",
        ],
    ],
    ids=["unique-index", "index", "no-primary-key"],
)
def test_a_store_whose_schema_differs_is_refused_and_keeps_its_rows(
    tmp_path, monkeypatch, capsys, planted
):
    import sqlite3

    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.txt").write_text("\n".join(TASK) + "\n", encoding="utf-8")
    args = ["run", "-t", "t.txt", "--results", "r.sqlite", "--cache-dir", "cache", "-q"]
    code, err = run_cli(monkeypatch, capsys, *args, "--baselines", "none")
    assert code == 0, err
    db = sqlite3.connect("r.sqlite")
    for sql in planted:
        db.execute(sql)
    db.commit()
    rows = db.execute("SELECT * FROM results ORDER BY key").fetchall()
    preds = db.execute("SELECT * FROM predictions ORDER BY key").fetchall()
    db.close()
    code, err = run_cli(monkeypatch, capsys, *args, "--baselines", "all", "--seeds", "2")
    assert code == 1 and len(err) == 1, err
    assert "r.sqlite: holds" in err[0] and "refused" in err[0]
    db = sqlite3.connect("r.sqlite")
    assert db.execute("SELECT * FROM results ORDER BY key").fetchall() == rows
    assert db.execute("SELECT * FROM predictions ORDER BY key").fetchall() == preds
    db.close()


@pytest.mark.parametrize("linked", ["data", "metadata", "folder"])
def test_a_dnc_suite_that_links_out_is_refused(tmp_path, monkeypatch, capsys, linked):
    import shutil

    from sentprobe.datasets import resolve_tasks
    from sentprobe.errors import DataError

    suite = write_release(tmp_path / "suite")
    victim = tmp_path / "victim"
    victim.mkdir()
    if linked == "folder":
        shutil.move(suite / "ACCEPTABILITY", victim / "ACCEPTABILITY")
        (suite / "ACCEPTABILITY").symlink_to(victim / "ACCEPTABILITY")
        named = "ACCEPTABILITY"
    else:
        name = f"acceptability-eos_{linked}.json"
        shutil.move(suite / "ACCEPTABILITY" / name, victim / "other.txt")
        (suite / "ACCEPTABILITY" / name).symlink_to(victim / "other.txt")
        named = name
    with pytest.raises(DataError, match="outside") as e:
        resolve_tasks(str(suite))
    assert named in str(e.value)
    store, cache = str(tmp_path / "r.sqlite"), str(tmp_path / "c")
    code, err = run_cli(
        monkeypatch, capsys, "run", "-t", str(suite), "--results", store, "--cache-dir", cache
    )
    assert code == 1 and len(err) == 1 and "outside" in err[0], err
    assert not (tmp_path / "r.sqlite").exists()


def test_a_fifo_vocab_in_a_run_folder_is_refused_not_waited_on(tmp_path):
    """``-e runs/f`` with ``vocab.json`` a FIFO hung (nothing ever writes to it): refused in
    one line, in a child process so that a hang fails the test instead of stopping it."""
    import subprocess

    pairs = tmp_path / "pairs.tsv"
    words = ["a", "b", "c", "d", "e"]
    rows = [f"{words[i % 5]} {words[i % 3]}\t{words[i % 4]} {words[i % 2]}" for i in range(40)]
    pairs.write_text("\n".join(rows) + "\n", encoding="utf-8")
    run = tmp_path / "f"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    cli = [sys.executable, "-m", "sentprobe"]
    subprocess.run([*cli, "train", "--arch", "cnn-max", "--objective", "translation", "--data",
                    str(pairs), "-o", str(run), "--vectors", "none", "--preset", "demo",
                    "--dim", "8", "--batch-size", "8", "-q", "--epochs", "1"],
                   env=env, check=True, capture_output=True, timeout=300)  # fmt: skip
    (run / "vocab.json").unlink()
    os.mkfifo(run / "vocab.json")
    task = tmp_path / "t.txt"
    task.write_text("\n".join(TASK) + "\n", encoding="utf-8")
    store = tmp_path / "r.sqlite"
    res = subprocess.run([*cli, "run", "-e", str(run), "-t", str(task), "--results", str(store),
                          "--cache-dir", str(tmp_path / "c"), "--baselines", "none", "-q"],
                         env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    errors = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert res.returncode == 1 and len(errors) == 1, res.stderr
    assert "vocab.json" in errors[0] and "FIFO" in errors[0]
    assert not store.exists() or _rows(store) == 0


def _rows(store: Path) -> int:
    import sqlite3

    with sqlite3.connect(store) as db:
        return db.execute("SELECT COUNT(*) FROM results").fetchone()[0]


@pytest.mark.parametrize("fmt", ["parquet", "hf"])
def test_an_export_folder_keeps_the_umasks_permissions(tmp_path, fmt):
    """``export`` made its folder with mkdtemp's 0700 (drwx------ under umask 0022)."""
    from sentprobe.datasets import resolve_tasks
    from sentprobe.datasets.export import export_tasks

    (tmp_path / "t.txt").write_text("\n".join(TASK) + "\n", encoding="utf-8")
    old = os.umask(0o022)
    try:
        out = export_tasks(resolve_tasks(str(tmp_path / "t.txt")), tmp_path / "out", fmt)
    finally:
        os.umask(old)
    assert oct(out.stat().st_mode & 0o777) == oct(0o755)
    assert all(p.stat().st_mode & 0o077 == 0o055 for p in out.rglob("*") if p.is_dir())
    assert all(p.stat().st_mode & 0o077 == 0o044 for p in out.rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def one_result(tmp_path_factory) -> Path:
    """A folder with ``t.txt`` and ``r.sqlite`` holding one result of it."""
    from typer.testing import CliRunner

    from sentprobe.cli.main import app

    folder = tmp_path_factory.mktemp("one-result")
    (folder / "t.txt").write_text("\n".join(TASK) + "\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["run", "-t", str(folder / "t.txt"), "--results",
                                   str(folder / "r.sqlite"), "--cache-dir", str(folder / "c"),
                                   "-q", "--baselines", "none"])  # fmt: skip
    assert res.exit_code == 0, res.output
    return folder


@pytest.mark.parametrize(
    ("column", "value", "said"),
    [
        ("seed", "'x'", "not an integer"),
        ("extra", "'" + "[" * 100_000 + "]" * 100_000 + "'", "nested deeper"),
        ("extra", """'{"run_config": [1, 2]}'""", "run_config"),
        ("config", "'[1]'", "not a dict"),
        ("test_score", "9e999", "not a finite number"),
        ("test_score", "1.5", "outside 0..1"),
        ("n_test", "-3", "below 0"),
        ("extra", """'{"run_config": {"command": "run"}}'""", "run_config"),
    ],
    ids=[
        "seed",
        "deep-extra",
        "run-config-list",
        "config-list",
        "inf",
        "score",
        "count",
        "run-config-keys",
    ],
)
def test_a_crafted_stored_value_is_one_line_naming_store_and_row(
    one_result, tmp_path, monkeypatch, capsys, column, value, said
):
    import shutil
    import sqlite3

    for name in ("r.sqlite", "t.txt"):
        shutil.copy(one_result / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    args = ["run", "-t", "t.txt", "--results", "r.sqlite", "--cache-dir", "cache", "-q",
            "--baselines", "none"]  # fmt: skip
    with sqlite3.connect("r.sqlite") as db:
        (key,) = db.execute("SELECT key FROM results").fetchone()
        db.execute(f"UPDATE results SET {column} = {value}")
    for command in (["report", "--results", "r.sqlite"],
                    ["report", "--results", "r.sqlite", "--provenance"], args):  # fmt: skip
        code, err = run_cli(monkeypatch, capsys, *command)
        assert code == 1 and len(err) == 1, (command, err)
        assert "r.sqlite" in err[0] and key in err[0] and column in err[0] and said in err[0]
        assert "bug" not in err[0]


@pytest.mark.parametrize("bad", [float("nan"), float("inf")], ids=["nan", "inf"])
def test_a_cache_shard_with_non_finite_vectors_is_set_aside_and_recomputed(tmp_path, bad):
    """NaN in a shared shard with a matching checksum was "unexpected ValueError", inf "this
    is a bug", on every rerun: such a shard is set aside like a damaged one and its
    sentences encoded again."""
    import hashlib
    import json

    import numpy as np

    from sentprobe.encoders.cache import CacheWarning, EmbeddingCache
    from sentprobe.encoders.custom import CallableEncoder
    from sentprobe.encoders.shards import MAGIC, fingerprint_dirname

    def encoder() -> CallableEncoder:
        ones = lambda s: np.ones((len(s), 4), dtype=np.float32)  # noqa: E731
        return CallableEncoder(ones, name="ones", fingerprint="ones-v1")

    sentences = ["one sentence .", "another one ."]
    root = tmp_path / "cache"
    EmbeddingCache(root).encode(encoder(), sentences, progress=False)
    shard = next((root / fingerprint_dirname("ones-v1")).glob("*.shard"))
    data = shard.read_bytes()[len(MAGIC) :]
    line, rest = data.split(b"\n", 1)
    header = json.loads(line)
    size = header["n"] * header["width"] * 4
    vectors = np.frombuffer(rest[-size:], dtype=np.float32).copy()
    vectors[1] = bad
    header["vectors_sha256"] = hashlib.sha256(vectors.tobytes()).hexdigest()
    shard.write_bytes(
        MAGIC + json.dumps(header).encode() + b"\n" + rest[:-size] + vectors.tobytes()
    )
    saved = shard.read_bytes()
    with pytest.warns(CacheWarning, match="NaN or infinite"):  # read whole, or streamed
        got = EmbeddingCache(root).vectors(encoder(), sentences, progress=False).take(np.arange(2))
    assert np.asarray(got).tolist() == np.ones((2, 4)).tolist()
    assert shard.with_name(shard.name + ".damaged").is_file()
    for old in shard.parent.glob("*.shard"):
        old.unlink()
    shard.write_bytes(saved)
    with pytest.warns(CacheWarning, match="NaN or infinite"):
        got = EmbeddingCache(root).encode(encoder(), sentences, progress=False)
    assert np.asarray(got).tolist() == np.ones((2, 4)).tolist()
    import warnings

    with warnings.catch_warnings():  # the rerun does not meet it again
        warnings.simplefilter("error", CacheWarning)
        got = EmbeddingCache(root).encode(encoder(), sentences, progress=False)
    assert np.asarray(got).tolist() == np.ones((2, 4)).tolist()


class _FakeHub:
    """Records what ``push`` would upload."""

    uploaded: dict[str, bytes] = {}

    def create_repo(self, repo_id, **kwargs):
        pass

    def upload_folder(self, *, folder_path, repo_id, repo_type, commit_message):
        root = Path(folder_path)
        _FakeHub.uploaded = {
            p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()
        }
        return type("Commit", (), {"commit_url": f"https://huggingface.co/datasets/{repo_id}"})


def _exported(tmp_path: Path) -> Path:
    from sentprobe.datasets import resolve_tasks
    from sentprobe.datasets.export import export_tasks

    (tmp_path / "t.txt").write_text("\n".join(TASK) + "\n", encoding="utf-8")
    return export_tasks(resolve_tasks(str(tmp_path / "t.txt")), tmp_path / "out", "parquet")


def test_push_refuses_a_link_out_of_the_folder(tmp_path, monkeypatch, capsys):
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "HfApi", _FakeHub)
    _FakeHub.uploaded = {}
    out = _exported(tmp_path)
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "id_rsa").write_text("PRIVATE KEY")
    (out / "id_rsa").symlink_to(tmp_path / "secret" / "id_rsa")
    code, err = run_cli(monkeypatch, capsys, "push", str(out), "me/x")
    assert code == 1 and len(err) == 1 and "id_rsa" in err[0] and "link" in err[0], err
    assert _FakeHub.uploaded == {}


def test_push_sends_no_absolute_local_path(tmp_path, monkeypatch, capsys):
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "HfApi", _FakeHub)
    (tmp_path / "t.txt").write_text("\n".join(TASK) + "\n", encoding="utf-8")
    code, err = run_cli(monkeypatch, capsys, "push", str(tmp_path / "t.txt"), "me/x")
    assert code == 0, err
    meta = [data for name, data in _FakeHub.uploaded.items() if name.endswith("sentprobe.json")]
    assert meta and all(str(tmp_path).encode() not in data for data in meta)
    assert all(str(tmp_path).encode() not in data for data in _FakeHub.uploaded.values())


def test_a_card_config_cannot_name_a_file_outside_a_local_hf_folder(tmp_path, monkeypatch, capsys):
    import json

    out = _exported(tmp_path)
    config = next(p.name for p in out.iterdir() if p.is_dir())
    card = (out / "README.md").read_text(encoding="utf-8")
    (out / "README.md").write_text(card.replace(f"config_name: {config}", "config_name: .."))
    planted = json.loads((out / config / "sentprobe.json").read_text())
    (tmp_path / "sentprobe.json").write_text(json.dumps({**planted, "name": "PLANTED"}))
    from sentprobe.datasets import resolve_tasks
    from sentprobe.errors import SentprobeError

    with pytest.raises(SentprobeError) as e:
        tasks = resolve_tasks(f"hf:{out}:..")
        assert "PLANTED" not in [t.name for t in tasks]  # read from ../sentprobe.json
    assert "\n" not in str(e.value) and "PLANTED" not in str(e.value)


def _within(seconds: float, fifo: Path, call):
    """``call()``'s result or exception, failing the test if it waits on ``fifo`` longer
    than ``seconds`` (the FIFO is then opened and closed, so the waiting thread ends)."""
    import threading

    box: dict = {}

    def target():
        try:
            box["value"] = call()
        except BaseException as e:  # noqa: BLE001 - handed to the test
            box["error"] = e

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        thread.join(5)
        pytest.fail(f"waited on the FIFO {fifo}")
    return box


def test_a_fifo_cache_meta_is_refused_not_waited_on(tmp_path):
    import numpy as np

    from sentprobe.encoders.cache import EmbeddingCache
    from sentprobe.encoders.custom import CallableEncoder
    from sentprobe.encoders.shards import fingerprint_dirname
    from sentprobe.errors import DataError

    root = tmp_path / "cache"
    folder = root / fingerprint_dirname("ones-v1")
    folder.mkdir(parents=True)
    os.mkfifo(folder / "meta.json")
    encoder = CallableEncoder(
        lambda s: np.ones((len(s), 4), dtype=np.float32), name="ones", fingerprint="ones-v1"
    )
    cache = EmbeddingCache(root)
    box = _within(10, folder / "meta.json", lambda: cache.encode(encoder, ["a ."], progress=False))
    assert isinstance(box.get("error"), DataError), box
    assert "FIFO" in str(box["error"]) and "\n" not in str(box["error"])


@pytest.mark.parametrize("name", ["manifest.json", "sentprobe.json"])
def test_a_suite_file_linking_out_is_refused(tmp_path, name):
    """A suite's ``manifest.json`` or an exported task's ``sentprobe.json`` that links out of
    its folder is refused in one line, not read."""
    from sentprobe.datasets import resolve_tasks
    from sentprobe.errors import DataError

    if name == "manifest.json":
        suite = tmp_path / "suite"
        suite.mkdir()
        (suite / "t.txt").write_text("\n".join(TASK) + "\n", encoding="utf-8")
        manifest = {"tasks": {"t": {"file": "t.txt"}}}
        (tmp_path / "elsewhere.json").write_text(__import__("json").dumps(manifest))
        (suite / name).symlink_to(tmp_path / "elsewhere.json")
    else:
        suite = _exported(tmp_path)
        config = next(p for p in suite.iterdir() if p.is_dir())
        (config / name).rename(tmp_path / "elsewhere.json")
        (config / name).symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(DataError, match="outside") as e:
        resolve_tasks(str(suite))
    assert name in str(e.value) and "\n" not in str(e.value)


def test_a_newline_in_an_encoder_name_does_not_split_the_provenance_heading(
    one_result, tmp_path, monkeypatch, capsys
):
    import shutil
    import sqlite3

    shutil.copy(one_result / "r.sqlite", tmp_path / "r.sqlite")
    with sqlite3.connect(tmp_path / "r.sqlite") as db:
        db.execute("UPDATE results SET encoder = 'enc' || char(10) || '# injected'")
    store = str(tmp_path / "r.sqlite")
    monkeypatch.setattr(sys, "argv", ["sentprobe", "report", "--results", store, "--provenance"])
    main()
    out = capsys.readouterr().out
    assert "enc\\n# injected" in out
    assert not [line for line in out.splitlines() if line.startswith("# injected")]
