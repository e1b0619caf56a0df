"""The HTML report: one self-contained file a person can read and a browser can open offline.

Everything is inline: the style sheet, the figures (SVG from :mod:`.plots`, text kept as
text), and a 30-line script that sorts the results table when a column header is clicked
(no library, no CDN, nothing fetched at view time). Every piece of text that comes from
results, task files or manifests goes through :func:`html.escape`; a suite's QUALITY.md goes
through markdown-it-py with raw HTML off, images off and links kept only for http(s), mailto
and in-page anchors. The page carries a Content-Security-Policy that lets only its own
script run (by hash): a report made from someone else's suite or results store cannot run
theirs (docs/security.md).

This module only lays out what it is given (a :class:`Report`); what goes in it (scores,
intervals, controls, figures, task metadata, provenance) is gathered by the command line
(``sentprobe report --html``), so reporting never depends on the analysis stage.
"""

from __future__ import annotations

import base64
import hashlib
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from html import escape
from typing import Any, Literal

from markdown_it import MarkdownIt

RowKind = Literal["baseline", "reference", "encoder"]


@dataclass
class Cell:
    """One score in points: mean over seeds, std (several seeds), 95% CI, markers."""

    value: float
    std: float = math.nan
    low: float = math.nan
    high: float = math.nan
    marks: str = ""  # table markers (†, ‡, °)
    best: bool = False  # best in its column, or not significantly worse than the best
    control: float = math.nan  # the control task's accuracy (Hewitt & Liang)
    ceiling: float = math.nan  # a perfect memoriser's accuracy on the control task
    ceiling_min: float = math.nan  # the lowest ceiling over the control maps
    maps: int = 0  # control maps behind ``control`` (seed s probes the map of seed s)
    undefined: str = ""  # why selectivity is not defined (a control that permutes labels)

    @property
    def selectivity(self) -> float:
        return self.value - self.control


@dataclass
class Row:
    label: str
    kind: RowKind
    cells: dict[str, Cell]


@dataclass
class Table:
    """Results: columns (group, task) in the paper's order, rows by kind."""

    columns: list[tuple[str, str]]
    rows: list[Row]
    notes: list[str] = field(default_factory=list)


@dataclass
class Plot:
    id: str
    title: str
    svg: str
    caption: str = ""


@dataclass
class SimpleTable:
    """A small table of strings (layer summary, provenance...)."""

    title: str
    header: list[str]
    rows: list[list[str]]
    caption: str = ""


@dataclass
class TaskInfo:
    name: str
    fields: dict[str, str]  # language, category, sizes, source, license...
    description: str = ""


@dataclass
class SuiteInfo:
    """A suite directory's manifest summary and its QUALITY.md (markdown)."""

    name: str
    path: str
    fields: dict[str, str]
    quality_md: str = ""
    findings_md: str = ""  # the QUALITY.md section "Warnings and errors"


@dataclass
class Report:
    title: str
    subtitle: str
    table: Table
    plots: list[Plot] = field(default_factory=list)
    tables: list[SimpleTable] = field(default_factory=list)
    tasks: list[TaskInfo] = field(default_factory=list)
    suites: list[SuiteInfo] = field(default_factory=list)
    provenance: list[SimpleTable] = field(default_factory=list)
    #: what is missing and how to get it (escaped; `code` shown as code)
    messages: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------- rendering

