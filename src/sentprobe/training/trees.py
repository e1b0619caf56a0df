"""Parsing training sentences with sentprobe's own annotator, and Seq2Tree's targets.

Seq2Tree (Conneau et al. 2018, after Vinyals et al. 2015) decodes a sentence's linearised
constituency tree. The trees come from ``annotation/``: the annotator's own constituency
tree when it gives one, else the dependency tree converted by
``annotation.constituency.dep_to_constituency`` (the trees TreeDepth and TopConst are built
from). Linearisation follows Vinyals et al.: an opening ``(LABEL`` and a closing ``)LABEL``
per phrase, a part-of-speech tag per word, words dropped (``(S (NP NNP )NP (VP VBZ ...``).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..annotation.constituency import Tree, dep_to_constituency, parse_tree
from ..annotation.record import AnnotatedSentence
from ..errors import DataError
from ..io import iter_lines

CONLLU_SUFFIXES = (".conllu", ".conllu.gz", ".conllu.bz2", ".conllu.xz", ".conll")


def annotated(
    path: Path, annotations: Path | None, annotator: str = "spacy", progress: bool = True
) -> list[AnnotatedSentence]:
    """The records of ``path``: a CoNLL-U file's gold annotation, else one sentence per line
    parsed by ``annotator`` into ``annotations/<hash>`` (resumable, reused by reruns)."""
    if path.name.lower().endswith(CONLLU_SUFFIXES):
        from ..annotation.conllu import read_conllu

        records = list(read_conllu(path))
        if not records:
            raise DataError(path, None, "empty file (no sentences)")
        return records
    from ..annotation.store import annotate_corpus, read_annotated

    sentences = [" ".join(line.split()) for _, line in iter_lines(path) if line.strip()]
    if not sentences:
        raise DataError(path, None, "empty file (no sentences)")
    key = hashlib.sha256("\n".join(sentences).encode("utf-8")).hexdigest()[:16]
    root = annotations if annotations is not None else path.parent / ".sentprobe-annotations"
    out = root / f"{annotator.replace(':', '_')}-{key}"
    annotate_corpus(
        sentences, out, annotator, pretokenized=True, total=len(sentences), progress=progress
    )
    return list(read_annotated(out))


def linearise(record: AnnotatedSentence) -> str:
    """Vinyals et al.'s linearised tree of ``record``, without the ROOT node and words."""
    tree = parse_tree(record.constituency or dep_to_constituency(record))
    if tree[0] in ("ROOT", "TOP", "") and len(tree[1]) == 1 and not isinstance(tree[1][0], str):
        tree = tree[1][0]
    out: list[str] = []
    stack: list[Tree | str] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if node.startswith(")"):
                out.append(node)
            continue
        label, children = node
        if len(children) == 1 and isinstance(children[0], str):
            out.append(label)  # a preterminal: its tag
            continue
        out.append(f"({label}")
        stack.append(f"){label}")
        stack.extend(reversed(children))
    return " ".join(out)
