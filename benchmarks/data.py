"""Build the probe benchmark's data: a 9-task suite (8k/2k/10k) and a 100k-train task.

Everything is deterministic (fixed seed, stable corpus order) and cached under ``--workdir``
(default ``benchmarks/.work/``):

    corpus.tsv            the tokenized corpus (source<TAB>sentence), built once
    embeddings/           sentprobe EmbeddingCache of MiniLM vectors (each sentence once)
    tasks/<name>.tsv      the examples (split<TAB>label<TAB>sentence), for inspection
    tasks/<name>.npz      X_<split> (float32, n x 384) and y_<split> for train/dev/test
    tasks/manifest.json   class counts, sizes and generation statistics per task

Corpus: the English prose of the Debian packages python3.11-doc and python-django-doc
(extracted as scripts/build_sample_suite.py does) plus the sentences of UD English-EWT
(read from ../shared beside the repository, never copied), Moses-tokenized, 5-28 tokens,
deduplicated.

Usage (from the repository root)::

    HF_HUB_OFFLINE=1 python benchmarks/data.py [--workdir benchmarks/.work] [--only suite|big]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from sentprobe.datasets.task import SPLITS  # noqa: E402
from sentprobe.generation import BigramShift, MosesPreprocessor, SentenceLength  # noqa: E402
from sentprobe.generation.base import assign_splits, make_rng, per_class, shuffled  # noqa: E402
from sentprobe.generation.corpus import Tokens  # noqa: E402

DEFAULT_WORKDIR = Path(__file__).resolve().parent / ".work"
UD_EWT = Path(__file__).resolve().parents[2] / "shared/data/ud/en_ewt/en_ewt-ud-all.conllu.gz"
DOC_SOURCES = {
    "python-doc": "/usr/share/doc/python3.11/html",
    "django-doc": "/usr/share/doc/python-django-doc/html",
}
SEED = 2018
SUITE_SIZES = {"train": 8000, "dev": 2000, "test": 10000}
BIG_SIZES = {"train": 100_000, "dev": 10_000, "test": 10_000}
#: SentLen bins (tokens). The paper's bins (5-8, ..., 26-28) leave only ~3k sentences in the
#: last bin of this 52k-sentence corpus; these six bins each hold 7.8k-9.3k sentences.
SENTLEN_BINS = ((5, 8), (9, 11), (12, 14), (15, 17), (18, 21), (22, 28))
WC_TARGETS = 1000
WC_FIRST_RANK = 301  # vocabulary ranks ~301-1500 of a 26k-type corpus: mid-frequency words
WC_MIN_CHARS = 4

SUITE_TASKS = [
    "WC", "SentLen", "BShift", "FirstWord", "Capitals", "WordLen", "Commas", "Modal", "Person",
]  # fmt: skip
BIG_TASK = "SentLen100k"

Example = tuple[str, str]
Splits = dict[str, list[Example]]


# -- corpus ---------------------------------------------------------------------------------
def load_corpus(workdir: Path) -> tuple[list[Tokens], list[str]]:
    """Tokenized corpus sentences and their source, built once and cached as corpus.tsv."""
    path = workdir / "corpus.tsv"
    if not path.exists():
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
        from corpora.texts import sphinx_sentences

        raw: list[tuple[str, str]] = []
        for name, root in DOC_SOURCES.items():
            if not Path(root).is_dir():
                sys.exit(f"{root} missing: apt-get install python3.11-doc python-django-doc")
            raw += [(name, s) for s in sphinx_sentences(root)]
        if UD_EWT.is_file():
            import conllu

            with gzip.open(UD_EWT, "rt", encoding="utf-8") as f:
                raw += [("ud-ewt", s.metadata["text"]) for s in conllu.parse_incr(f)]
        else:
            print(f"warning: {UD_EWT} not found; using the documentation only", file=sys.stderr)
        prep = MosesPreprocessor()
        seen: set[str] = set()
        rows = []
        for source, sentence in raw:
            tokens = prep.tokenize(sentence)
            text = " ".join(tokens)
            if prep.min_tokens <= len(tokens) <= prep.max_tokens and text not in seen:
                seen.add(text)
                rows.append(f"{source}\t{text}\n")
        workdir.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text("".join(rows), encoding="utf-8")
        tmp.replace(path)
    sources, sentences = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        source, text = line.split("\t", 1)
        sources.append(source)
        sentences.append(tuple(text.split(" ")))
    return sentences, sources


# -- label functions of the six extra tasks ---------------------------------------------------
_DET = {"the", "a", "an", "this", "these", "that", "those", "each", "every", "some", "any",
        "all", "no", "most", "many", "both", "another", "such", "its", "their", "his", "her",
        "my", "your", "our"}  # fmt: skip
_PRON = {"it", "i", "you", "we", "they", "he", "she", "there", "one"}
_CONNECT = {"if", "in", "for", "when", "to", "on", "with", "by", "as", "after", "before",
            "since", "because", "while", "although", "unless", "once", "at", "from", "of",
            "during", "until", "though", "whether", "instead", "without", "under", "within",
            "through", "upon", "where", "how", "what", "why", "however", "also", "so", "but",
            "and", "or", "then", "thus", "otherwise", "finally", "now", "here"}  # fmt: skip
_MODALS = {"can", "could", "will", "would", "shall", "should", "must", "may", "might", "ca",
           "wo", "'ll", "cannot"}  # fmt: skip
_PERSON = {"i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "ourselves", "you",
           "your", "yours", "yourself", "yourselves"}  # fmt: skip


def first_word(tokens: Tokens) -> str:
    """Word class of the first token: determiner, pronoun, connective (prep./conj.), other."""
    w = tokens[0].lower()
    return "det" if w in _DET else "pron" if w in _PRON else "conn" if w in _CONNECT else "other"


def capitals(tokens: Tokens) -> str:
    """Non-initial tokens starting with a capital letter (names, acronyms): 0, 1 or 2+."""
    return str(min(sum(1 for w in tokens[1:] if w[:1].isupper()), 2))


def word_length(tokens: Tokens) -> str | None:
    """Mean length of the alphabetic tokens, in three bins (short / medium / long words)."""
    lengths = [len(w) for w in tokens if w.isalpha()]
    if not lengths:
        return None
    mean = sum(lengths) / len(lengths)
    return "short" if mean < 4.5 else "medium" if mean < 5.15 else "long"


def commas(tokens: Tokens) -> str:
    """Does the sentence contain a comma?"""
    return "yes" if "," in tokens else "no"


def modal(tokens: Tokens) -> str:
    """Does the sentence contain a modal verb (can, will, should, may, ...)?"""
    return "yes" if any(w.lower() in _MODALS for w in tokens) else "no"


def person(tokens: Tokens) -> str:
    """Does the sentence contain a first- or second-person pronoun (I, we, you, ...)?"""
    return "yes" if any(w.lower() in _PERSON for w in tokens) else "no"


LABELLERS: dict[str, tuple[list[str], Callable[[Tokens], str | None]]] = {
    "FirstWord": (["det", "pron", "conn", "other"], first_word),
    "Capitals": (["0", "1", "2"], capitals),
    "WordLen": (["short", "medium", "long"], word_length),
    "Commas": (["no", "yes"], commas),
    "Modal": (["no", "yes"], modal),
    "Person": (["no", "yes"], person),
}


def labelled_task(name: str, sentences: Sequence[Tokens], sizes: dict[str, int]) -> Splits:
    """A balanced task from a label function: distinct sentences, disjoint splits."""
    labels, fn = LABELLERS[name]
    pools: dict[str, list[Tokens]] = {label: [] for label in labels}
    for tokens in sentences:
        label = fn(tokens)
        if label is not None:
            pools[label].append(tokens)
    rng = make_rng(SEED, name)
    drawn = assign_splits(pools, per_class(sizes, len(labels), name), rng, name)
    return {
        s: shuffled([(" ".join(t), lab) for lab, ts in drawn[s].items() for t in ts], rng)
        for s in SPLITS
    }


# -- WC with 1000 classes ---------------------------------------------------------------------
def word_content(sentences: Sequence[Tokens], sizes: dict[str, int], stats: Counter) -> Splits:
    """1000-class WC; a sentence may contain other targets (the corpus is too small otherwise).

    Targets: the first 1000 alphabetic words of >= 4 characters from vocabulary rank 301 on
    that occur in at least 20 sentences. Each target gets 20 distinct sentences containing it
    (words with the fewest candidates are served first; a sentence with fewer other targets is
    preferred, so most examples contain exactly one target); no sentence is used twice.
    """
    need = {s: n // WC_TARGETS for s, n in sizes.items()}
    total = sum(need.values())
    freq = Counter(w.lower() for t in sentences for w in t)
    vocab = sorted(freq, key=lambda w: (-freq[w], w))
    contains: dict[str, list[int]] = {}
    for i, t in enumerate(sentences):
        for w in {w.lower() for w in t}:
            contains.setdefault(w, []).append(i)
    targets = [
        w
        for w in vocab[WC_FIRST_RANK - 1 :]
        if w.isalpha() and len(w) >= WC_MIN_CHARS and len(contains[w]) >= total
    ][:WC_TARGETS]
    if len(targets) < WC_TARGETS:
        raise SystemExit(f"WC: only {len(targets)} targets have {total} sentences")
    tset = set(targets)
    n_targets = [sum(1 for w in {w.lower() for w in t} if w in tset) for t in sentences]
    rng = make_rng(SEED, "WC")
    used: set[int] = set()
    picked: dict[str, list[int]] = {}
    for w in sorted(targets, key=lambda w: (len(contains[w]), w)):
        cands = [i for i in contains[w] if i not in used]
        keys = rng.random(len(cands))  # random order among equally ambiguous sentences
        order = sorted(range(len(cands)), key=lambda k: (n_targets[cands[k]], keys[k]))
        chosen = [cands[k] for k in order[:total]]
        if len(chosen) < total:
            raise SystemExit(f"WC: target {w!r} ran out of unused sentences")
        used.update(chosen)
        picked[w] = chosen
    stats["targets"] = len(targets)
    stats["rank range"] = f"{vocab.index(targets[0]) + 1}-{vocab.index(targets[-1]) + 1}"
    stats["examples with exactly one target word"] = sum(
        1 for ids in picked.values() for i in ids if n_targets[i] == 1
    )
    splits: Splits = {}
    for s in SPLITS:
        start = sum(need[p] for p in SPLITS[: SPLITS.index(s)])
        ex = [(" ".join(sentences[i]), w) for w in targets for i in picked[w][start:][: need[s]]]
        splits[s] = shuffled(ex, rng)
    return splits


# -- the 100k-train task ------------------------------------------------------------------------
def sentlen_big(sentences: Sequence[Tokens], sizes: dict[str, int], stats: Counter) -> Splits:
    """SentLen over original sentences plus adjacent-swap variants (same length, same label).

    Per class, dev and test take distinct original sentences; train takes the remaining
    sentences and each one's variants (original first, then one swap per allowed position,
    round-robin over sentences) until the class is full. All variants of a sentence stay in
    its split, so no sentence or variant of it is in two splits.
    """
    gen = SentenceLength(bins=SENTLEN_BINS)
    bshift = BigramShift()
    counts = per_class(sizes, len(gen.labels), BIG_TASK)
    rng = make_rng(SEED, BIG_TASK)
    pools: dict[str, list[Tokens]] = {label: [] for label in gen.labels}
    for t in sentences:
        label = gen.label(t)
        if label is not None:
            pools[label].append(t)
    corpus = {" ".join(t) for t in sentences}
    splits: Splits = {s: [] for s in SPLITS}
    for label, pool in pools.items():
        order = rng.permutation(len(pool)).tolist()
        n_dev, n_test = counts["dev"], counts["test"]
        for i in order[:n_dev]:
            splits["dev"].append((" ".join(pool[i]), label))
        for i in order[n_dev : n_dev + n_test]:
            splits["test"].append((" ".join(pool[i]), label))
        variants = []
        for i in order[n_dev + n_test :]:
            t = pool[i]
            pos = bshift.positions(t)
            pos = [pos[k] for k in rng.permutation(len(pos))]
            swapped = [" ".join(t[:p] + (t[p + 1], t[p]) + t[p + 2 :]) for p in pos]
            variants.append([" ".join(t)] + [v for v in swapped if v not in corpus])
        train: list[str] = []
        seen: set[str] = set()
        level = 0
        while len(train) < counts["train"]:
            grew = False
            for vs in variants:
                if level < len(vs) and vs[level] not in seen and len(train) < counts["train"]:
                    seen.add(vs[level])
                    train.append(vs[level])
                    grew = True
            if not grew:
                raise SystemExit(f"{BIG_TASK}: class {label} has only {len(train)} train examples")
            level += 1
        stats["train originals"] += sum(1 for vs in variants if vs[0] in seen)
        splits["train"] += [(s, label) for s in train]
    for s in SPLITS:
        splits[s] = shuffled(splits[s], rng)
    stats["train variants (adjacent swaps)"] = len(splits["train"]) - stats["train originals"]
    return splits


# -- building, encoding, loading -------------------------------------------------------------------
def build_splits(name: str, sentences: Sequence[Tokens], stats: Counter) -> Splits:
    """The examples of one task, deterministically."""
    if name == "WC":
        return word_content(sentences, SUITE_SIZES, stats)
    if name == "SentLen":
        task = SentenceLength(bins=SENTLEN_BINS).generate(sentences, SUITE_SIZES, SEED)
    elif name == "BShift":
        task = BigramShift().generate(sentences, SUITE_SIZES, SEED)
    elif name == BIG_TASK:
        return sentlen_big(sentences, BIG_SIZES, stats)
    else:
        return labelled_task(name, sentences, SUITE_SIZES)
    stats.update(task.stats)
    return task.splits


def check_disjoint(name: str, splits: Splits) -> None:
    """No sentence twice in a task (within or across splits)."""
    every = [s for ex in splits.values() for s, _ in ex]
    if len(set(every)) != len(every):
        raise SystemExit(f"{name}: {len(every) - len(set(every))} repeated sentences")


def make_encoder():
    """sentprobe's default MiniLM encoder on 2 threads."""
    import torch

    from sentprobe.encoders import get_encoder

    torch.set_num_threads(2)
    return get_encoder("minilm")


