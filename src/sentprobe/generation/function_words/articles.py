"""Choosing "a" or "an" by the sound of the next word (Kim et al. 2019, fn. 3: "we choose a/an
as necessary based on the word it precedes").

The spelling decides unless the word is on an exception list: a vowel letter that sounds like
a consonant ("a university", "a European", "a one-time") or a silent h ("an hour", "an
honest"); letters read one by one (an FBI, an MP3, an X-ray) use the sound of the letter's
name; numerals use the sound of the number read aloud (an 8, an 11, an 18, a 1990s).
"""

from __future__ import annotations

import re

#: Words starting with a vowel letter but a consonant sound ("yoo", "w"): prefixes of the
#: lower-cased word ("uni" is "yoo" unless an un- prefix meets an i-word, below).
CONSONANT_SOUND_PREFIXES: tuple[str, ...] = (
    "eu", "ewe", "one", "once", "uni", "use", "usa", "usu", "uti", "utop", "ura", "ure",
    "uri", "uro", "uru", "ubiq", "uga", "uku", "ukr",
)  # fmt: skip
#: un- + a word starting with i ("an unimportant", "an uninformed", "an unidentified").
UN_I_PREFIXES: tuple[str, ...] = ("unim", "unin", "unid", "unig", "unip", "unir")
#: Words starting with a silent h: prefixes of the lower-cased word.
SILENT_H_PREFIXES: tuple[str, ...] = ("hour", "honest", "honor", "honour", "heir", "herb")
#: Letter names that start with a vowel sound (eff, aitch, ell, em, en, ess, ex, ...).
VOWEL_LETTERS = frozenset("AEFHILMNORSX")

_NUMBER = re.compile(r"^(\d[\d,.]*)")


def _number_takes_an(digits: str) -> bool:
    """An 8, an 80, an 11, an 18, an 11,000 (eleven thousand), an 18.5; a 1, a 100."""
    plain = digits.replace(",", "").split(".")[0]
    if plain.startswith("8"):
        return True
    if plain[:2] in ("11", "18"):
        # "eleven"/"eighteen" only when the leading group has two digits: 11, 11000, 18000000
        return len(plain) % 3 == 2
    return False


def _is_initialism(word: str) -> bool:
    """Read letter by letter: all capitals (FBI, MP3) or one capital letter (X-ray, A-list)."""
    letters = [c for c in word if c.isalpha()]
    return (
        bool(letters)
        and word[:1].isupper()
        and (len(word) == 1 or all(c.isupper() for c in letters))
    )


def takes_an(word: str) -> bool:
    """Whether the indefinite article before ``word`` is "an"."""
    head = re.split(r"[-/]", word, maxsplit=1)[0] or word
    number = _NUMBER.match(head)
    if number:
        return _number_takes_an(number.group(1))
    if _is_initialism(head):
        return head[0] in VOWEL_LETTERS
    low = word.lower()
    if not low or not low[0].isalpha():
        return False
    if low.startswith(SILENT_H_PREFIXES):
        return True
    if low[0] not in "aeiou":
        return False
    head_low = head.lower()
    if head_low.startswith(UN_I_PREFIXES):
        return True
    return not head_low.startswith(CONSONANT_SOUND_PREFIXES)


def indefinite_for(word: str, capital: bool = False) -> str:
    """ "a" or "an" before ``word`` ("A"/"An" when ``capital``)."""
    article = "an" if takes_an(word) else "a"
    return article.capitalize() if capital else article


#: Plurals without -s, and -s words that are singular (or not nouns) although the regular
#: -s rule would take them for plurals.
IRREGULAR_PLURALS = frozenset(
    """people children men women feet teeth mice geese oxen dice police cattle data criteria
    phenomena media bacteria alumni analyses axes bases crises theses""".split()  # noqa: SIM905
)
SINGULAR_S = frozenset(
    """always perhaps whereas thus plus yes this his hers its ours yours theirs was has does is
    news series species means lens bus gas alias atlas bias canvas chaos christmas physics
    mathematics economics politics ethics athletics linguistics statistics genetics
    headquarters measles mumps billiards diabetes lbs""".split()  # noqa: SIM905
)
_LOWER_WORD = re.compile(r"^[a-z]+$")


def looks_plural(word: str) -> bool:
    """A plural noun by its form, without a tagger: an irregular plural, or a lower-case word
    of 4+ letters in -s that is not in -ss/-us/-is nor a known singular -s word ("houses",
    "people"; not "glass", "status", "news")."""
    w = word.lower()
    if w in IRREGULAR_PLURALS:
        return True
    if not _LOWER_WORD.match(word) or len(w) < 4 or w in SINGULAR_S:
        return False
    return w.endswith("s") and not w.endswith(("ss", "us", "is"))
