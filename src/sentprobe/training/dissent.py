"""DisSent training pairs (Nie et al. 2019): two clauses and the discourse marker joining them.

Nie et al. find a marker by its dependency pattern, then cut the sentence into the clause
the marker introduces (S2) and the clause it attaches to (S1); the model predicts the
marker from the two clause vectors. This module implements that protocol over sentprobe's
dependency annotation (Universal Dependencies relations), for this subset of markers and
patterns:

* subordinating markers ``because, if, when, before, after, while, although, though, as,
  so``: the marker is a ``mark`` dependent of S2's head, and S2's head is an ``advcl`` of
  S1's head ("She left because it rained", "Because it rained, she left");
* coordinating markers ``and, but, so``: the marker is a ``cc`` dependent of S2's head, S2's
  head is a ``conj`` of S1's head, and both heads are verbs (or auxiliaries/copulas) with
  their own subject, so that both halves are clauses ("He ran and she walked", not "cats
  and dogs");
* ``also``, ``then``, ``still`` (Nie's adverbial markers): an ``advmod`` dependent of S2's
  head, S2 a ``conj`` or ``advcl`` of S1 as above.

S2 is the marker's head's subtree minus the marker; S1 is the rest of S1's head's subtree;
punctuation at either end of a clause is dropped; each clause must keep at least
``MIN_WORDS`` words. Nie et al.'s other filters (a length ratio between clauses, balancing
the marker counts, their full list of 15 markers) are not applied; the per-marker counts
are in the run manifest.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..annotation.record import AnnotatedSentence

SUBORDINATING = frozenset(
    {"because", "if", "when", "before", "after", "while", "although", "though", "as", "so"}
)
COORDINATING = frozenset({"and", "but", "so"})
ADVERBIAL = frozenset({"also", "then", "still"})
MARKERS = tuple(sorted(SUBORDINATING | COORDINATING | ADVERBIAL))
MIN_WORDS = 2
_VERBAL = {"VERB", "AUX"}


@dataclass(frozen=True)
class Pair:
    first: str
    second: str
    marker: str


def _subtree(rec: AnnotatedSentence, i: int) -> set[int]:
    out, todo = {i}, [i]
    while todo:
        for c in rec.children(todo.pop()):
            if c not in out:
                out.add(c)
                todo.append(c)
    return out


def _clause(rec: AnnotatedSentence, positions: set[int]) -> str:
    words = sorted(positions)
    while words and rec.upos[words[0]] == "PUNCT":
        words.pop(0)
    while words and rec.upos[words[-1]] == "PUNCT":
        words.pop()
    return " ".join(rec.tokens[k] for k in words)


def _is_clause_head(rec: AnnotatedSentence, i: int) -> bool:
    deps = rec.children(i)
    verbal = rec.upos[i] in _VERBAL or any(rec.deprels[d] == "cop" for d in deps)
    return verbal and any(rec.deprels[d].split(":")[0] in ("nsubj", "csubj", "expl") for d in deps)


def extract_pairs(rec: AnnotatedSentence) -> list[Pair]:
    """Every (S1, S2, marker) the patterns find in one parsed sentence."""
    out = []
    for m, word in enumerate(rec.tokens):
        marker = word.lower()
        head = rec.heads[m] - 1
        if marker not in MARKERS or head < 0:
            continue
        rel, head_rel = rec.deprels[m], rec.deprels[head].split(":")[0]
        parent = rec.heads[head] - 1
        if parent < 0:
            continue
        subordinate = rel == "mark" and marker in SUBORDINATING and head_rel == "advcl"
        coordinate = rel == "cc" and marker in COORDINATING and head_rel == "conj"
        adverbial = rel == "advmod" and marker in ADVERBIAL and head_rel in ("conj", "advcl")
        ok = subordinate or (
            (coordinate or adverbial)
            and _is_clause_head(rec, head)
            and _is_clause_head(rec, parent)
        )
        if not ok:
            continue
        s2 = _subtree(rec, head) - {m}
        s1 = _subtree(rec, parent) - s2 - {m}
        first, second = _clause(rec, s1), _clause(rec, s2)
        if len(first.split()) >= MIN_WORDS and len(second.split()) >= MIN_WORDS:
            out.append(Pair(first, second, marker))
    return out
