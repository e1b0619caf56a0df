"""Control tasks (Hewitt & Liang, 2019): what a probe scores by memorising word identity alone.

A control task keeps the task's sentences and splits but replaces each label by a fixed random
function of one word type of the sentence, its *key*. Hewitt & Liang's word-level controls are
learnable because every test word type is seen in training; a sentence-level control has the
same property only if the key is chosen so. :func:`control_keys` chooses keys greedily from the
sentences' lower-cased alphabetic tokens: repeatedly the word that keys the most not-yet-keyed
dev/test sentences (then the most sentences) among words that key at least one training
sentence, whose sentences fit in every split into three quarters of a label's mean share, and
whose sentences have *mixed* labels (:func:`_mixed_test`: in no split does one label hold more
than its share of the split plus ``PURITY`` of them plus one item); then, for sentences still
without a key, the same with a whole label's share; a sentence's key is the first chosen word
it contains, else its first content word if that word's sentences have mixed labels, else the
sentence itself (a key no probe can learn). Without the mixed-label rule the largest keys were
function words that predict the label (SubjNum's *is*, 84% NN; Tense's *you*), and each
random map agreed with the task's labels on 37-74% of sample-en's SubjNum and Tense test
items, so a control accuracy partly measured the property. The choice uses the task's labels
only to exclude words; the control's labels stay a seeded function of the key.
:func:`control_ceiling` (the test accuracy of a perfect memoriser of the control function)
is 74-100% on sample-en (WC lowest: its target words name their label, so each keys at most
one item per split). Keys are few and large on purpose: a probe learns a key's label from
its training sentences, and with keys capped at a quarter of a share, MiniLM's MLP control
gain was lower on 6 of 10 sample-en tasks and higher on 3 (docs/controls.md). Where keys that
large cannot give the task's label counts (small tasks), :func:`control_task` caps the first
pass at a quarter of a share. For a pair
(``Split.sentences2`` holds the second sentence) the key comes from the first sentence; pairs,
sub-types and folds are kept. ``selectivity = task accuracy - control accuracy`` tells how much
of a task's accuracy needs more than lexical memory.

The map key -> label is drawn once per ``seed`` and is the same in every split; a run with
several seeds draws a map per seed (:func:`control_tasks`), since one draw moves a control's
accuracy by more than its confidence interval. It is drawn so
the control task has the task's label counts *in every split*: keys are visited from the most to
the least frequent (ties in a seeded random order); a key seen more than once gets a label drawn
with probability proportional to the room every label still has, among the labels with room for
all of its sentences in every split; the keys seen once then fill the remaining room of their
split in a seeded random order; last, where counts still differ, keys are moved or swapped
between labels while that brings the counts closer. Large keys can leave a difference; the
draw is then repeated with seeds derived from ``seed`` (at most ``_DRAWS`` times) and the
closest map kept, so the result is still a function of ``seed``. A difference left over is
reported as a warning on the task that says by how many items the distribution differs.

Long because the key choice, the seeded draw with exact label counts and its repair are one
construction, each step relying on what the one before guarantees.
"""

from __future__ import annotations

import hashlib
import heapq
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from sentprobe.datasets.task import ProbingTask, Split

#: Bumped when a change alters which labels a control task gets (its content hash carries it).
CONTROL_VERSION = 2
#: What a control task's name adds to its task's name (``SentLen`` -> ``SentLen~control``).
CONTROL_SUFFIX = "~control"
#: English function words skipped when looking for the control word. Small on purpose: it only
#: has to keep the control word off determiners and the like; other languages fall back to the
#: first alphabetic token, which is a function word more often (said in docs/controls.md).
_FUNCTION_WORDS = """
    a an the this that these those my your his her its our their some any no every each
    all both either neither much many more most few less other such what which who whom whose
    when where why how whether if then than because as so and or but nor yet for of in on at
    by to from with without into onto upon about above below over under after before between
    through during against among within along across behind beyond near off out up down i me
    you he him she it we us they them myself yourself himself herself itself ourselves
    themselves is are was were be been being am do does did have has had will would shall
    should can could may might must not there here very too also just only even now then
    therefore however moreover thus hence still yes oh o thou thee thy ye one"""
FUNCTION_WORDS = frozenset(_FUNCTION_WORDS.split())
_WORD = re.compile(r"^[^\W\d_]+$")  # letters only, any script
#: The first pass's cap on a key's sentences, as a fraction of a label's mean share per split:
#: three quarters, or a quarter where large keys cannot keep the task's label counts.
CAPS = (0.75, 0.25)
#: How many seeded draws of the map key -> label :func:`control_labels` tries for exact counts.
_DRAWS = 30
#: A word is no key where, in some split, one label holds more of its items than that label's
#: share of the split plus this fraction of them (plus one item, for rounding).
PURITY = 0.1