_CSS = """
:root { --ink:#1f2328; --muted:#59636e; --line:#d1d9e0; --soft:#f6f8fa; --accent:#0b5cad;
  --base:#fbf7ec; --ref:#eef6ee; }
* { box-sizing: border-box; }
body { margin:0; font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
  color:var(--ink); background:#fff; }
header { background:#0d2a4a; color:#fff; padding:22px 32px 18px; }
header h1 { margin:0 0 4px; font-size:24px; font-weight:600; }
header p { margin:0; color:#c9d6e3; font-size:14px; }
nav { position:sticky; top:0; z-index:2; background:#fff; border-bottom:1px solid var(--line);
  padding:8px 32px; font-size:14px; }
nav a { color:var(--accent); text-decoration:none; margin-right:18px; }
main { max-width:1280px; margin:0 auto; padding:8px 32px 48px; }
section { margin-top:28px; }
h2 { font-size:20px; font-weight:600; border-bottom:1px solid var(--line); padding-bottom:4px; }
h3 { font-size:16px; font-weight:600; margin:18px 0 6px; }
p.note, .caption, .legend { color:var(--muted); font-size:13px; }
.message { background:#fff8e1; border-left:4px solid #e0a800; padding:8px 12px; margin:8px 0;
  font-size:14px; }
.scroll { overflow-x:auto; }
table { border-collapse:collapse; font-size:13px; }
th, td { padding:4px 8px; border-bottom:1px solid var(--line); }
th { background:var(--soft); font-weight:600; text-align:center; }
td.num { text-align:right; font-variant-numeric:tabular-nums; white-space:nowrap; }
td.label, th.label { text-align:left; white-space:nowrap; }
td.text { text-align:left; }
table.tasks td.text:last-child { min-width:280px; }
table.results th.sortable { cursor:pointer; user-select:none; }
table.results th.sortable:hover { background:#e7edf3; }
table.results th[aria-sort=descending]::after { content:" ▼"; font-size:10px; }
table.results th[aria-sort=ascending]::after { content:" ▲"; font-size:10px; }
table.results th.group { border-bottom:2px solid var(--line); }
tbody.baseline td { background:var(--base); color:#5b4a1e; }
tbody.reference td { background:var(--ref); font-style:italic; }
tbody + tbody tr:first-child td { border-top:2px solid #9aa7b3; }
td .ci { display:block; color:var(--muted); font-size:11px; }
td .sel { display:block; color:#6a4c93; font-size:11px; }
td.best .v { font-weight:700; }
figure { margin:12px 0 24px; }
figure svg { max-width:100%; height:auto; }
figcaption { color:var(--muted); font-size:13px; margin-top:4px; max-width:900px; }
dl.meta { display:grid; grid-template-columns:max-content 1fr; gap:2px 14px; font-size:13px;
  margin:4px 0 8px; }
dl.meta dt { color:var(--muted); }
dl.meta dd { margin:0; overflow-wrap:anywhere; }
details { margin:6px 0 12px; }
details summary { cursor:pointer; color:var(--accent); font-size:14px; }
.md table { margin:6px 0 12px; }
.md td { text-align:right; }
.md td:first-child { text-align:left; }
code { font-size:12px; background:var(--soft); padding:1px 4px; border-radius:3px; }
"""

_SCRIPT = """
(function () {
  function key(cell) {
    var v = cell.getAttribute("data-v");
    if (v === null) return cell.textContent.trim().toLowerCase();
    return v === "" ? NaN : parseFloat(v);
  }
  document.querySelectorAll("table.results").forEach(function (table) {
    table.querySelectorAll("th.sortable").forEach(function (th) {
      th.addEventListener("click", function () {
        var col = parseInt(th.getAttribute("data-col"), 10);
        var asc = th.getAttribute("aria-sort") === "descending";
        table.querySelectorAll("th.sortable").forEach(function (o) {
          o.removeAttribute("aria-sort");
        });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        table.querySelectorAll("tbody").forEach(function (body) {
          var rows = Array.prototype.slice.call(body.rows);
          rows.sort(function (a, b) {
            var x = key(a.cells[col]), y = key(b.cells[col]);
            var xn = typeof x === "number" && isNaN(x), yn = typeof y === "number" && isNaN(y);
            if (xn || yn) return xn - yn;
            var c = x < y ? -1 : x > y ? 1 : 0;
            return asc ? c : -c;
          });
          rows.forEach(function (r) { body.appendChild(r); });
        });
      });
    });
  });
})();
"""


#: Only the page's own script may run (matched by its SHA-256); styles are inline (the
#: style sheet and the SVG figures' style attributes); images only as data: URIs; nothing
#: is fetched, no form posts, no <base> redirect.
CSP = (
    "default-src 'none'; "
    f"script-src 'sha256-{base64.b64encode(hashlib.sha256(_SCRIPT.encode()).digest()).decode()}'; "
    "style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
)


def _num(value: float, decimals: int = 1, sign: bool = False) -> str:
    if value is None or not math.isfinite(value):
        return ""
    return f"{value:+.{decimals}f}" if sign else f"{value:.{decimals}f}"


