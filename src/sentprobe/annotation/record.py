"""One annotated sentence, the common currency between annotators and task generators.

Language-independent core in Universal Dependencies terms (tokens, UPOS, lemmas, morphological
features, a dependency tree), plus what English generators need when an annotator provides it:
Penn Treebank tags (``xpos``) and a constituency tree (bracketed, PTB style). Generators never
see which annotator produced a record; the manifest of a generated suite records that.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class AnnotatedSentence:
    """Columns are aligned by token; ``heads`` are 1-based with 0 for the root (CoNLL-U)."""

    tokens: list[str]
    upos: list[str]
    heads: list[int]
    deprels: list[str]
    lemmas: list[str] = field(default_factory=list)
    xpos: list[str] = field(default_factory=list)
    feats: list[dict[str, str]] = field(default_factory=list)
    constituency: str | None = None  # "(ROOT (S (NP ...) (VP ...) (. .)))" when available
    text: str | None = None  # the original surface string, if known
    sent_id: str | None = None
    lang: str = "und"
    # Multi-word tokens as (first, last, surface) over 0-based word indices, inclusive: Spanish
    # "del" = words "de" "el". Syntax is over words; ``surface_tokens`` renders what was written.
    mwt: list[tuple[int, int, str]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def root(self) -> int:
        """0-based index of the root token (the first one, if a parser produced several)."""
        return self.heads.index(0)

    def children(self, i: int) -> list[int]:
        """0-based indices of the dependents of 0-based token ``i``."""
        return [j for j, h in enumerate(self.heads) if h == i + 1]

    def surface_tokens(self) -> list[str]:
        """Tokens as written: each multi-word token's words replaced by its surface form."""
        if not self.mwt:
            return list(self.tokens)
        spans = {first: (last, form) for first, last, form in self.mwt}
        out: list[str] = []
        i = 0
        while i < len(self.tokens):
            if i in spans:
                last, form = spans[i]
                out.append(form)
                i = last + 1
            else:
                out.append(self.tokens[i])
                i += 1
        return out

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v not in (None, [], "und")} | {
            "lang": self.lang
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> AnnotatedSentence:
        if "mwt" in obj:
            obj = obj | {"mwt": [tuple(span) for span in obj["mwt"]]}
        return cls(**obj)