def _mixed_test(splits: dict[str, Split], where: np.ndarray) -> Callable[[Sequence[int]], bool]:
    """Whether a set of items (indices into the splits' items in order) has mixed labels: in
    every split, no label holds more of them than its share of that split's labels plus
    ``PURITY`` of them plus one item (a rounding allowance: one item is never mixed)."""
    names = list(splits)
    kinds = sorted({lb for split in splits.values() for lb in split.labels})
    label = np.array(
        [kinds.index(lb) for split in splits.values() for lb in split.labels], dtype=np.int64
    )
    base = np.zeros((len(names), len(kinds)))
    np.add.at(base, (where, label), 1)
    base /= np.maximum(1, base.sum(1, keepdims=True))

    def mixed(rows: Sequence[int]) -> bool:
        counts = np.zeros((len(names), len(kinds)))
        np.add.at(counts, (where[rows], label[rows]), 1)
        n = counts.sum(1, keepdims=True)
        return bool((counts - n * base <= PURITY * n + 1 + 1e-9).all())

    return mixed


def control_word(sentence: str) -> str:
    """The fallback key of a sentence without a chosen word: its first content word,
    lower-cased (the first token if it has none)."""
    tokens = sentence.split()
    for token in tokens:
        lowered = token.lower()
        if _WORD.match(token) and lowered not in FUNCTION_WORDS:
            return lowered
    return tokens[0].lower() if tokens else ""


def _words(sentence: str) -> set[str]:
    return {token.lower() for token in sentence.split() if _WORD.match(token)}


def _n_labels(splits: dict[str, Split]) -> int:
    return len({label for split in splits.values() for label in split.labels})


def control_keys(
    splits: dict[str, Split], n_labels: int, cap: float = CAPS[0]
) -> dict[str, list[str]]:
    """Each item's key, per split (see the module docstring; ``cap``: the first pass's share):
    a deterministic function of the sentences, the number of labels and which words' items
    have mixed labels (:func:`_mixed_test`)."""
    names = list(splits)
    items = [(name, s) for name in names for s in splits[name].sentences]
    where = np.array([names.index(name) for name, _ in items], dtype=np.int64)
    evaluated = where != (names.index("train") if "train" in names else -1)
    occurs: dict[str, list[int]] = {}
    for i, (_, sentence) in enumerate(items):
        for word in sorted(_words(sentence)):
            occurs.setdefault(word, []).append(i)
    key: list[str | None] = [None] * len(items)
    mixed = _mixed_test(splits, where)
    share = np.array([len(splits[n]) / max(1, n_labels) for n in names])
    for fraction in (cap, 1.0):
        if fraction < 1 and ((share <= 2) | (fraction * share < 1)).any():
            continue  # a label of two sentences (WC), or a cap under one: whole labels only
        limit = np.maximum(1, np.floor(fraction * share))

        def priority(rows: list[int]) -> tuple[int, int]:
            return -int(evaluated[rows].sum()), -len(rows)

        heap = [(*priority(rows), word) for word, rows in occurs.items()]
        heapq.heapify(heap)
        while heap:
            *old, word = heapq.heappop(heap)
            rows = [i for i in occurs[word] if key[i] is None]
            if not rows:
                continue
            if priority(rows) != tuple(old):  # fewer sentences left than when pushed
                heapq.heappush(heap, (*priority(rows), word))
                continue
            per_split = np.bincount(where[rows], minlength=len(names))
            trains = int(per_split[names.index("train")]) if "train" in names else 1
            if trains >= 1 and (per_split <= limit).all() and mixed(rows):
                for i in rows:
                    key[i] = word
    # Step 3: the first content word, unless that word's fallback items are not mixed; then
    # each of them is its own key (the sentence: no probe can learn its label from training).
    fallback: dict[str, list[int]] = {}
    for i, (_, sentence) in enumerate(items):
        if key[i] is None:
            fallback.setdefault(control_word(sentence), []).append(i)
    for word, rows in fallback.items():
        for i in rows:
            key[i] = word if mixed(rows) else " ".join(items[i][1].lower().split())
    out: dict[str, list[str]] = {name: [] for name in names}
    for (name, _), chosen in zip(items, key, strict=True):
        out[name].append(str(chosen))
    return out


