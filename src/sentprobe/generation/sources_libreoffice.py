"""Sentences in any language from the LibreOffice help (Debian ``libreoffice-help-<lang>``).

The help pages are translated into many languages under the MPL-2.0, which makes them a
redistributable source of ordinary (if technical) prose for the built-in multilingual
samples. ``sources.libreoffice_help_sentences`` reads the English pages with English rules
(an ASCII capital first, English boilerplate); this module applies rules that hold for any
alphabetic script: a sentence starts with an upper-case letter (``É``, ``Д``) and ends with
``.?!``, optionally followed by a closing quote or bracket (``»``).

Paragraph extraction (page body only, hidden per-platform variants skipped, inline code
marked) is the one ``sources`` uses for Sphinx and LibreOffice pages.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

from sentprobe.errors import SentprobeError

from .corpus import SentenceSplitter
from .sources import CODE_MARK, LIBREOFFICE_MARKERS, debian_package_version, html_paragraphs

__all__ = [
    "HELP_ROOT",
    "help_package",
    "in_language",
    "libreoffice_help_dir",
    "libreoffice_help_sentences",
    "package_version",
    "prose_sentences_any",
]

HELP_ROOT = Path("/usr/share/libreoffice/help")
#: Help folder names that differ from the language code.
_FOLDERS = {"en": "en-US"}
#: Opening and closing punctuation allowed around a sentence.
_OPEN = "\"'«„“‘(¿¡"
_END = re.compile(r"[.?!…][\"'»”’)]*$")
#: Things that are not prose: identifiers, paths, URLs, e-mail addresses, menu paths
#: ("Outils - Options - Writer"), placeholders and keyboard shortcuts ("Ctrl+Maj+F5").
_NOT_PROSE = re.compile(r"_|://|@|\\|\bwww\.|\s-\s.*\s-\s|[<>{}|=]|\+\w")
#: Frequent function words per language. The help leaves some strings untranslated, so a
#: sentence is kept only if it has more function words of its language than of English.
_FUNCTION_WORDS = {
    "en": "the and of to is in you this that for with are be can on or it",
    "fr": "le la les de des du et est un une pour dans que qui vous sur pas au aux ce cette "
    "sont il elle",
    "es": "el la los las de del y es un una para en que se por con su al lo este esta puede",
    "ru": "и в не на что с по для это как из к от или если можно при его",
    "de": "der die das und ist ein eine nicht zu den dem mit sie es für auf im wird",
}
FUNCTION_WORDS: dict[str, frozenset[str]] = {
    lang: frozenset(words.split(" ")) for lang, words in _FUNCTION_WORDS.items()
}
_WORD = re.compile(r"\w+")


def help_package(lang: str) -> str:
    """The Debian package holding the help in ``lang`` (``libreoffice-help-fr``)."""
    return f"libreoffice-help-{_FOLDERS.get(lang, lang).lower()}"


def package_version(package: str) -> str:
    """The installed version of a Debian package, or an error naming the package to install."""
    version = debian_package_version(package)
    if version is None:
        raise SentprobeError(
            f"the Debian package {package} is not installed (or dpkg-query is missing): "
            f"apt-get install {package}"
        )
    return version


def libreoffice_help_dir(lang: str, root: str | Path = HELP_ROOT) -> Path:
    """The help pages of ``lang``; a clear error naming the package when they are missing."""
    folder = Path(root) / _FOLDERS.get(lang, lang)
    if not folder.is_dir() or not any(folder.rglob("*.html")):
        raise SentprobeError(
            f"{folder}: no LibreOffice help pages in {lang!r}; install the Debian package "
            f"{help_package(lang)} (apt-get install {help_package(lang)})"
        )
    return folder


def prose_sentences_any(
    paragraphs: Iterable[str], lang: str, stats: Counter | None = None
) -> Iterator[str]:
    """Split paragraphs into sentences (Moses' rules for ``lang``) and keep ordinary prose.

    Kept: the first letter (after an opening quote or bracket) is upper-case, the sentence
    ends in ``.?!…`` (a closing quote or bracket may follow), it has no inline code
    (``CODE_MARK``), no identifiers, URLs, e-mail addresses, menu paths or key
    combinations, and it reads as ``lang`` (``in_language``), not untranslated English.
    """
    stats = Counter() if stats is None else stats
    splitter = SentenceSplitter(lang)
    for para in paragraphs:
        for sent in splitter.split(para):
            stats["split"] += 1
            first = sent.lstrip(_OPEN)[:1]
            if CODE_MARK in sent:
                stats["rejected: inline code"] += 1
            elif not (first.isalpha() and first.isupper()):
                stats["rejected: does not start with a capital letter"] += 1
            elif not _END.search(sent):
                stats["rejected: does not end with . ? ! or …"] += 1
            elif _NOT_PROSE.search(sent):
                stats["rejected: identifier, URL, menu path or shortcut"] += 1
            elif not in_language(sent, lang):
                stats[f"rejected: not in {lang!r} (untranslated)"] += 1
            else:
                stats["kept"] += 1
                yield sent


def in_language(sentence: str, lang: str) -> bool:
    """Whether ``sentence`` reads as ``lang`` rather than English: more of ``lang``'s function
    words than English ones (for Russian: no more English ones, and mostly Cyrillic
    letters). Languages without a word list (and English itself) pass."""
    if lang == "en" or lang not in FUNCTION_WORDS:
        return True
    words = [w.lower() for w in _WORD.findall(sentence)]
    own = sum(w in FUNCTION_WORDS[lang] for w in words)
    english = sum(w in FUNCTION_WORDS["en"] for w in words)
    if lang == "ru":  # the script decides; product names stay in Latin letters
        letters = [ch for ch in sentence if ch.isalpha()]
        cyrillic = sum("\u0400" <= ch <= "\u04ff" for ch in letters)
        return english <= own and cyrillic >= 0.5 * len(letters)
    return own > english


def libreoffice_help_sentences(
    lang: str, stats: Counter | None = None, root: str | Path = HELP_ROOT
) -> Iterator[str]:
    """Prose sentences of the whole LibreOffice help in ``lang``, page by page (sorted paths,
    so the order is stable). Pages embed paragraphs of other pages, so sentences recur; the
    corpus preprocessing drops repeats."""
    stats = Counter() if stats is None else stats
    for path in sorted(libreoffice_help_dir(lang, root).rglob("*.html")):
        stats["pages"] += 1
        page = path.read_text(encoding="utf-8", errors="replace")
        yield from prose_sentences_any(html_paragraphs(page, LIBREOFFICE_MARKERS), lang, stats)