def _cell_html(cell: Cell | None) -> str:
    if cell is None or not math.isfinite(cell.value):
        return '<td class="num" data-v="">–</td>'
    parts = [f'<span class="v">{_num(cell.value)}</span>']
    if math.isfinite(cell.std):
        parts.append(f" ± {_num(cell.std)}")
    if cell.marks:
        parts.append(f"<sup>{escape(cell.marks)}</sup>")
    title = []
    if math.isfinite(cell.low) and math.isfinite(cell.high):
        parts.append(f'<span class="ci">[{_num(cell.low)}, {_num(cell.high)}]</span>')
        title.append(f"95% CI {_num(cell.low)} to {_num(cell.high)}")
    if math.isfinite(cell.control):
        sel = "n/a" if cell.undefined else _num(cell.selectivity, sign=True)
        parts.append(f'<span class="sel">sel {sel}</span>')
        ceiling = f" (ceiling {_num(cell.ceiling)}" if math.isfinite(cell.ceiling) else ""
        if ceiling and cell.maps > 1:
            ceiling += f", lowest {_num(cell.ceiling_min)}"
        maps = f"mean over {cell.maps} control maps: " if cell.maps > 1 else ""
        why = f"selectivity {cell.undefined}" if cell.undefined else f"selectivity {sel}"
        title.append(f"{maps}control task {_num(cell.control)}{ceiling and ceiling + ')'}, {why}")
    cls = "num best" if cell.best else "num"
    tip = f' title="{escape("; ".join(title))}"' if title else ""
    return f'<td class="{cls}" data-v="{cell.value:.4f}"{tip}>{"".join(parts)}</td>'


def _results_table(table: Table) -> str:
    groups: list[tuple[str, int]] = []
    for group, _ in table.columns:
        if groups and groups[-1][0] == group:
            groups[-1] = (group, groups[-1][1] + 1)
        else:
            groups.append((group, 1))
    head = ['<th class="label" rowspan="2">Encoder</th>']
    head += [f'<th class="group" colspan="{n}">{escape(g)}</th>' for g, n in groups]
    tasks = [
        f'<th class="sortable" data-col="{i + 1}" title="sort">{escape(task)}</th>'
        for i, (_, task) in enumerate(table.columns)
    ]
    out = [
        '<div class="scroll"><table class="results" id="results-table"><thead>',
        f"<tr>{''.join(head)}</tr><tr>{''.join(tasks)}</tr></thead>",
    ]
    for kind in ("baseline", "reference", "encoder"):
        rows = [r for r in table.rows if r.kind == kind]
        if not rows:
            continue
        out.append(f'<tbody class="{kind}">')
        for row in rows:
            cells = "".join(_cell_html(row.cells.get(task)) for _, task in table.columns)
            out.append(f'<tr><td class="label">{escape(row.label)}</td>{cells}</tr>')
        out.append("</tbody>")
    out.append("</table></div>")
    out += [f'<p class="legend">{escape(note)}</p>' for note in table.notes]
    return "\n".join(out)


_NUMBER = re.compile(r"[-+−]?\d[\d.,]*%?")


def _simple_table(t: SimpleTable, cls: str = "") -> str:
    """A plain table; cells that are numbers are right-aligned, text left-aligned."""
    head = "".join(f"<th>{escape(h)}</th>" for h in t.header)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="{"num" if _NUMBER.fullmatch(c.strip()) else "text"}">{escape(c)}</td>'
            for c in r
        )
        + "</tr>"
        for r in t.rows
    )
    title = f"<h3>{escape(t.title)}</h3>" if t.title else ""
    caption = f'<p class="caption">{escape(t.caption)}</p>' if t.caption else ""
    return (
        f'{title}<div class="scroll"><table class="{cls}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>{caption}"
    )


def _meta(fields: dict[str, str]) -> str:
    items = "".join(
        f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>"
        for k, v in fields.items()
        if v not in ("", None)
    )
    return f'<dl class="meta">{items}</dl>'


_INLINE = re.compile(r"\*\*(.+?)\*\*|`([^`]+)`")