def control_ceiling(task: ControlTask) -> float | None:
    """Test accuracy of a perfect memoriser of ``task``'s control function (``task`` is a
    control task): the label of the test item's key where that key keys a training item,
    else the most frequent training label. None without a train or test split."""
    if "train" not in task.splits or "test" not in task.splits:
        return None
    keys = task.keys
    train = task.splits["train"].labels
    memory = dict(zip(keys["train"], train, strict=True))
    guess = Counter(train).most_common(1)[0][0] if train else None
    test = task.splits["test"].labels
    if not test:
        return None
    hits = sum(memory.get(k, guess) == label for k, label in zip(keys["test"], test, strict=True))
    return hits / len(test)


def is_control(name: str) -> bool:
    """Whether ``name`` (a task's full or short name) is a control task's."""
    return name.endswith(CONTROL_SUFFIX)


def controlled_name(name: str) -> str:
    """The task a control task controls (``SentLen~control`` -> ``SentLen``)."""
    return name[: -len(CONTROL_SUFFIX)] if is_control(name) else name


def controls_after_their_tasks(tasks: list[ProbingTask]) -> list[ProbingTask]:
    """Each task's control tasks (one per map) right after it: they reuse the task's choice,
    and a text baseline's features of the same sentences are still in its cache."""
    controls: dict[str, list[ProbingTask]] = {}
    for t in tasks:
        if is_control(t.name):
            controls.setdefault(controlled_name(t.name), []).append(t)
    out: list[ProbingTask] = []
    for task in tasks:
        if not is_control(task.name):
            out += [task, *controls.pop(task.name, [])]
    return out + [t for group in controls.values() for t in group]


def control_labels(
    words: dict[str, list[str]], targets: dict[str, Counter[str]], labels: list[str], seed: int
) -> dict[str, str]:
    """Draw the map word type -> label: ``words[split]`` holds each item's word type,
    ``targets[split]`` the label counts the control task must have in that split. The first
    draw uses ``seed``; if its counts differ, up to ``_DRAWS`` draws in all, and the closest."""
    return _closest_labels(words, targets, labels, seed)[1]


def _closest_labels(
    words: dict[str, list[str]], targets: dict[str, Counter[str]], labels: list[str], seed: int
) -> tuple[int, dict[str, str]]:
    """(difference from ``targets``, map) of :func:`control_labels`' closest draw."""
    best: tuple[int, dict[str, str]] | None = None
    for attempt in range(_DRAWS):
        rng = np.random.default_rng(seed if attempt == 0 else [seed, attempt])
        mapping = _draw_labels(words, targets, labels, rng)
        diff = _difference(mapping, words, targets)
        if best is None or diff < best[0]:
            best = (diff, mapping)
        if diff == 0:
            break
    assert best is not None
    return best


def _difference(
    mapping: dict[str, str], words: dict[str, list[str]], targets: dict[str, Counter[str]]
) -> int:
    """Items by which the labels ``mapping`` gives differ from ``targets``, over all splits."""
    return sum(
        sum(((have := Counter(mapping[w] for w in words[s])) - targets[s]).values())
        + sum((targets[s] - have).values())
        for s in words
    )


