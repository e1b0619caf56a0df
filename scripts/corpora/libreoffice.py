"""Sentences in any language from the LibreOffice help (Debian ``libreoffice-help-<lang>``).

The help pages are translated into many languages under the MPL-2.0, which makes them a
redistributable source of ordinary (if technical) prose for the built-in samples. One
reader serves every language: English pages go through the English prose rules of the
English sample corpus (``prose.prose_sentences``), other languages through the rules that
hold for any alphabetic script (``prose.prose_sentences_any``: a capital first letter such
as ``É`` or ``Д``, ``.?!…`` last, optionally followed by a closing quote or bracket, and
not untranslated English).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from sentprobe.errors import SentprobeError

from .prose import LIBREOFFICE_MARKERS, html_paragraphs, prose_sentences, prose_sentences_any

HELP_ROOT = Path("/usr/share/libreoffice/help")
#: Help folder names that differ from the language code.
_FOLDERS = {"en": "en-US"}


def help_package(lang: str) -> str:
    """The Debian package holding the help in ``lang`` (``libreoffice-help-fr``)."""
    return f"libreoffice-help-{_FOLDERS.get(lang, lang).lower()}"


def libreoffice_help_dir(lang: str, root: str | Path = HELP_ROOT) -> Path:
    """The help pages of ``lang``; a clear error naming the package when they are missing."""
    folder = Path(root) / _FOLDERS.get(lang, lang)
    if not folder.is_dir() or not any(folder.rglob("*.html")):
        raise SentprobeError(
            f"{folder}: no LibreOffice help pages in {lang!r}; install the Debian package "
            f"{help_package(lang)} (apt-get install {help_package(lang)})"
        )
    return folder


def help_pages(lang: str, root: str | Path = HELP_ROOT) -> list[Path]:
    """The help's HTML pages in ``lang``, in a stable (sorted) order."""
    return sorted(libreoffice_help_dir(lang, root).rglob("*.html"))


def libreoffice_help_sentences(
    lang: str, stats: Counter | None = None, root: str | Path = HELP_ROOT
) -> Iterator[str]:
    """Prose sentences of the whole LibreOffice help in ``lang``, page by page. Pages embed
    paragraphs of other pages, so sentences recur; the corpus preprocessing drops repeats."""
    stats = Counter() if stats is None else stats
    for path in help_pages(lang, root):
        paragraphs = html_paragraphs(
            path.read_text(encoding="utf-8", errors="replace"), LIBREOFFICE_MARKERS
        )
        if lang == "en":
            yield from prose_sentences(paragraphs, stats)
        else:
            yield from prose_sentences_any(paragraphs, lang, stats)
