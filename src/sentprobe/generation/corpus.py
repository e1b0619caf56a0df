"""Reading a text corpus into Moses-tokenized sentences, the format SentEval expects.

Everything streams: files are read line by line (gzip/bz2/xz are opened transparently) and
sentences are yielded one at a time, so only the filtered, tokenized sentences a generator
samples from are ever held in memory.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Literal

from sacremoses import MosesPunctNormalizer, MosesTokenizer
from sacremoses.corpus import NonbreakingPrefixes

from sentprobe.io import iter_lines

Tokens = tuple[str, ...]


class SentenceSplitter:
    """Splits running text at ``.?!`` the way Moses' split-sentences.perl does.

    A full stop after a non-breaking prefix ("Dr.", "e.g.", "U.S.", or "No." before a
    number) does not end a sentence; neither does one followed by a lower-case word.
    """

    _BOUNDARY = re.compile(r"([.?!]+[\"')\]]*)\s+(?=[\"'(\[]*[\w])")

    def __init__(self, lang: str = "en") -> None:
        self.prefixes: set[str] = set()
        self.numeric_only: set[str] = set()
        for entry in NonbreakingPrefixes().words(lang):
            word, _, flag = entry.partition(" ")
            (self.numeric_only if "NUMERIC_ONLY" in flag else self.prefixes).add(word)

    def split(self, text: str) -> list[str]:
        out: list[str] = []
        start = 0
        for m in self._BOUNDARY.finditer(text):
            nxt = text[m.end() :].lstrip("\"'([")
            if not (nxt[:1].isupper() or nxt[:1].isdigit()):
                continue
            if m.group(1).startswith(".") and len(m.group(1).rstrip("\"')]")) == 1:
                words = text[start : m.start()].split()
                last = words[-1].lstrip("\"'([") if words else ""
                if last in self.prefixes or re.fullmatch(r"(?:\w\.)+\w", last):
                    continue
                if last in self.numeric_only and nxt[:1].isdigit():
                    continue
            out.append(text[start : m.end(1)].strip())
            start = m.end()
        rest = text[start:].strip()
        if rest:
            out.append(rest)
        return out


def read_sentences(
    path: str | Path, layout: Literal["lines", "running"] = "lines", lang: str = "en"
) -> Iterator[str]:
    """Stream raw sentences from a text file.

    ``lines``: one sentence per line (blank lines skipped). ``running``: running text,
    paragraphs separated by blank lines, each split into sentences.
    """
    if layout == "lines":
        for _, line in iter_lines(path):
            if line.strip():
                yield line.strip()
        return
    if layout != "running":
        raise ValueError(f"layout must be 'lines' or 'running', not {layout!r}")
    splitter = SentenceSplitter(lang)
    para: list[str] = []
    for _, line in iter_lines(path):
        if line.strip():
            para.append(line.strip())
        elif para:
            yield from splitter.split(" ".join(para))
            para = []
    if para:
        yield from splitter.split(" ".join(para))


@dataclass
class MosesPreprocessor:
    """Normalizes punctuation, Moses-tokenizes, keeps 5-28 token sentences, drops repeats.

    ``stats`` counts what was kept and why the rest was rejected; the suite's provenance
    reports it.
    """

    lang: str = "en"
    min_tokens: int = 5
    max_tokens: int = 28
    deduplicate: bool = True
    stats: Counter = field(default_factory=Counter)

    @cached_property
    def _normalizer(self) -> MosesPunctNormalizer:
        return MosesPunctNormalizer(self.lang)

    @cached_property
    def _tokenizer(self) -> MosesTokenizer:
        return MosesTokenizer(self.lang)

    def tokenize(self, sentence: str) -> Tokens:
        """Moses tokens, unescaped (``"`` not ``&quot;``), as in the SentEval files."""
        text = self._normalizer.normalize(sentence)
        return tuple(self._tokenizer.tokenize(text, escape=False))

    def __call__(self, sentences: Iterable[str]) -> Iterator[Tokens]:
        seen: set[str] = set()
        for sentence in sentences:
            self.stats["read"] += 1
            tokens = self.tokenize(sentence)
            if not self.min_tokens <= len(tokens) <= self.max_tokens:
                self.stats[f"rejected: not {self.min_tokens}-{self.max_tokens} tokens"] += 1
                continue
            if self.deduplicate:
                key = " ".join(tokens)
                if key in seen:
                    self.stats["rejected: duplicate"] += 1
                    continue
                seen.add(key)
            self.stats["kept"] += 1
            yield tokens
