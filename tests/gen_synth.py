"""Small synthetic annotated corpora whose properties the generator tests can predict."""

from __future__ import annotations

import itertools
import random

from sentprobe.annotation.backends import Annotator
from sentprobe.annotation.record import AnnotatedSentence

SYL = ["ba", "ke", "di", "lo", "mu", "ra", "si", "to", "ve", "zu"]
ROOTS = ["".join(p) for p in itertools.product(SYL, repeat=2)]  # 100 pseudo-words


def record(rows, lang="en", constituency=None, mwt=()) -> AnnotatedSentence:
    """``rows``: (form, upos, xpos, head, deprel, feats-dict) per word, heads 1-based."""
    return AnnotatedSentence(
        tokens=[r[0] for r in rows],
        upos=[r[1] for r in rows],
        xpos=[r[2] for r in rows],
        heads=[r[3] for r in rows],
        deprels=[r[4] for r in rows],
        feats=[dict(r[5]) for r in rows],
        constituency=constituency,
        lang=lang,
        mwt=list(mwt),
    )


NOUNS = [f"{r}n" for r in ROOTS[:30]]  # "baban" ...; plural adds "s"
VERBS = [f"{r}v" for r in ROOTS[30:45]]  # past adds "ed", present adds "s"
ADVS = [f"{r}ly" for r in ROOTS[45:100]]


def noun(rng: random.Random) -> tuple[str, str, dict]:
    stem = rng.choice(NOUNS)
    if rng.random() < 0.5:
        return stem, "NN", {"Number": "Sing"}
    return stem + "s", "NNS", {"Number": "Plur"}


def verb(rng: random.Random) -> tuple[str, str, dict]:
    stem = rng.choice(VERBS)
    if rng.random() < 0.5:
        return stem + "ed", "VBD", {"Tense": "Past", "VerbForm": "Fin"}
    return stem + "s", "VBZ", {"Tense": "Pres", "VerbForm": "Fin"}


def svo(rng: random.Random, aux: bool = False) -> AnnotatedSentence:
    """``The N V the N advs .`` (optionally ``The N has V-ed the N ...``); root = verb."""
    s, s_tag, s_feats = noun(rng)
    o, o_tag, o_feats = noun(rng)
    rows = [("The", "DET", "DT", 2, "det", {}), (s, "NOUN", s_tag, 0, "nsubj", s_feats)]
    if aux:
        has = rng.choice([("has", "VBZ", "Pres"), ("had", "VBD", "Past")])
        rows.append((has[0], "AUX", has[1], 4, "aux", {"Tense": has[2], "VerbForm": "Fin"}))
        v = rng.choice(VERBS) + "en"
        rows.append((v, "VERB", "VBN", 0, "root", {"Tense": "Past", "VerbForm": "Part"}))
    else:
        v, v_tag, v_feats = verb(rng)
        rows.append((v, "VERB", v_tag, 0, "root", v_feats))
    vi = len(rows)  # 1-based index of the verb
    rows[1] = rows[1][:3] + (vi, "nsubj", rows[1][5])
    rows += [("the", "DET", "DT", vi + 2, "det", {}), (o, "NOUN", o_tag, vi, "obj", o_feats)]
    for _ in range(rng.randint(0, 6)):
        rows.append((rng.choice(ADVS), "ADV", "RB", vi, "advmod", {}))
    rows.append((".", "PUNCT", ".", vi, "punct", {}))
    return record(rows)


def svo_corpus(n: int, seed: int = 0, aux_rate: float = 0.0) -> list[AnnotatedSentence]:
    rng = random.Random(seed)
    out, seen = [], set()
    while len(out) < n:
        sent = svo(rng, aux=rng.random() < aux_rate)
        key = " ".join(sent.tokens)
        if key not in seen:
            seen.add(key)
            out.append(sent)
    return out


