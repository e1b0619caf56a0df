"""An HTML report made from someone else's suite runs none of its code: sentences, labels,
the manifest's description and QUALITY.md carrying ``<script>``, ``<img onerror>`` and
``javascript:`` links render as text, and the page's Content-Security-Policy lets only the
report's own script run (docs/security.md). The browser tests skip where Chromium is absent."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from test_html import CHROMIUM, _chromium, needs_chromium, with_test_script

from sentprobe.analysis.quality import quality_report
from sentprobe.cli import report_meta
from sentprobe.cli.report import _load_results
from sentprobe.cli.report_html import build_report
from sentprobe.datasets.loaders.manifest import load_manifest_dir
from sentprobe.evaluation.store import ResultsStore
from sentprobe.reporting.html import _SCRIPT, CSP, render_html

#: Each payload marks the page (``data-pwned`` on <html>) if it ever runs.
MARK = "document.documentElement.setAttribute('data-pwned','{}')"
SCRIPT = f"<script>{MARK.format('script')}</script>"
IMG = f'<img src=x onerror="{MARK.format("img")}">'
JS_URL = f"javascript:{MARK.format('link')}"
PAYLOADS = (SCRIPT, IMG, JS_URL)
SUITE = "evilsuite"
TASK = f"Evil{IMG}"


def _suite(directory: Path) -> Path:
    """A suite as someone else might share it: payloads in sentences, labels, the manifest's
    description and QUALITY.md (as markdown links, autolinks and raw HTML)."""
    directory.mkdir()
    labels = [f"yes{SCRIPT}", f"no{IMG}"]
    lines = [
        f"{split}\t{labels[i % 2]}\tsentence {i} {PAYLOADS[i % 3]} ."
        for split, n in (("tr", 20), ("va", 6), ("te", 6))
        for i in range(n)
    ]
    (directory / "evil.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    manifest = {
        "suite": SUITE,
        "description": f"A suite {SCRIPT} {IMG} [click]({JS_URL})",
        "source": f'<a href="{JS_URL}">source</a>',
        "tasks": {TASK: {"file": "evil.txt", "labels": labels}},
    }
    (directory / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    audit = quality_report(load_manifest_dir(directory), baselines=False)  # quotes sentences
    quality = [
        audit,
        f"## Notes {SCRIPT}",
        "",
        f"A paragraph with {IMG}, [a link]({JS_URL}), <{JS_URL}> and "
        f'<a href="{JS_URL}">raw</a>, [data](data:text/html,{SCRIPT}).',
        "",
        f"- label `{labels[0]}` and sentence *sentence 1 {IMG} .*",
        f"- [click me]({JS_URL.upper()})",
        "",
        "| task | label | sentence |",
        "|---|---|---|",
        f"| {TASK} | {labels[1]} | sentence 2 {SCRIPT} |",
    ]
    (directory / "QUALITY.md").write_text("\n".join(quality) + "\n", encoding="utf-8")
    return directory


@pytest.fixture
def evil_page(tmp_path, make_record, monkeypatch) -> str:
    suite = _suite(tmp_path / "suite")
    monkeypatch.setattr(report_meta, "_suite_dirs", lambda: {SUITE: suite})
    store = tmp_path / "results.sqlite"
    with ResultsStore(store) as s:
        layers = [(f"enc{SCRIPT}@layer{k}", 0.6 + 0.05 * k) for k in range(3)]  # a figure
        for i, (row, score) in enumerate([*layers, ("plain", 0.8), ("low", 0.4)]):
            record = make_record(row, TASK, score, task_source=SUITE)
            s.add(record, f"k{i}")
    return render_html(build_report(store, _load_results(store, None)))


class _Tags(HTMLParser):
    """Every element of a page with its attributes, and the text of its scripts."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self.in_script = False
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self.in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self.in_script = False

    def handle_data(self, data: str) -> None:
        if self.in_script:
            self.scripts.append(data)


