"""What generators accept: token tuples or ``AnnotatedSentence`` records, seen as surface text.

UD separates syntactic words from what was written: French "du" is the two words "de le".
A probing sentence must show the written form, so a record is rendered through its
multi-word tokens, ``AnnotatedSentence.mwt``: ``(first, last, form)`` with 0-based, inclusive
word indices (CoNLL-U ``2-3 du`` -> ``(1, 2, "du")``). Without them every word is a token.
Generators also need to know which words a surface token covers (SOMO never replaces half of
"du"; CoordInv never cuts one), hence ``Surface`` rather than the record's own rendering.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sentprobe.annotation.record import AnnotatedSentence

from .corpus import Tokens

__all__ = ["Item", "Surface", "annotated_items", "as_tokens", "surface", "token_sequences"]


@dataclass(frozen=True)
class Surface:
    """Surface tokens (``units``) of a record and which words each one covers."""

    units: Tokens
    spans: tuple[tuple[int, int], ...]  # per unit: (first word, last word), inclusive

    def unit_of_word(self, word: int) -> int:
        for u, (first, last) in enumerate(self.spans):
            if first <= word <= last:
                return u
        raise IndexError(word)

    def is_single_word(self, word: int) -> bool:
        first, last = self.spans[self.unit_of_word(word)]
        return first == last

    def text(self) -> str:
        return " ".join(self.units)


def multiword_spans(sent: AnnotatedSentence) -> list[tuple[int, int, str]]:
    """The record's multi-word tokens, validated (sorted, non-overlapping, in range)."""
    spans = sorted(getattr(sent, "mwt", None) or [])
    end = -1
    for first, last, _form in spans:
        if not (end < first <= last < len(sent.tokens)):
            raise ValueError(f"bad multi-word token span {(first, last)} in {sent.tokens}")
        end = last
    return spans


def surface(sent: AnnotatedSentence) -> Surface:
    """The written tokens of a record: multi-word tokens collapsed into their form."""
    if not getattr(sent, "mwt", None):  # fast path (English): every word is a token
        n = len(sent.tokens)
        return Surface(tuple(sent.tokens), tuple(zip(range(n), range(n))))
    starts = {first: (last, form) for first, last, form in multiword_spans(sent)}
    units: list[str] = []
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(sent.tokens):
        last, form = starts.get(i, (i, sent.tokens[i]))
        units.append(form)
        spans.append((i, last))
        i = last + 1
    return Surface(tuple(units), tuple(spans))


def as_tokens(item: Sequence[str] | AnnotatedSentence) -> Tokens:
    """Surface tokens of a token sequence or a record."""
    if isinstance(item, AnnotatedSentence):
        return surface(item).units
    return tuple(item)


def token_sequences(sentences: Iterable[Sequence[str] | AnnotatedSentence]) -> list[Tokens]:
    """What the surface tasks (SentLen, WC, BShift) work on; tuples pass through unchanged."""
    return [s if isinstance(s, tuple) else as_tokens(s) for s in sentences]


@dataclass(frozen=True)
class Item:
    """A record with its surface form, the unit the annotation-based generators draw."""

    sent: AnnotatedSentence
    surface: Surface

    @property
    def text(self) -> str:
        return self.surface.text()

    def __len__(self) -> int:
        return len(self.surface.units)


def annotated_items(
    sentences: Iterable[AnnotatedSentence], stats: Counter, task: str
) -> list[Item]:
    """Records as Items in corpus order; a surface string seen before is dropped (counted),
    so no sentence can land in two splits."""
    seen: set[str] = set()
    out: list[Item] = []
    for sent in sentences:
        if not isinstance(sent, AnnotatedSentence):
            raise TypeError(
                f"{task} needs AnnotatedSentence records (tokens, POS, dependencies), "
                f"not {type(sent).__name__}; annotate the corpus first (sentprobe.annotation)"
            )
        item = Item(sent, surface(sent))
        if item.text in seen:
            stats["rejected: duplicate sentence"] += 1
            continue
        seen.add(item.text)
        out.append(item)
    return out
