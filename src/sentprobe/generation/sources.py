"""Prose from Sphinx-built HTML documentation (the sample suite's corpus: Python's docs).

Only paragraph text (``<p>``) inside the page body is kept; code blocks, tables, scripts
and navigation are skipped. Sentences with inline code are dropped unless the code is a
single plain word ("None", "if"), so what remains reads as ordinary English prose.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from html.parser import HTMLParser
from pathlib import Path

from .corpus import SentenceSplitter

#: Stands in for inline code, so the sentence containing it can be dropped after splitting.
CODE_MARK = "\u2063"
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
         "wbr"}  # fmt: skip
_SKIP = {"pre", "script", "style", "table"}
_CODE = {"code", "kbd", "samp", "tt", "var"}
#: Attributes marking the page body in Sphinx themes (classic/pydoctheme; Django's theme).
MAIN_MARKERS = (("role", "main"), ("id", "yui-main"))


class _ParagraphParser(HTMLParser):
    """Collects the text of ``<p>`` elements inside the page body (see MAIN_MARKERS)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.main_depth: int | None = None
        self.skip = 0
        self.code = 0
        self.para: list[str] | None = None
        self.para_depth = 0
        self.code_text: list[str] = []
        self.paragraphs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID:
            return
        self.stack.append(tag)
        if self.main_depth is None:
            if tag == "div" and any((k, v) in MAIN_MARKERS for k, v in attrs):
                self.main_depth = len(self.stack)
        elif tag in _SKIP:
            self.skip += 1
        elif tag == "p" and self.para is None:
            self.para, self.para_depth = [], len(self.stack)
        elif tag in _CODE:
            if self.code == 0:
                self.code_text = []
            self.code += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID or tag not in self.stack:
            return
        while self.stack:  # close unclosed children too (HTML allows it)
            depth = len(self.stack)
            top = self.stack.pop()
            if self.main_depth is not None:
                self._close(top, depth)
            if top == tag:
                break

    def _close(self, tag: str, depth: int) -> None:
        if tag in _SKIP:
            self.skip -= 1
        elif tag in _CODE and self.code:
            self.code -= 1
            if self.code == 0 and self.para is not None:
                text = "".join(self.code_text).strip()
                self.para.append(text if re.fullmatch(r"[A-Za-z]+", text) else CODE_MARK)
        elif tag == "p" and self.para is not None and depth == self.para_depth:
            if not self.skip:
                self.paragraphs.append(" ".join("".join(self.para).split()))
            self.para = None
        if depth == self.main_depth:
            self.main_depth = None

    def handle_data(self, data: str) -> None:
        if self.main_depth is not None and self.para is not None and not self.skip:
            (self.code_text if self.code else self.para).append(data)


def html_paragraphs(html: str) -> list[str]:
    """Prose paragraphs of one Sphinx HTML page (inline code replaced by CODE_MARK)."""
    parser = _ParagraphParser()
    parser.feed(html)
    parser.close()
    return parser.paragraphs


# Boilerplate that repeats with small variations across the docs.
_BOILERPLATE = re.compile(
    r"^(Changed in version|New in version|Deprecated since version|Added in version|"
    r"See also|Availability|Source code|Note|Warning|Example)\b"
)


def prose_sentences(
    paragraphs: Iterable[str], stats: Counter | None = None, lang: str = "en"
) -> Iterator[str]:
    """Split paragraphs into sentences and keep those that read as ordinary prose.

    Kept: starts with a capital letter, ends with ``.?!`` (optionally followed by a closing
    quote or bracket), contains no inline code, identifiers (``_``), URLs, e-mail
    addresses, backslashes or interactive prompts, and is not release-note boilerplate.
    """
    stats = Counter() if stats is None else stats
    splitter = SentenceSplitter(lang)
    for para in paragraphs:
        for sent in splitter.split(para):
            stats["split"] += 1
            if CODE_MARK in sent:
                stats["rejected: inline code"] += 1
            elif not re.match(r"[A-Z]", sent):
                stats["rejected: does not start with a capital letter"] += 1
            elif not re.search(r"[.?!][\"'\u201d\u2019)]*$", sent):
                stats["rejected: does not end with . ? or !"] += 1
            elif re.search(r"_|://|@|>>>|\\|\bwww\.", sent):
                stats["rejected: identifier, URL, e-mail or prompt"] += 1
            elif _BOILERPLATE.match(sent):
                stats["rejected: boilerplate"] += 1
            else:
                stats["kept"] += 1
                yield sent


def sphinx_html_files(root: str | Path) -> list[Path]:
    """Content pages of a Sphinx HTML build, in a stable (sorted) order."""
    root = Path(root)
    skip = {"genindex", "py-modindex", "search", "contents", "index"}
    return [
        p
        for p in sorted(root.rglob("*.html"))
        if not any(part.startswith("_") for part in p.relative_to(root).parts)
        and p.stem not in skip
    ]


def sphinx_sentences(root: str | Path, stats: Counter | None = None) -> Iterator[str]:
    """Prose sentences of a whole Sphinx HTML build, page by page."""
    for path in sphinx_html_files(root):
        yield from prose_sentences(html_paragraphs(path.read_text(encoding="utf-8")), stats)