def clause(rng: random.Random, offset: int, head: int | None, n_adv: int, first: bool):
    """Rows of ``<Subj> V advs`` starting at 1-based ``offset``; the verb is the root (head
    None) or a conj of ``head``. Subjects: a noun phrase, a proper noun or "I"."""
    kind = rng.choice(["np", "np", "propn", "i"])
    v, v_tag, v_feats = verb(rng)
    if kind == "np":
        det = "The" if first else "the"
        n, tag, feats = noun(rng)
        subj = [(det, "DET", "DT", offset + 1, "det", {}), (n, "NOUN", tag, None, "nsubj", feats)]
    elif kind == "propn":
        subj = [(rng.choice(["John", "Mary", "Oslo"]), "PROPN", "NNP", None, "nsubj", {})]
    else:
        subj = [("I", "PRON", "PRP", None, "nsubj", {})]
    vi = offset + len(subj)
    subj[-1] = subj[-1][:3] + (vi, "nsubj", subj[-1][5])
    rows = subj + [
        (v, "VERB", v_tag, 0 if head is None else head, "root" if head is None else "conj", v_feats)
    ]
    rows += [(rng.choice(ADVS), "ADV", "RB", vi, "advmod", {}) for _ in range(n_adv)]
    return rows, vi


def coordinated(rng: random.Random) -> AnnotatedSentence:
    """``Clause1 , and clause2 .`` with the two clauses of random (often unequal) lengths."""
    rows1, root = clause(rng, 1, None, rng.randint(0, 6), first=True)
    k = len(rows1) + 1  # 1-based position of the comma
    cc = rng.choice(["and", "but", "or"])
    rows2, conj = clause(rng, k + 2, root, rng.randint(0, 6), first=False)
    rows = rows1 + [(",", "PUNCT", ",", conj, "punct", {}), (cc, "CCONJ", "CC", conj, "cc", {})]
    rows += rows2 + [(".", "PUNCT", ".", root, "punct", {})]
    return record(rows)


def coordinated_corpus(n: int, seed: int = 0) -> list[AnnotatedSentence]:
    rng = random.Random(seed)
    out, seen = [], set()
    while len(out) < n:
        sent = coordinated(rng)
        key = " ".join(sent.tokens)
        if key not in seen:
            seen.add(key)
            out.append(sent)
    return out


def chain(depth: int, length: int, rng: random.Random) -> AnnotatedSentence:
    """A dependency tree of exactly ``depth`` nodes root-to-leaf and ``length`` words: a chain
    of ``depth`` words under the root word, every other word attached to the root."""
    rows = []
    for i in range(length):
        head = 0 if i == 0 else (i if i < depth else 1)
        form = rng.choice(ROOTS) + ("" if i else "x")
        rows.append((form, "X", "X", head, "root" if head == 0 else "dep", {}))
    return record(rows, lang="xx")


def depth_length_corpus(per_depth: int, depths=range(3, 8), seed: int = 0):
    """Depth correlates with length: length = 5 + 2 * (depth - 3) + uniform(0..12)."""
    rng = random.Random(seed)
    out = []
    for d in depths:
        for _ in range(per_depth):
            out.append(chain(d, 5 + 2 * (d - 3) + rng.randint(0, 12), rng))
    return out


class CountingAnnotator(Annotator):
    """Fast fake parser: a flat tree per sentence; records what it parsed (``seen``); can
    stop on a given input as if interrupted (``fail_on``)."""

    name = "counting"

    def __init__(self, fail_on: str | None = None, tag: str = "v1") -> None:
        self.seen: list[str] = []
        self.fail_on, self.tag = fail_on, tag

    def version(self):
        return {"annotator": self.name, "tag": self.tag}

    def annotate(self, sentences, *, pretokenized=False):
        for s in sentences:
            if s == self.fail_on:
                raise KeyboardInterrupt("stopped by the user")
            self.seen.append(s)
            toks = s.split()
            yield AnnotatedSentence(
                toks,
                ["X"] * len(toks),
                [0] + [1] * (len(toks) - 1),
                ["root"] + ["dep"] * (len(toks) - 1),
                text=s,
            )
