"""Surface tasks (Conneau et al. 2018, sec. 2): SentLen and WC. Neither needs a parser."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import ClassVar

from sentprobe.annotation.record import AnnotatedSentence
from sentprobe.datasets.task import SPLITS

from .base import (
    GeneratedTask,
    GenerationError,
    assign_splits,
    make_rng,
    per_class,
    shuffled,
)
from .corpus import Tokens
from .inputs import token_sequences

__all__ = ["SentenceLength", "WordContent"]


@dataclass
class SentenceLength:
    """SentLen: which of six length bins (in Moses tokens) a sentence falls in.

    Labels are the bin indices "0".."5", as in SentEval's sentence_length.txt.
    """

    name: ClassVar[str] = "SentLen"
    file: ClassVar[str] = "sentence_length.txt"

    bins: tuple[tuple[int, int], ...] = ((5, 8), (9, 12), (13, 16), (17, 20), (21, 25), (26, 28))

    @property
    def labels(self) -> list[str]:
        return [str(i) for i in range(len(self.bins))]

    def label(self, tokens: Tokens) -> str | None:
        for i, (lo, hi) in enumerate(self.bins):
            if lo <= len(tokens) <= hi:
                return str(i)
        return None

    def generate(
        self,
        sentences: Sequence[Tokens] | Sequence[AnnotatedSentence],
        sizes: Mapping[str, int],
        seed: int,
    ) -> GeneratedTask:
        sentences = token_sequences(sentences)
        stats: Counter = Counter()
        pools: dict[str, list[Tokens]] = {label: [] for label in self.labels}
        for tokens in sentences:
            label = self.label(tokens)
            if label is None:
                stats["rejected: length outside every bin"] += 1
            else:
                pools[label].append(tokens)
        stats["eligible"] = sum(len(p) for p in pools.values())
        rng = make_rng(seed, self.name)
        drawn = assign_splits(pools, per_class(sizes, len(self.labels), self.name), rng, self.name)
        splits = {}
        for s in SPLITS:
            examples = [(" ".join(t), lab) for lab, ts in drawn[s].items() for t in ts]
            splits[s] = shuffled(examples, rng)
        stats["used"] = sum(len(v) for v in splits.values())
        return GeneratedTask(self.name, self.file, self.labels, splits, stats, asdict(self))


@dataclass
class WordContent:
    """WC: which of ``n_targets`` mid-frequency words a sentence contains.

    Paper rules as parameters: the vocabulary is ranked by corpus frequency of the
    lower-cased tokens (rank 1 = most frequent, ties alphabetical); targets are taken in
    rank order from ``first_rank`` on among alphabetic words of at least ``min_chars``
    characters. Only sentences with exactly one occurrence of exactly one target are used,
    and the label is that word. A word with too few such sentences for a balanced split is
    skipped and the next one in rank order taken instead (the paper's 100k-sentence sets
    from a huge corpus never ran short; small corpora do); ``stats`` counts the skips.
    """

    name: ClassVar[str] = "WC"
    file: ClassVar[str] = "word_content.txt"

    n_targets: int = 1000
    first_rank: int = 2001
    min_chars: int = 4

    def vocabulary(self, sentences: Sequence[Tokens]) -> list[str]:
        """Lower-cased token types by corpus frequency, most frequent first (ties alphabetical)."""
        freq = Counter(tok.lower() for tokens in sentences for tok in tokens)
        return sorted(freq, key=lambda w: (-freq[w], w))

    def eligible(self, word: str) -> bool:
        return word.isalpha() and len(word) >= self.min_chars

    def candidates(self, sentences: Sequence[Tokens]) -> list[str]:
        """All eligible words from ``first_rank`` on, in rank order."""
        vocab = self.vocabulary(sentences)
        return [w for w in vocab[self.first_rank - 1 :] if self.eligible(w)]

    def pools(
        self, sentences: Sequence[Tokens], targets: Sequence[str], stats: Counter | None = None
    ) -> dict[str, list[Tokens]]:
        """Sentences containing exactly one occurrence of exactly one target, per target."""
        wanted = set(targets)
        pools: dict[str, list[Tokens]] = {t: [] for t in targets}
        stats = Counter() if stats is None else stats
        for tokens in sentences:
            hits = [tok.lower() for tok in tokens if tok.lower() in wanted]
            if not hits:
                stats["rejected: no target word"] += 1
            elif len(hits) > 1:
                stats["rejected: more than one target occurrence"] += 1
            else:
                pools[hits[0]].append(tokens)
        return pools

    def select_targets(
        self, sentences: Sequence[Tokens], per_target: int, stats: Counter | None = None
    ) -> list[str]:
        """Up to ``n_targets`` candidates, in rank order, each with ``per_target`` sentences.

        Adding a target can take sentences from others (a sentence with two targets no
        longer counts), so short words are dropped and refilled until nothing changes.
        """
        window = self.candidates(sentences)
        targets, dropped = select_targets(
            window, TargetIndex(sentences, window), self.n_targets, per_target
        )
        if stats is not None:
            stats["targets skipped: too few sentences"] = dropped
        return targets

    def generate(
        self,
        sentences: Sequence[Tokens] | Sequence[AnnotatedSentence],
        sizes: Mapping[str, int],
        seed: int,
    ) -> GeneratedTask:
        sentences = token_sequences(sentences)
        stats: Counter = Counter()
        counts = per_class(sizes, self.n_targets, self.name)
        need = sum(counts.values())
        targets = self.select_targets(sentences, need, stats)
        if len(targets) < self.n_targets:
            raise GenerationError(
                f"{self.name}: only {len(targets)} of the {self.n_targets} requested target "
                f"words (rank >= {self.first_rank}, alphabetic, >= {self.min_chars} characters) "
                f"have {need} sentences each ({counts['train']}/{counts['dev']}/"
                f"{counts['test']} train/dev/test) containing them exactly once and no other "
                f"target. Use n_targets <= {len(targets)}, fewer sentences per target, a "
                f"lower first_rank, or a larger corpus."
            )
        pools = self.pools(sentences, targets, stats)
        stats["eligible"] = sum(len(p) for p in pools.values())
        rng = make_rng(seed, self.name)
        drawn = assign_splits(pools, counts, rng, self.name, "target")
        splits = {}
        for s in SPLITS:
            examples = [(" ".join(t), w) for w, ts in drawn[s].items() for t in ts]
            splits[s] = shuffled(examples, rng)
        stats["used"] = sum(len(v) for v in splits.values())
        return GeneratedTask(self.name, self.file, sorted(targets), splits, stats, asdict(self))


class TargetIndex:
    """Where each candidate word occurs: ``occ[word]`` lists ``(sentence index, count)``.
    Built once per corpus so target selection never re-reads the corpus."""

    def __init__(self, sentences: Sequence[Tokens], words: Iterable[str]) -> None:
        wanted = set(words)
        self.occ: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for si, tokens in enumerate(sentences):
            for w, k in Counter(t.lower() for t in tokens).items():
                if w in wanted:
                    self.occ[w].append((si, k))


def select_targets(
    window: Sequence[str], index: TargetIndex, n_targets: int, per_target: int
) -> tuple[list[str], int]:
    """WC's target choice and how many words it skipped: the first ``n_targets`` words of
    ``window`` not dropped; drop those with fewer than ``per_target`` sentences holding
    exactly one target occurrence (theirs); refill in window order; repeat until none drops.

    Incremental, so its cost is linear in the occurrences of the words it touches (each is
    added once and dropped at most once), whatever the number of rounds: ``good[w]`` counts
    the sentences only ``w`` may use, and changes only where a sentence's target count
    passes through 1.
    """
    hits: dict[int, int] = defaultdict(int)  # sentence -> target occurrences in it
    members: dict[int, list[str]] = defaultdict(list)  # sentence -> targets in it
    good: dict[str, int] = defaultdict(int)
    targets: list[str] = []
    dropped: set[str] = set()
    touched: set[str] = set()  # targets whose ``good`` changed (or new): re-check these
    pos = 0

    def owner(si: int) -> str:  # the one target of a sentence with one target occurrence
        return members[si][0]

    while True:
        while len(targets) < n_targets and pos < len(window):
            w = window[pos]
            pos += 1
            if w in dropped:
                continue
            targets.append(w)
            touched.add(w)
            for si, k in index.occ.get(w, ()):
                if hits[si] == 1:
                    good[owner(si)] -= 1
                    touched.add(owner(si))
                hits[si] += k
                members[si].append(w)
                if hits[si] == 1:
                    good[w] += 1
        short = {w for w in touched if w not in dropped and good[w] < per_target}
        touched.clear()
        if not short:
            return targets, len(dropped)
        for w in short:  # the order of drops does not change the counts they leave
            dropped.add(w)
            for si, k in index.occ.get(w, ()):
                if hits[si] == 1:
                    good[w] -= 1
                hits[si] -= k
                members[si].remove(w)
                if hits[si] == 1:
                    good[owner(si)] += 1
                    touched.add(owner(si))
        targets = [w for w in targets if w not in dropped]
