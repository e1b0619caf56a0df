"""Prose sentences from HTML pages and paragraphs, and the corpus filter of ``sentprobe build``.

HTML: only paragraph text (``<p>``) inside the page body is kept; code blocks, tables,
scripts and navigation are skipped. Sentences with inline code are dropped unless the code
is a single plain word ("None", "if"), so what remains reads as ordinary prose.
``prose_sentences`` applies the English rules (a capital first, ``.?!`` last, no
identifiers or release-note boilerplate); ``prose_sentences_any`` the rules that hold for
any alphabetic script, plus a check that the sentence is in the wanted language.
``distinct_sentences`` keeps what ``sentprobe build`` would keep (5-28 Moses tokens, each
token sequence once), so a corpus assembled from these loses nothing there.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from html.parser import HTMLParser

from sentprobe.generation.corpus import MosesPreprocessor, SentenceSplitter

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
