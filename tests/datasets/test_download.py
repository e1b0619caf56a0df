"""``sentprobe download`` offline: small fixtures in each published layout, served by
``file://`` and by a local HTTP server (whole, truncated once, ignoring Range), pinned by their
own blob ids as the real catalog pins the maintainers' files."""

from __future__ import annotations

import dataclasses
import json
import sys
import threading
import zipfile
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from sentprobe.cli.main import main
from sentprobe.datasets import download as dl
from sentprobe.datasets import resolve_tasks
from sentprobe.datasets.download import LOCK, Published, download, git_blob_id, published_suites

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from dnc_fixture import write_release  # noqa: E402

KIM = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "dnc_function_words"


def _senteval_file(path: Path, labels: tuple[str, ...], sizes=(20, 4, 4)) -> None:
    lines = [
        f"{split}\t{labels[i % len(labels)]}\tsentence {split} {i} of {path.stem} ."
        for split, n in zip(("tr", "va", "te"), sizes)
        for i in range(n)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _xprobe_task(folder: Path, labels: tuple[str, ...], sizes=(20, 4, 4)) -> None:
    folder.mkdir(parents=True)
    for short, n in zip(("tr", "va", "te"), sizes):
        lines = [
            f"satz {short} {i} in {folder.name} .\t{labels[i % len(labels)]}" for i in range(n)
        ]
        (folder / f"{short}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _pinned(name: str, tree: Path, **sizes: int) -> Published:
    """The real catalog entry of ``name`` with the fixture's files and blob ids."""
    files = {
        p.relative_to(tree).as_posix(): git_blob_id(p)[0]
        for p in sorted(tree.rglob("*"))
        if p.is_file()
    }
    return dataclasses.replace(published_suites()[name], files=files, sizes=sizes)


@pytest.fixture
def senteval(tmp_path) -> tuple[Path, Published]:
    tree = tmp_path / "mirror-senteval"
    tree.mkdir()
    _senteval_file(tree / "past_present.txt", ("PAST", "PRES"))
    _senteval_file(tree / "bigram_shift.txt", ("I", "O"))
    (tree / "README.md").write_text("# Probing tasks\n")
    return tree, _pinned("senteval", tree, train=20, dev=4, test=4)


@pytest.fixture
def xprobe(tmp_path) -> tuple[Path, Published]:
    tree = tmp_path / "mirror-xprobe"
    _xprobe_task(tree / "de" / "past_present", ("Past", "Pres"))
    _xprobe_task(tree / "ru" / "bigram_shift", ("I", "O"))
    return tree, _pinned("xprobe", tree)


@pytest.fixture
def dnc(tmp_path) -> tuple[Path, Published]:
    tree = write_release(tmp_path / "mirror-dnc")
    return tree, _pinned("dnc", tree, items=110)


SUITES = ["senteval", "xprobe", "dnc"]
#: what ``-t`` makes of each fixture once downloaded.
LOADED = {
    "senteval": ["BShift", "Tense"],
    "xprobe": ["de/Tense", "ru/BShift"],
    "dnc": ["wh-words", "EOS", "Negation"],
}


class _RangeHandler(SimpleHTTPRequestHandler):
    """Serves files honouring ``Range: bytes=N-``; the first request of each file in
    ``truncate`` gets half the body and a dropped connection (an interrupted download)."""

    truncate: set[str] = set()
    log: list[tuple[str, str | None, int]] = []

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        path = Path(self.translate_path(self.path))
        if not path.is_file():
            self.send_error(404)
            return
        data = path.read_bytes()
        start = 0
        spec = self.headers.get("Range")
        if spec and spec.startswith("bytes="):
            start = int(spec[6:].split("-")[0])
        status = 206 if start else 200
        self.log.append((self.path, spec, status))
        self.send_response(status)
        self.send_header("Content-Length", str(len(data) - start))
        self.end_headers()
        if self.path in self.truncate:
            self.truncate.discard(self.path)
            self.wfile.write(data[start : start + (len(data) - start) // 2])
            self.close_connection = True
            return
        self.wfile.write(data[start:])


@pytest.fixture
def serve() -> Iterator:
    servers = []

    def start(directory: Path, handler=_RangeHandler) -> str:
        server = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(directory)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _lock(directory: Path) -> dict:
    return json.loads((directory / LOCK).read_text())


@pytest.mark.parametrize("name", SUITES)
def test_download_from_file_url_verifies_locks_and_loads(name, request, tmp_path):
    tree, suite = request.getfixturevalue(name)
    out = tmp_path / "out"
    outcome = download(suite, out, source=tree.as_uri())
    assert outcome.problems == {}
    assert sorted(outcome.fetched) == sorted(suite.files)
    lock = _lock(out)
    assert lock["suite"] == name and lock["commit"] == suite.commit
    assert lock["files"] == {rel: git_blob_id(out / rel)[1] for rel in suite.files}
    names = [t.name.split("/", 1)[-1] if name == "dnc" else t.name for t in resolve_tasks(str(out))]
    assert names == LOADED[name]
    # a second run re-verifies what is there and fetches nothing
    again = download(suite, out, source=tree.as_uri())
    assert (again.fetched, again.problems) == ([], {})
    assert sorted(again.present) == sorted(suite.files)


@pytest.mark.parametrize("name", SUITES)
def test_checksum_failure_is_reported_and_not_left_in_place(name, request, tmp_path, serve):
    tree, suite = request.getfixturevalue(name)
    victim = sorted(suite.files)[0]
    with open(tree / victim, "ab") as f:
        f.write(b"\n")  # one byte more than the release pinned
    out = tmp_path / "out"
    outcome = download(suite, out, source=serve(tree))
    assert list(outcome.problems) == [victim]
    assert "content differs from the release" in outcome.problems[victim]
    assert not (out / victim).exists() and not (out / (victim + ".part")).exists()
    assert victim not in _lock(out)["files"]  # the others are verified and locked


@pytest.mark.parametrize("name", SUITES)
def test_interrupted_download_resumes_with_range(name, request, tmp_path, serve, monkeypatch):
    monkeypatch.setattr(dl, "RETRIES", 1)  # no second try within the run: the rerun resumes
    tree, suite = request.getfixturevalue(name)
    victim = sorted(suite.files)[-1]
    _RangeHandler.log = []
    _RangeHandler.truncate = {"/" + victim}
    base = serve(tree)
    out = tmp_path / "out"
    first = download(suite, out, source=base)
    assert list(first.problems) == [victim] and "rerun to resume" in first.problems[victim]
    part = out / (victim + ".part")
    half = part.stat().st_size
    assert 0 < half < (tree / victim).stat().st_size
    second = download(suite, out, source=base)
    assert second.problems == {} and second.fetched == [victim]
    assert ("/" + victim, f"bytes={half}-", 206) in _RangeHandler.log
    assert (out / victim).read_bytes() == (tree / victim).read_bytes() and not part.exists()


def test_server_ignoring_range_restarts_the_file(senteval, tmp_path, serve):
    tree, suite = senteval
    out = tmp_path / "out"
    (out).mkdir()
    (out / "README.md.part").write_bytes(b"stale bytes of another file")
    outcome = download(suite, out, source=serve(tree, SimpleHTTPRequestHandler))
    assert outcome.problems == {}
    assert (out / "README.md").read_bytes() == (tree / "README.md").read_bytes()


def test_lock_mismatch_and_damaged_copy(senteval, tmp_path):
    tree, suite = senteval
    out = tmp_path / "out"
    download(suite, out, source=tree)  # a local folder as the mirror
    # a file damaged in place is fetched again
    (out / "past_present.txt").write_text("tr\tPAST\tdamaged .\n")
    repaired = download(suite, out, source=tree)
    assert repaired.fetched == ["past_present.txt"] and repaired.problems == {}
    # a lock that disagrees with the release (another project's pin) fails the fetch
    lock = _lock(out)
    lock["files"]["bigram_shift.txt"] = "0" * 64
    (out / LOCK).write_text(json.dumps(lock))
    (out / "bigram_shift.txt").unlink()
    failed = download(suite, out, source=tree)
    assert "differs from the lock" in failed.problems["bigram_shift.txt"]
    assert not (out / "bigram_shift.txt").exists()


def test_shared_lock_file_of_another_suite_is_refused(senteval, xprobe, tmp_path):
    from sentprobe.errors import DataError

    tree, suite = senteval
    lock = tmp_path / "project.lock.json"
    download(suite, tmp_path / "a", source=tree, lock=lock)
    assert not (tmp_path / "a" / LOCK).exists() and _lock_file(lock)["suite"] == "senteval"
    with pytest.raises(DataError, match="not a sentprobe download lock"):
        download(xprobe[1], tmp_path / "b", source=xprobe[0], lock=lock)


def _lock_file(path: Path) -> dict:
    return json.loads(path.read_text())


@pytest.mark.parametrize("name", ["senteval", "dnc"])
def test_archive_source_is_a_repository_snapshot(name, request, tmp_path):
    """GitHub's "Download ZIP": the repository's root README (and a stray copy of a file
    elsewhere) come before the suite's own; only the suite's folder is read."""
    tree, suite = request.getfixturevalue(name)
    archive = tmp_path / "snapshot.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("Repo-main/README.md", "the repository's README")
        z.writestr(f"Repo-main/old/{sorted(suite.files)[-1]}", "a stale copy")
        for rel in suite.files:
            z.write(tree / rel, f"Repo-main/{suite.folder}{rel}")
    out = tmp_path / "out"
    outcome = download(suite, out, source=archive)
    assert outcome.problems == {} and sorted(outcome.fetched) == sorted(suite.files)
    for rel in suite.files:
        assert (out / rel).read_bytes() == (tree / rel).read_bytes()


def test_archive_of_the_layout_alone(senteval, tmp_path):
    tree, suite = senteval
    archive = tmp_path / "probing.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for rel in suite.files:
            z.write(tree / rel, rel)
    outcome = download(suite, tmp_path / "out", source=archive)
    assert outcome.problems == {} and sorted(outcome.fetched) == sorted(suite.files)


def test_many_missing_files_are_summarised_by_reason(xprobe, tmp_path):
    """A mirror that lacks dozens of files: one short line per reason, not one per file."""
    tree, suite = xprobe
    files = {f"xx/task{i:02d}/te.txt": "0" * 40 for i in range(60)}
    suite = dataclasses.replace(suite, files={**suite.files, **files})
    outcome = download(suite, tmp_path / "out", source=tree)
    summary = outcome.problem_summary()
    assert len(outcome.problems) == 60 and len(summary) < 200
    assert summary.count("xx/task") == 3 and "and 57 more" in summary
    assert summary.startswith(f"{outcome.problems['xx/task00/te.txt']} (60 files): ")


def test_content_checks_follow_the_papers(tmp_path):
    tree = tmp_path / "mirror"
    tree.mkdir()
    _senteval_file(tree / "past_present.txt", ("PAST", "FUTURE"))  # a label SentEval lacks
    _senteval_file(tree / "bigram_shift.txt", ("I", "O"), sizes=(20, 3, 4))  # dev too small
    (tree / "odd_man_out.txt").write_text("tr\tO\tone\ttoo many columns\n")
    suite = _pinned("senteval", tree, train=20, dev=4, test=4)
    problems = download(suite, tmp_path / "out", source=tree).problems
    assert problems["past_present.txt"] == "labels not in the published set: FUTURE"
    assert problems["bigram_shift.txt"] == "split sizes dev 3 (stated 4)"
    assert problems["odd_man_out.txt"] == (
        "line 1: expected 3 tab-separated columns (split, label, sentence), found 4 "
        "(a tab inside a sentence?)"
    )


def test_dnc_item_count_is_the_papers(dnc, tmp_path):
    tree, suite = dnc
    suite = dataclasses.replace(suite, sizes={"items": 3544})
    problems = download(suite, tmp_path / "out", source=tree).problems
    assert problems == {"*_data.json": "110 items in 3 sets, the paper states 3544"}


def test_catalog_pins_the_maintainers_files():
    suites = published_suites()
    assert set(suites) == {"senteval", "xprobe", "dnc"}
    senteval = suites["senteval"]
    assert sorted(senteval.files) == sorted(
        [f"{stem}.txt" for stem in dl.SENTEVAL_FILES] + ["README.md"]
    )
    assert senteval.url("past_present.txt") == (
        "https://raw.githubusercontent.com/facebookresearch/SentEval/"
        f"{senteval.commit}/data/probing/past_present.txt"
    )
    languages = {rel.split("/")[0] for rel in suites["xprobe"].files}
    assert languages == {"de", "en", "es", "fi", "fr", "ru", "tr"}
    assert len(suites["xprobe"].files) == 7 * 9 * 3
    assert len(suites["dnc"].files) == 19


@pytest.mark.skipif(not KIM.is_dir(), reason="needs Kim et al.'s release in ../shared/data")
def test_kims_release_matches_the_pinned_catalog(tmp_path, monkeypatch, capsys):
    out = tmp_path / "kim"
    monkeypatch.setattr(
        sys, "argv", ["sentprobe", "download", "dnc", "-o", str(out), "--url", str(KIM)]
    )
    main()
    err = capsys.readouterr().err
    assert f"dnc: 19 files verified in {out} (19 fetched, 0 already there" in err
    assert len(resolve_tasks(str(out))) == 9


def test_cli_says_what_is_missing_in_one_line(senteval, tmp_path, monkeypatch, capsys):
    tree, suite = senteval
    monkeypatch.setattr(dl, "published_suites", lambda: {"senteval": suite})
    (tree / "bigram_shift.txt").unlink()
    out = tmp_path / "out"
    monkeypatch.setattr(
        sys,
        "argv",
        ["sentprobe", "download", "senteval", "-o", str(out), "--mirror", tree.as_uri()],
    )
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"error: senteval: 1 missing or damaged in {out}: bigram_shift.txt: ")
    assert "rerun to resume" in err[0]


def test_download_reports_identical_splits(xprobe, tmp_path, monkeypatch, capsys):
    """X-Probe's TreeDepth dev and test files are byte-identical in five languages: the
    download verifies them (they are the published files) and says so itself."""
    tree, _ = xprobe
    task = tree / "de" / "past_present"
    (task / "te.txt").write_bytes((task / "va.txt").read_bytes())
    suite = _pinned("xprobe", tree)
    outcome = download(suite, tmp_path / "out", source=tree)
    assert outcome.problems == {}
    assert outcome.identical == [("de/past_present/te.txt", "de/past_present/va.txt")]
    monkeypatch.setattr(dl, "published_suites", lambda: {"xprobe": suite})
    monkeypatch.setattr(
        sys,
        "argv",
        ["sentprobe", "download", "xprobe", "-o", str(tmp_path / "o2"), "--mirror", str(tree)],
    )
    main()
    err = capsys.readouterr().err
    assert "de/past_present/te.txt and de/past_present/va.txt are byte-identical" in err


def test_a_dropped_connection_is_retried_and_resumed_in_one_run(senteval, tmp_path, serve):
    tree, suite = senteval
    victim = sorted(suite.files)[-1]
    _RangeHandler.log = []
    _RangeHandler.truncate = {"/" + victim}
    outcome = download(suite, tmp_path / "out", source=serve(tree))
    assert outcome.problems == {} and victim in outcome.fetched
    assert [entry[2] for entry in _RangeHandler.log if entry[0] == "/" + victim] == [200, 206]


class _EndlessHandler(_RangeHandler):
    """Sends an endless body for every file (no Content-Length)."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()
        try:
            while True:
                self.wfile.write(b"x" * 65536)
        except OSError:
            pass


def test_the_catalog_size_bounds_every_file(senteval, tmp_path, serve):
    """An endless body grew a ``.part`` to 200 MB for a 224 KB file: the catalog's size of
    each file cuts it off, the part is removed, one line says so."""
    tree, suite = senteval
    sizes = {rel: (tree / rel).stat().st_size for rel in suite.files}
    suite = dataclasses.replace(suite, bytes=sizes)
    out = tmp_path / "out"
    outcome = download(suite, out, source=serve(tree, _EndlessHandler))
    assert set(outcome.problems) == set(suite.files)
    assert all("more than the file's" in why for why in outcome.problems.values())
    assert not list(out.rglob("*.part")) and not list(out.rglob("*.txt"))


class _LoopHandler(_RangeHandler):
    def do_GET(self) -> None:
        self.send_response(302)
        self.send_header("Location", self.path)
        self.end_headers()


def test_a_redirect_loop_is_one_line_for_the_suite(senteval, tmp_path, serve, monkeypatch, capsys):
    tree, suite = senteval
    monkeypatch.setattr(dl, "published_suites", lambda: {"senteval": suite})
    mirror = serve(tree, _LoopHandler)
    args = ["download", "senteval", "-o", str(tmp_path / "out"), "--mirror", mirror]
    monkeypatch.setattr(sys, "argv", ["sentprobe", *args])
    with pytest.raises(SystemExit):
        main()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "redirect" in err[0] and f"({len(suite.files)} files)" in err[0], err


class _SlowHandler(_RangeHandler):
    def do_GET(self) -> None:
        import time

        self.send_response(200)
        self.end_headers()
        try:
            for _ in range(40):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.05)
        except OSError:
            pass


def test_the_whole_download_has_a_time_limit(senteval, tmp_path, serve):
    """A server that keeps sending slowly, never silent for ``timeout``: the overall limit
    stops the run; what was fetched is kept to resume."""
    import time

    tree, suite = senteval
    start = time.monotonic()
    outcome = download(suite, tmp_path / "out", source=serve(tree, _SlowHandler),
                       total_timeout=0.5)  # fmt: skip
    assert time.monotonic() - start < 1.5
    assert set(outcome.problems) == set(suite.files)
    assert all("time limit" in why for why in outcome.problems.values())


def test_a_server_error_is_retried_with_a_growing_wait(senteval, tmp_path, serve, monkeypatch):
    tree, suite = senteval
    waits: list[float] = []
    monkeypatch.setattr(dl, "_sleep", waits.append)

    class Failing(_RangeHandler):
        def do_GET(self) -> None:
            self.send_error(503)

    outcome = download(suite, tmp_path / "out", source=serve(tree, Failing))
    assert all(why == "HTTP 503 Service Unavailable" for why in outcome.problems.values())
    assert waits == [dl.RETRY_WAIT_S, 2 * dl.RETRY_WAIT_S] * len(suite.files)


def test_download_shows_a_progress_bar(senteval, tmp_path, monkeypatch, capsys):
    tree, suite = senteval
    suite = dataclasses.replace(suite, bytes={r: (tree / r).stat().st_size for r in suite.files})
    download(suite, tmp_path / "out", source=tree.as_uri(), progress=True)
    err = capsys.readouterr().err
    total = sum(suite.bytes.values()) / 1000
    assert f"senteval: {total:.2f}k/{total:.2f}k" in err