def test_payloads_render_as_text(evil_page):
    parsed = _Tags(evil_page)
    names = {tag for tag, _ in parsed.tags}
    assert parsed.scripts == [_SCRIPT]  # the report's own script, nothing else
    assert not names & {"img", "iframe", "object", "embed", "form", "base"}, names
    handlers = [(t, a) for t, attrs in parsed.tags for a in attrs if a.startswith("on")]
    assert handlers == []
    links = [attrs.get("href") or "" for tag, attrs in parsed.tags if tag == "a"]
    assert all(link.startswith(("#", "https://", "http://", "mailto:")) for link in links)
    for text in ("&lt;script&gt;", "&lt;img src=x onerror=", "[a link](javascript:"):
        assert text in evil_page  # shown, as text
    assert "Quality report" in evil_page and "A suite" in evil_page  # the suite's texts
    figures = re.findall(r"<svg\b.*?</svg>", evil_page, re.S)
    assert any("enc&lt;script&gt;" in svg for svg in figures)  # a row label in a figure
    assert "e.g. &quot;sentence 0 &lt;script&gt;" in evil_page  # a sentence, via the audit


def test_page_allows_only_its_own_script(evil_page):
    meta = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', evil_page)
    assert meta is not None and meta.group(1) == CSP
    directives = dict(d.strip().split(" ", 1) for d in CSP.split(";"))
    digest = base64.b64encode(hashlib.sha256(_SCRIPT.encode()).digest()).decode()
    assert directives["script-src"] == f"'sha256-{digest}'"
    assert directives["default-src"] == "'none'"
    assert evil_page.index("Content-Security-Policy") < evil_page.index("<style>")


#: Run after the page has loaded: sort the results table, then record what the DOM holds.
PROBE = """
document.querySelector('th.sortable[data-col="1"]').click();
var rows = document.querySelectorAll("#results-table tbody.encoder tr");
var order = Array.prototype.map.call(rows, function (r) {
  return r.cells[1].getAttribute("data-v");
});
var found = {
  scripts: document.scripts.length,
  foreign: document.querySelectorAll("img, iframe, object, embed, form, base").length,
  jsLinks: Array.prototype.filter.call(document.links, function (a) {
    return !/^(https?:|mailto:|file:.*#)/i.test(a.href);
  }).length,
  order: order
};
document.body.setAttribute("data-probe", JSON.stringify(found));
"""


def _probe(page: str, tmp_path: Path) -> tuple[dict | None, str, str]:
    """(what the probe found or None, the DOM after load, Chromium's console lines)."""
    tmp_path.mkdir(exist_ok=True)
    path = tmp_path / "page.html"
    path.write_text(with_test_script(page, PROBE), encoding="utf-8")
    res = _chromium(path, tmp_path, "--dump-dom", "--virtual-time-budget=3000")
    assert res.returncode == 0, res.stderr[-2000:]
    match = re.search(r'data-probe="([^"]*)"', res.stdout)
    found = json.loads(match.group(1).replace("&quot;", '"')) if match else None
    console = "\n".join(line for line in res.stderr.splitlines() if ":CONSOLE" in line)
    return found, res.stdout, console


def _pwned(dom: str) -> bool:
    """Whether a payload ran: it marks the <html> element (as text, it is only escaped)."""
    return re.search(r"<html[^>]*data-pwned", dom) is not None


@needs_chromium
def test_no_script_from_the_data_runs_in_chromium(evil_page, tmp_path):
    found, dom, console = _probe(evil_page, tmp_path)
    assert found is not None, console  # the probe (allowed by hash) ran
    assert found["scripts"] == 2 and found["foreign"] == 0 and found["jsLinks"] == 0, found
    assert [float(v) for v in found["order"]] == [80.0, 70.0, 65.0, 60.0, 40.0]  # sorting works
    assert not _pwned(dom)
    assert console == "", console  # no CSP violation: the page's own content is allowed


@needs_chromium
def test_the_policy_stops_a_script_that_escaping_missed(evil_page, tmp_path):
    """Plant the defect escaping guards against (a payload inserted raw): the policy still
    keeps it from running, and without the policy it would run."""
    assert CHROMIUM is not None
    raw = evil_page.replace("<main>", f"<main>{SCRIPT}{IMG}", 1)
    found, dom, console = _probe(raw, tmp_path)
    assert found is not None and not _pwned(dom)
    assert "Content Security Policy" in console
    unprotected = raw.replace(f'<meta http-equiv="Content-Security-Policy" content="{CSP}">', "")
    _, dom, _ = _probe(unprotected, tmp_path / "unprotected")
    assert _pwned(dom)  # the check above can fail
