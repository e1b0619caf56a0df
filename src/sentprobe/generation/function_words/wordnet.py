"""Antonyms from the WordNet 3.0 database files (Debian ``wordnet-base``:
``/usr/share/wordnet/data.{adj,adv,noun,verb}``), read directly: no nltk, no network.

A data line is ``offset lex_filenum ss_type w_cnt word lex_id ... p_cnt ptr... | gloss``;
an antonym is a lexical pointer ``! target_offset pos SSTT`` from word ``SS`` of this synset
to word ``TT`` of the target synset. Only single-word lemmas are kept (``clean``/``dirty``,
``uncle``/``aunt``), lower-cased, adjective markers like ``(a)`` removed.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

from sentprobe.errors import SentprobeError

DEFAULT_WORDNET = Path(os.environ.get("WNSEARCHDIR", "/usr/share/wordnet"))


def default_wordnet() -> Path:
    """``$WNSEARCHDIR`` as it is now (set after import too), else Debian's folder."""
    return Path(os.environ.get("WNSEARCHDIR", "/usr/share/wordnet"))


POS_FILES = {"a": "adj", "s": "adj", "r": "adv", "n": "noun", "v": "verb"}
_MARKER = re.compile(r"\((?:a|p|ip)\)$")


def _synsets(path: Path) -> dict[int, tuple[list[str], list[tuple[int, str, int, int]]]]:
    """offset -> (words, antonym pointers (target offset, target pos, source no., target no.))."""
    out = {}
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if line.startswith("  "):  # licence header
                continue
            fields = line.split(" | ", 1)[0].split()
            offset, w_cnt = int(fields[0]), int(fields[3], 16)
            words = [_MARKER.sub("", fields[4 + 2 * i]).lower() for i in range(w_cnt)]
            at = 4 + 2 * w_cnt
            p_cnt = int(fields[at])
            ptrs = []
            for j in range(p_cnt):
                symbol, target, pos, st = fields[at + 1 + 4 * j : at + 5 + 4 * j]
                if symbol == "!":
                    ptrs.append((int(target), pos, int(st[:2], 16), int(st[2:], 16)))
            out[offset] = (words, ptrs)
    return out


def antonyms(root: str | Path = DEFAULT_WORDNET) -> dict[str, frozenset[str]]:
    """Lower-cased single word -> its WordNet antonyms (all parts of speech)."""
    found: dict[str, set[str]] = defaultdict(set)
    for (word, _), targets in antonyms_by_pos(root).items():
        found[word] |= targets
    return {w: frozenset(v) for w, v in found.items()}


#: UD part of speech -> WordNet's ("a": adjectives, satellites included).
UPOS_TO_WORDNET = {"ADJ": "a", "ADV": "r", "NOUN": "n", "VERB": "v"}


@lru_cache(maxsize=4)
def antonyms_by_pos(root: str | Path = DEFAULT_WORDNET) -> dict[tuple[str, str], frozenset[str]]:
    """(lower-cased single word, WordNet part of speech a/r/n/v) -> its antonyms of the same
    part of speech, so a verb is never swapped for an adjective's antonym."""
    root = Path(root)
    missing = [p for p in sorted(set(POS_FILES.values())) if not (root / f"data.{p}").is_file()]
    if missing:
        raise SentprobeError(
            f"WordNet data files missing in {root} ({', '.join(missing)}): apt-get install "
            "wordnet-base, or set WNSEARCHDIR to a WordNet 3.0 dict directory"
        )
    tables = {p: _synsets(root / f"data.{p}") for p in sorted(set(POS_FILES.values()))}
    found: dict[tuple[str, str], set[str]] = defaultdict(set)
    for file_pos, table in tables.items():
        for words, ptrs in table.values():
            for target, pos, source_no, target_no in ptrs:
                if POS_FILES[pos] != file_pos:
                    continue  # WordNet's antonyms stay within one part of speech
                target_words = tables[POS_FILES[pos]][target][0]
                a, b = words[source_no - 1], target_words[target_no - 1]
                if "_" not in a and "_" not in b and a != b:
                    tag = "a" if pos == "s" else pos
                    found[a, tag].add(b)
                    found[b, tag].add(a)
    return {k: frozenset(v) for k, v in found.items()}


