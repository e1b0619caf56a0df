"""A small synthetic UD treebank from which every X-Probe task can be built, as CoNLL-U."""

from __future__ import annotations

import random
from pathlib import Path

from gen_synth import chain, coordinated_corpus, depth_length_corpus, svo_corpus
from sentprobe.annotation.conllu import write_conllu
from sentprobe.annotation.record import AnnotatedSentence


def synthetic_treebank(seed: int = 0, scale: int = 1) -> list[AnnotatedSentence]:
    """SVO sentences (Tense, SubjNum, ObjNum, SOMO, BShift, SentLen, WC), coordinated clauses
    (CoordInv) and chains of depth 3-7, some of 26-28 words (TreeDepth, SentLen), shuffled;
    ``scale`` multiplies the sizes. Every sentence is distinct and starts upper-case (a
    casing difference between kinds of sentence would be a cue for SentLen and TreeDepth)."""
    rng = random.Random(seed + 3)
    long = [chain(rng.randint(3, 7), rng.randint(26, 28), rng) for _ in range(60 * scale)]
    records = (
        svo_corpus(1200 * scale, seed=seed, aux_rate=0.2)
        + coordinated_corpus(300 * scale, seed=seed + 1)
        + depth_length_corpus(120 * scale, seed=seed + 2)
        + long  # SentLen's last bin (26-28 tokens)
    )
    seen, out = set(), []
    for rec in records:
        rec.tokens[0] = rec.tokens[0][:1].upper() + rec.tokens[0][1:]  # chains start lower-case

        key = " ".join(rec.tokens)
        if key not in seen:
            seen.add(key)
            out.append(rec)
    random.Random(seed).shuffle(out)
    return out


def write_treebank(directory: Path, seed: int = 0, parts: int = 2) -> list[Path]:
    """The treebank as ``parts`` CoNLL-U files (like a treebank's dev and test files)."""
    records = synthetic_treebank(seed)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for k in range(parts):
        path = directory / f"xx_synth-ud-part{k + 1}.conllu"
        write_conllu(records[k::parts], path)
        paths.append(path)
    return paths
