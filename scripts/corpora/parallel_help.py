"""Parallel sentences from the LibreOffice help: English and another language, aligned.

The help is translated paragraph by paragraph and every translated page keeps the English
page's path and its paragraphs' ``id`` attributes (``text/shared/guide/doc_open.html``,
``<p id="par_id3149398">``), so a pair is (same page path, same paragraph id). A paragraph
pair is split into sentences on each side (Moses' rules of each language); it is kept only
when both sides split into the same number of sentences, which are then paired in order, and
each pair only when both sentences pass the prose rules of the monolingual samples
(``prose.prose_sentences`` for English, ``prose.prose_sentences_any`` for the other language:
no inline code, menu paths, untranslated English...). Paragraphs shown only on one platform
or module (``hidden`` with a class) are skipped, as in the monolingual reader.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from sentprobe.generation.corpus import SentenceSplitter

from .libreoffice import HELP_ROOT, help_pages, libreoffice_help_dir
from .prose import LIBREOFFICE_MARKERS, _ParagraphParser, prose_sentences, prose_sentences_any


class _IdParagraphParser(_ParagraphParser):
    """The monolingual paragraph parser, also recording each kept paragraph's ``id``."""

    def __init__(self) -> None:
        super().__init__(LIBREOFFICE_MARKERS)
        self.ids: list[str | None] = []
        self._open_id: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        before = self.para
        super().handle_starttag(tag, attrs)
        if before is None and self.para is not None:  # a paragraph started
            self._open_id = dict(attrs).get("id")

    def _close(self, tag: str, role: str, depth: int) -> None:
        kept = len(self.paragraphs)
        super()._close(tag, role, depth)
        if len(self.paragraphs) > kept:
            self.ids.append(self._open_id)


def paragraphs_by_id(path: Path) -> dict[str, str]:
    """``id -> text`` of the prose paragraphs of one help page (paragraphs without an id or
    with an id used twice on the page are left out: they cannot be aligned)."""
    parser = _IdParagraphParser()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    parser.close()
    ids = Counter(i for i in parser.ids if i)
    return {
        pid: text
        for pid, text in zip(parser.ids, parser.paragraphs)
        if pid and ids[pid] == 1 and text
    }


def _is_prose(sentence: str, lang: str) -> bool:
    if lang == "en":
        return list(prose_sentences([sentence])) == [sentence]
    return list(prose_sentences_any([sentence], lang)) == [sentence]


def help_sentence_pairs(
    lang: str, stats: Counter | None = None, root: str | Path = HELP_ROOT
) -> Iterator[tuple[str, str, str]]:
    """``(english, translation, "page#paragraph-id")`` for every aligned prose sentence pair
    of the help in English and ``lang``, page by page in sorted order (repeats included:
    pages embed each other's paragraphs)."""
    stats = Counter() if stats is None else stats
    en_root = libreoffice_help_dir("en", root)
    other_root = libreoffice_help_dir(lang, root)
    split_en, split_other = SentenceSplitter("en"), SentenceSplitter(lang)
    for en_page in help_pages("en", root):
        rel = en_page.relative_to(en_root)
        other_page = other_root / rel
        if not other_page.is_file():
            stats["pages without a translation"] += 1
            continue
        stats["pages"] += 1
        other = paragraphs_by_id(other_page)
        for pid, en_text in paragraphs_by_id(en_page).items():
            if pid not in other:
                stats["paragraphs without a translation"] += 1
                continue
            en_sents, other_sents = split_en.split(en_text), split_other.split(other[pid])
            if len(en_sents) != len(other_sents):
                stats["paragraphs with different sentence counts"] += 1
                continue
            for en, tr in zip(en_sents, other_sents):
                if not (_is_prose(en, "en") and _is_prose(tr, lang)):
                    stats["pairs rejected: not prose on one side"] += 1
                    continue
                stats["pairs"] += 1
                yield en, tr, f"{rel}#{pid}"