#: WordNet antonym pairs that are not the negation of one another, left out of the Negation
#: set's lexicon: amounts and degrees (more/less: a quantity, tested by Quant and Comp),
#: converses (borrow/lend, buy/sell: the same event from the other side), relatives and sexes
#: (uncle/aunt), directions and sides (tested by Spatial) and music (sharp/natural).
NOT_NEGATION: frozenset[frozenset[str]] = frozenset(
    frozenset(pair.split("/"))
    for pair in """more/less most/least many/few much/little more/fewer most/fewest
    borrow/lend buy/sell give/take teach/learn send/receive import/export come/go
    question/answer employer/employee teacher/student parent/child lend/borrow
    uncle/aunt father/mother son/daughter brother/sister husband/wife man/woman boy/girl
    king/queen male/female masculine/feminine nephew/niece grandfather/grandmother
    grandson/granddaughter gentleman/lady host/hostess actor/actress prince/princess
    men/women he/she him/her his/hers
    left/right up/down east/west north/south upstairs/downstairs above/below over/under
    inside/outside front/back here/there
    physical/mental beginning/end start/end first/last order/disorder
    sharp/natural flat/natural sharp/flat major/minor""".split()  # noqa: SIM905
)


@lru_cache(maxsize=4)
def negation_antonyms(
    root: str | Path = DEFAULT_WORDNET,
) -> dict[tuple[str, str], frozenset[str]]:
    """:func:`antonyms_by_pos` without the pairs of ``NOT_NEGATION``: the antonyms whose swap
    negates a sentence ("open"/"closed", "possible"/"impossible")."""
    out = {}
    for key, targets in antonyms_by_pos(root).items():
        kept = frozenset(t for t in targets if frozenset((key[0], t)) not in NOT_NEGATION)
        if kept:
            out[key] = kept
    return out


@lru_cache(maxsize=4)
def noun_forms(root: str | Path = DEFAULT_WORDNET) -> tuple[frozenset[str], frozenset[str]]:
    """(single-word noun lemmas of ``index.noun``, irregular plural forms of ``noun.exc``:
    "data", "children", "criteria"); empty sets when the files are missing."""
    root = Path(root)
    index, exc = root / "index.noun", root / "noun.exc"
    if not index.is_file() or not exc.is_file():
        return frozenset(), frozenset()
    with open(index, encoding="utf-8", errors="replace") as fh:
        lemmas = frozenset(line.split(" ", 1)[0] for line in fh if not line.startswith(" "))
    with open(exc, encoding="utf-8", errors="replace") as fh:
        pairs = [line.split() for line in fh if line.strip()]
    irregular = frozenset(p[0] for p in pairs if len(p) > 1 and p[0] not in p[1:])
    return lemmas, irregular


#: -s noun lemmas of WordNet that are singular with an article ("a means", "a species"),
#: although their stem is a noun lemma too.
SINGULAR_S_LEMMAS = frozenset(
    """means species series news physics lens gas bus yes alias atlas bias canvas chaos
    measles headquarters crossroads works barracks gallows innings summons whereabouts
    odds thanks mathematics economics politics ethics""".split()  # noqa: SIM905
)


def is_plural_noun(word: str, root: str | Path = DEFAULT_WORDNET) -> bool:
    """Whether ``word`` is a plural noun by WordNet: an irregular plural of ``noun.exc``
    ("data", "children", "criteria"), or an -s/-es/-ies form whose stem is a noun lemma
    ("houses", "boxes", "cities", "letters"), unless it is a lemma that is not such a plural
    ("news", "glass", "series", ``SINGULAR_S_LEMMAS``). Independent of the generator's
    ``articles.looks_plural``, so the audit does not share the blind spots of the filter it
    checks."""
    lemmas, irregular = noun_forms(root)
    w = word.lower()
    if w in irregular:
        return True
    if not w.isalpha() or len(w) < 4 or not w.endswith("s") or w.endswith("ss"):
        return False
    if w in SINGULAR_S_LEMMAS:
        return False
    stems = [w[:-1]]
    if w.endswith("es"):
        stems.append(w[:-2])
    if w.endswith("ies"):
        stems.append(w[:-3] + "y")
    return any(len(s) >= 3 and s in lemmas for s in stems)