def _draw_labels(
    words: dict[str, list[str]],
    targets: dict[str, Counter[str]],
    labels: list[str],
    rng: np.random.Generator,
) -> dict[str, str]:
    """One seeded draw of :func:`control_labels`' map (see the module docstring)."""
    splits = list(words)
    per_split = [Counter(words[name]) for name in splits]
    types = list(dict.fromkeys(w for c in per_split for w in c))
    counts = np.array([[c[w] for c in per_split] for w in types], dtype=np.int64)
    counts = counts.reshape(len(types), len(splits))
    room = np.array([[targets[s][label] for s in splits] for label in labels], dtype=np.int64)
    total = counts.sum(1)
    order = rng.permutation(len(types))
    order = order[np.argsort(-total[order], kind="stable")]  # frequent first, ties shuffled
    mapping: dict[str, str] = {}
    tail: list[int] = []
    for t in order:
        if total[t] == 1:
            tail.append(int(t))
            continue
        fits = (room >= counts[t]).all(1)  # room in every split: exact per split
        if not fits.any():  # room in total: exact over all splits
            fits = room.sum(1) >= total[t]
        if fits.any():
            weight = np.where(fits, room.sum(1), 0).astype(float)
            choice = int(rng.choice(len(labels), p=weight / weight.sum()))
        else:  # too frequent for any label's room: the one it overfills least
            choice = int(np.argmax(np.minimum(room, counts[t]).sum(1)))
        room[choice] -= counts[t]
        mapping[types[t]] = labels[choice]
    # The tail fills each split's room, as far as the label's total room allows; what is left
    # (only after a type was placed by its total) fills the remaining total room.
    left: list[int] = []
    for s in range(len(splits)):
        singles = [t for t in tail if counts[t, s] == 1]
        allowed = np.minimum(np.clip(room[:, s], 0, None), np.clip(room.sum(1), 0, None))
        pool = rng.permutation(np.repeat(np.arange(len(labels)), allowed))
        for t, j in zip(singles, pool):
            mapping[types[t]] = labels[int(j)]
            room[j, s] -= 1
        left += singles[len(pool) :]
    pool = rng.permutation(np.repeat(np.arange(len(labels)), np.clip(room.sum(1), 0, None)))
    for i, t in enumerate(left):
        # more items than room only after an overfilled type: those draw at random
        mapping[types[t]] = labels[
            int(pool[i]) if i < len(pool) else int(rng.integers(len(labels)))
        ]
    index = {label: j for j, label in enumerate(labels)}
    assigned = np.array([index[mapping[t]] for t in types], dtype=np.int64)
    target = np.array([[targets[s][label] for s in splits] for label in labels], dtype=np.int64)
    assigned = _repair(counts, assigned, target)
    return {t: labels[int(j)] for t, j in zip(types, assigned, strict=True)}