def build(workdir: Path, names: Sequence[str], force: bool = False) -> None:
    """Generate the tasks ``names`` and their embeddings (skipping ones already built)."""
    from sentprobe.encoders.cache import EmbeddingCache

    tasks_dir = workdir / "tasks"
    tasks_dir.mkdir(parents=True, exist_ok=True)
    manifest_path = tasks_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    todo = [n for n in names if force or not (tasks_dir / f"{n}.npz").exists()]
    if not todo:
        print(f"all tasks built in {tasks_dir}", file=sys.stderr)
        return
    t0 = time.perf_counter()
    sentences, _ = load_corpus(workdir)
    print(f"corpus: {len(sentences)} sentences ({time.perf_counter() - t0:.1f}s)", file=sys.stderr)
    built: dict[str, Splits] = {}
    for name in todo:
        stats: Counter = Counter()
        built[name] = splits = build_splits(name, sentences, stats)
        check_disjoint(name, splits)
        manifest[name] = {
            "sizes": {s: len(ex) for s, ex in splits.items()},
            "classes": len({lab for ex in splits.values() for _, lab in ex}),
            "stats": {k: v for k, v in stats.items()},
        }
        print(
            f"{name}: {manifest[name]['sizes']}, {manifest[name]['classes']} classes",
            file=sys.stderr,
        )
    # Encode every distinct sentence of all tasks in one pass through the cache.
    distinct = sorted({s for splits in built.values() for ex in splits.values() for s, _ in ex})
    cache, encoder = EmbeddingCache(workdir / "embeddings"), make_encoder()
    t1 = time.perf_counter()
    vectors = cache.encode(encoder, distinct, progress="MiniLM")
    row = {s: i for i, s in enumerate(distinct)}
    print(
        f"{len(distinct)} distinct sentences, {cache.last_encoded} newly encoded "
        f"({time.perf_counter() - t1:.0f}s)",
        file=sys.stderr,
    )
    for name, splits in built.items():
        arrays = {}
        for s, ex in splits.items():
            arrays[f"X_{s}"] = vectors[[row[sent] for sent, _ in ex]].astype(np.float32)
            arrays[f"y_{s}"] = np.array([lab for _, lab in ex])
        np.savez(tasks_dir / f"{name}.npz", **arrays)
        with open(tasks_dir / f"{name}.tsv", "w", encoding="utf-8") as f:
            f.writelines(f"{s}\t{lab}\t{sent}\n" for s, ex in splits.items() for sent, lab in ex)
    manifest_path.write_text(json.dumps(manifest, indent=2))


def load_task(workdir: Path, name: str) -> dict[str, np.ndarray]:
    """X_train, y_train, X_dev, y_dev, X_test, y_test of a built task."""
    path = workdir / "tasks" / f"{name}.npz"
    if not path.exists():
        raise SystemExit(f"{path} missing: run python benchmarks/data.py --workdir {workdir}")
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR)
    ap.add_argument("--only", choices=["suite", "big"], help="build only this part")
    ap.add_argument("--force", action="store_true", help="rebuild tasks already built")
    args = ap.parse_args(argv)
    names = {"suite": SUITE_TASKS, "big": [BIG_TASK]}.get(args.only, [*SUITE_TASKS, BIG_TASK])
    build(args.workdir, names, args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