def _inline(text: str) -> str:
    """Escaped text with markdown's **bold** and `code` (nothing else is interpreted)."""
    out, last = [], 0
    for m in _INLINE.finditer(text):
        out.append(escape(text[last : m.start()]))
        out.append(f"<b>{escape(m[1])}</b>" if m[1] is not None else f"<code>{escape(m[2])}</code>")
        last = m.end()
    out.append(escape(text[last:]))
    return "".join(out)


#: Link targets a report keeps; any other (javascript:, data:, file:, relative paths...)
#: leaves the link as plain text.
_SAFE_LINK = re.compile(r"(https?://|mailto:|#)", re.IGNORECASE)


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    """CommonMark with pipe tables, raw HTML shown as text, no images (nothing is fetched)."""
    md = MarkdownIt("commonmark", {"html": False}).enable("table").disable("image")
    md.validateLink = lambda url: bool(_SAFE_LINK.match(url.strip()))  # type: ignore[method-assign]

    def table_open(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        return '<div class="scroll">' + self.renderToken(tokens, idx, options, env)

    def table_close(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        return self.renderToken(tokens, idx, options, env) + "</div>"

    md.add_render_rule("table_open", table_open)
    md.add_render_rule("table_close", table_close)
    return md


def markdown_html(text: str) -> str:
    """Markdown (a suite's QUALITY.md) as HTML, headings moved two levels down (the page's
    own h1/h2 come first); raw HTML and unsafe links come out as escaped text."""
    md = _markdown()
    tokens = md.parse(text)
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(6, int(token.tag[1]) + 2)}"
    return md.renderer.render(tokens, md.options, {})


def render_html(report: Report) -> str:
    """The whole page."""
    sections: list[tuple[str, str, str]] = []  # (id, title, body)
    body = [_results_table(report.table)]
    body += [f'<div class="message">{_inline(m)}</div>' for m in report.messages]
    sections.append(("results", "Results", "\n".join(body)))
    if report.plots or report.tables:
        figures = [
            f'<figure id="{escape(p.id)}" class="plot"><h3>{escape(p.title)}</h3>{p.svg}'
            + (f"<figcaption>{escape(p.caption)}</figcaption>" if p.caption else "")
            + "</figure>"
            for p in report.plots
        ]
        figures += [_simple_table(t) for t in report.tables]
        sections.append(("analysis", "Analysis", "\n".join(figures)))
    if report.tasks or report.suites:
        parts = []
        if report.tasks:
            keys = list(dict.fromkeys(k for task in report.tasks for k in task.fields))
            described = any(task.description for task in report.tasks)
            table = SimpleTable(
                "",
                ["Task", *keys, *(["Description"] if described else [])],
                [
                    [
                        task.name,
                        *(task.fields.get(k, "") for k in keys),
                        *([task.description] if described else []),
                    ]
                    for task in report.tasks
                ],
            )
            parts.append(_simple_table(table, "tasks"))
        for suite in report.suites:
            parts.append(f"<h3>Suite {escape(suite.name)}</h3>{_meta(suite.fields)}")
            if suite.findings_md:
                parts.append(
                    '<div class="md"><h4>Audit findings (QUALITY.md)</h4>'
                    f"{markdown_html(suite.findings_md)}</div>"
                )
            if suite.quality_md:
                parts.append(
                    f"<details><summary>Quality report of {escape(suite.name)} (QUALITY.md)"
                    f'</summary><div class="md">{markdown_html(suite.quality_md)}</div></details>'
                )
        sections.append(("tasks", "Tasks", "\n".join(parts)))
    if report.provenance:
        sections.append(
            ("provenance", "Provenance", "\n".join(_simple_table(t) for t in report.provenance))
        )
    nav = "".join(f'<a href="#{sid}">{escape(title)}</a>' for sid, title, _ in sections)
    main = "\n".join(
        f'<section id="{sid}"><h2>{escape(title)}</h2>\n{content}</section>'
        for sid, title, content in sections
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(report.title)}</title><style>{_CSS}</style></head><body>"
        f"<header><h1>{escape(report.title)}</h1><p>{escape(report.subtitle)}</p></header>"
        f"<nav>{nav}</nav><main>{main}</main><script>{_SCRIPT}</script></body></html>\n"
    )