def _repair(counts: np.ndarray, assigned: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Move a key to another label, or swap two keys' labels, while that lowers the total
    difference between the control's and the task's label counts (labels x splits): the
    random draw above leaves a few items over when large keys fragment the labels' room."""
    assigned = assigned.copy()
    have = np.zeros_like(target)
    np.add.at(have, assigned, counts)
    for _ in range(10 * len(counts)):
        excess = have - target
        if not excess.any():
            break
        size = np.abs(excess).sum(1)  # per label
        best, step = 0, None  # step: (key, its new label, the key swapped with it or -1)
        for t in np.flatnonzero((excess[assigned] > 0).any(1)):
            a = assigned[t]
            # move t from a to every label b
            gain = size[a] - np.abs(excess[a] - counts[t]).sum()
            gains = gain + size - np.abs(excess + counts[t]).sum(1)
            gains[a] = 0
            b = int(np.argmax(gains))
            if gains[b] > best:
                best, step = int(gains[b]), (int(t), b, -1)
            # swap t with every key u of another label
            d = counts[t] - counts  # (keys, splits)
            others = assigned
            swap = (
                size[a]
                + size[others]
                - np.abs(excess[a] - d).sum(1)
                - np.abs(excess[others] + d).sum(1)
            )
            swap[others == a] = 0
            u = int(np.argmax(swap))
            if swap[u] > best:
                best, step = int(swap[u]), (int(t), int(assigned[u]), u)
        if step is None:
            break
        key, new, other = step
        old = int(assigned[key])
        have[old] -= counts[key]
        have[new] += counts[key]
        assigned[key] = new
        if other >= 0:
            have[new] -= counts[other]
            have[old] += counts[other]
            assigned[other] = old
    return assigned


@dataclass
class ControlTask(ProbingTask):
    """A control task with what identifies its map: ``map_seed``, the seed it was drawn with
    (a run probes seed ``s`` of a probe on the map of seed ``s``), and ``permutes``, whether
    its labels are the task's labels renamed one to one, so that its selectivity is zero by
    construction and says nothing. That needs keys of at most one or two items per split,
    since a word whose items share one label is no key (:func:`_mixed_test`); WC's control
    does not permute: a target word's items all carry its label, so WC is keyed by other
    words, its target words only where one is left with a single item in a split."""

    map_seed: int = 0
    permutes: bool = False
    keys: dict[str, list[str]] = field(default_factory=dict)
    #: Fraction of test items whose control label is the task's label.
    agreement: float | None = None
    #: Fraction of test items labelled alike by this map and the map of each lower seed.
    agreement_with: dict[int, float | None] = field(default_factory=dict)

    def content_hash(self) -> str:
        """The labels' hash (ProbingTask's) with ``CONTROL_VERSION``: results stored for a
        control built by another key choice or draw are recomputed."""
        if "_control_hash" not in self.__dict__:
            salted = f"{super().content_hash()}:control-v{CONTROL_VERSION}"
            self.__dict__["_control_hash"] = hashlib.sha1(salted.encode()).hexdigest()[:16]
        return self.__dict__["_control_hash"]


def permutes_labels(task: ProbingTask, control: ProbingTask) -> bool:
    """Whether ``control``'s labels are ``task``'s renamed one to one on every item."""
    pairs = {
        (a, b)
        for name, split in task.splits.items()
        for a, b in zip(split.labels, control.splits[name].labels, strict=True)
    }
    return len(pairs) == len({a for a, _ in pairs}) == len({b for _, b in pairs})


def control_tasks(task: ProbingTask, maps: int) -> list[ControlTask]:
    """The control tasks of ``task`` drawn with seeds ``0 .. maps - 1``, one per seed, each
    with its test labels' agreement with the maps of lower seeds (``agreement_with``)."""
    controls = [control_task(task, seed=s) for s in range(maps)]
    for k, control in enumerate(controls):
        control.agreement_with = {
            j: _agreement(control, other) for j, other in enumerate(controls[:k])
        }
    return controls


def _agreement(a: ProbingTask, b: ProbingTask) -> float | None:
    """Fraction of test items on which ``a`` and ``b`` have the same label (None: no test)."""
    if "test" not in a.splits or not a.splits["test"].labels:
        return None
    pairs = zip(a.splits["test"].labels, b.splits["test"].labels, strict=True)
    return sum(x == y for x, y in pairs) / len(a.splits["test"])


def control_task(task: ProbingTask, seed: int = 0, caps: Sequence[float] = CAPS) -> ControlTask:
    """The control task of ``task``: same sentences and label set, each label a seeded random
    function of the sentence's key (:func:`control_keys`), with the task's label counts in
    every split (keys under the first cap in ``caps`` that allows them exactly; another
    ``caps`` serves to measure a key choice, scripts/measure_control_draws.py)."""
    targets = {name: Counter(split.labels) for name, split in task.splits.items()}
    # A label seen in dev/test only still belongs to the label set.
    labels = list(
        dict.fromkeys([*task.labels, *sorted({lb for c in targets.values() for lb in c})])
    )
    best, n_labels = None, _n_labels(task.splits)
    for cap in caps:
        keys = control_keys(task.splits, n_labels, cap)
        diff, drawn = _closest_labels(keys, targets, labels, seed)
        if best is None or diff < best[0]:
            best = (diff, keys, drawn)
        if diff == 0:
            break
    assert best is not None
    _, words, mapping = best
    splits = {
        name: _relabel(split, [mapping[w] for w in words[name]])
        for name, split in task.splits.items()
    }
    # Cross-validated tasks: ``splits`` is the first fold and holds every item once, so the
    # map drawn on it labels every fold's splits (counts exact over all items and in fold 1);
    # a key is a function of the sentence, so the first fold's keys serve every fold.
    folds = None
    if task.folds is not None:
        keyed = {s: w for name in words for s, w in zip(task.splits[name].sentences, words[name])}
        folds = [
            {
                n: _relabel(sp, [mapping[keyed.get(s, control_word(s))] for s in sp.sentences])
                for n, sp in fold.items()
            }
            for fold in task.folds
        ]
    moved = {name: sum((Counter(splits[name].labels) - targets[name]).values()) for name in splits}
    overall = sum(
        (
            Counter(w for sp in splits.values() for w in sp.labels)
            - sum(targets.values(), Counter())
        ).values()
    )
    warnings = []
    if any(moved.values()):
        per_split = ", ".join(f"{n} in {name}" for name, n in moved.items() if n)
        warnings.append(
            f"control labels differ from the task's label counts by {per_split} and {overall} "
            "over all splits: some control keys are too frequent to fit the per-split counts"
        )
    meta = task.metadata
    metadata = replace(
        meta,
        name=meta.name + CONTROL_SUFFIX,
        paper_name=None if meta.paper_name is None else meta.paper_name + CONTROL_SUFFIX,
        no_surface_cue=False,
        description=f"Control task (Hewitt & Liang, 2019) of {meta.name}: each label a seeded "
        f"random function (seed {seed}) of one word of the sentence, chosen so that nearly "
        "every test sentence's word also keys training sentences, with the task's label "
        "counts in every split.",
    )
    control = ControlTask(metadata, splits, warnings, folds=folds, map_seed=seed, keys=words)
    control.agreement = _agreement(control, task)
    control.permutes = permutes_labels(task, control)
    return control


def _relabel(split: Split, labels: list[str]) -> Split:
    """``split`` with its labels replaced (pairs and sub-types kept)."""
    return replace(split, sentences=list(split.sentences), labels=labels)
