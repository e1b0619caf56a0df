"""A small synthetic English corpus for the function-word generators (Kim et al. 2019):
sentences with one wh-word, repeated articles, one coordinating conjunction, in paragraphs;
articles and conjunctions in frames where a swap is wrong ("the same", "such a", "both X and
Y", "either X or Y", "not only X but also Y"), as the Def and Coord generators require."""

from __future__ import annotations

import numpy as np

_NAMES = ["Anna", "Ben", "Clara", "David", "Emma", "Felix", "Grace", "Henry", "Iris", "Jack"]
_NOUNS = ["cat", "dog", "letter", "house", "garden", "river", "car", "book", "apple", "hour",
          "window", "road", "idea", "umbrella", "owner", "engine", "island", "table"]  # fmt: skip
_VERBS = ["found", "saw", "painted", "opened", "moved", "cleaned", "closed", "sold", "kept"]
_WH = ["who", "what", "where", "when", "why", "how"]
_CONJ = ["and", "but", "or"]
_TAIL = ["quietly", "again", "today", "at", "noon"]


def synthetic_corpus(n: int, seed: int = 0) -> list[list[str]]:
    """``n`` paragraphs of six sentences each (one per line; blank line between)."""
    rng = np.random.default_rng(seed)

    def pick(words: list[str]) -> str:
        return words[int(rng.integers(len(words)))]

    def a(noun: str) -> str:
        return f"{'an' if noun[0] in 'aeiou' or noun == 'hour' else 'a'} {noun}"

    def frame(conj: str) -> str:
        """Two names joined by ``conj`` in a frame where any other conjunction is wrong."""
        x, y = pick(_NAMES), pick(_NAMES)
        return {"and": f"both {x} and {y}", "or": f"either {x} or {y}",
                "but": f"not only {x} but also {y}"}[conj]  # fmt: skip

    def tail() -> str:
        """0-5 more words, so sentence lengths vary as in real text (EOS pairs are coupled
        by their segment lengths)."""
        return " ".join(_TAIL[: int(rng.integers(len(_TAIL) + 1))]) or "now"

    paragraphs = []
    for i in range(n):
        para = [
            f"{pick(_NAMES)} asked {pick(_WH)} {pick(_NAMES)} {pick(_VERBS)} the {pick(_NOUNS)} "
            f"number {i} .",
            f"{pick(_NAMES)} {pick(_VERBS)} the same {pick(_NOUNS)} near the {pick(_NOUNS)} in "
            f"{1900 + i} .",
            f"{pick(_NAMES)} {pick(_VERBS)} such {a(pick(_NOUNS))} and {a(pick(_NOUNS))} on day "
            f"{i} .",
            f"{pick(_NAMES)} {pick(_VERBS)} the {pick(_NOUNS)} {frame(pick(_CONJ))} at {i} "
            "o'clock .",
            f"Nobody knew {pick(_WH)} the {pick(_NOUNS)} stood there in week {i} .",
            f"{pick(_NAMES)} liked {frame(pick(_CONJ))} in year {i} .",
        ]
        paragraphs.append([f"{s[:-2]} {tail()} ." if s.endswith(" .") else s for s in para])
    return paragraphs


def write_corpus(path, n: int = 160, seed: int = 0):
    """The corpus as text: one sentence a line, a blank line between paragraphs."""
    text = "\n\n".join("\n".join(p) for p in synthetic_corpus(n, seed))
    path.write_text(text + "\n", encoding="utf-8")
    return path
