"""Data checks shared by ``sentprobe audit`` (published suites) and the quality report of
generated suites: one set of functions, each ``(task, options) -> list[Finding]``.

They look for what makes probing scores wrong or misleading without any encoder: the same
sentence in several splits or with several labels, unbalanced or one-class splits, target forms
shared between partitions (the paper's lexical split), an original sentence in one split and
its altered form in another, and surface cues that predict the label: single-position rules
(identity and class of the first and of the last token, the last character, the number of
punctuation tokens, casing of the first word) and the text baselines (Length, NB-uni-tfidf,
NB-bi-tfidf, NB on character n-grams). Every cue is fitted on train and scored on test against
the majority label with an exact one-sided binomial test; it is a defect only where the task must
carry no surface cue (:func:`expects_no_surface_cue`), elsewhere it is reported next to the
paper's own baseline margins. The numbers behind each finding are in ``Finding.data`` so
reports can tabulate them.
"""

from __future__ import annotations

import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import numpy as np

from sentprobe.analysis.findings import Finding, Severity
from sentprobe.datasets.task import ALTERED_TASKS, PAPER_TASKS, SPLITS, ProbingTask, Split

#: Tasks whose paper version keeps each target form in one partition (Conneau et al. 2018).
LEXICAL_SPLIT_TASKS = frozenset({"Tense", "SubjNum", "ObjNum"})


@dataclass(frozen=True)
class Thresholds:
    """Where an observation turns into a warning or an error (fractions, ratios, points)."""

    #: share of an evaluation split (or of all sentences) above which overlap/ambiguity is an error
    error_fraction: float = 0.01
    #: largest/smallest class size above which a split counts as imbalanced (paper: balanced;
    #: 54/46 is 1.17)
    imbalance_ratio: float = 1.1
    #: a surface cue must beat majority at this level (exact one-sided binomial test on test)
    cue_p_value: float = 0.01
    #: and gain this many points over majority for a warning / an error where the task must
    #: carry no surface cue
    cue_warning_points: float = 3.0
    cue_error_points: float = 10.0
    #: lexical heuristic: a form needs this many occurrences (train + test) to count
    lexical_min_total: int = 5
    #: lexical heuristic: shared-form mass at or above this share of a random split's = violated
    lexical_ratio: float = 0.8
    #: lexical heuristic: random re-splits of the same sentences to compare with
    lexical_resplits: int = 8
    #: original/altered twins across splits: an error from ``error_fraction`` of the later split
    #: and this many sentences (one chance near-duplicate in a 40-sentence split: a warning)
    twin_error_count: int = 3
    #: missing classes in test are an error up to this many classes (a warning above)
    many_classes: int = 10
    seed: int = 0


@dataclass
class CheckOptions:
    """What the checks may use besides the task itself."""

    thresholds: Thresholds = field(default_factory=Thresholds)
    #: train the Length and NB baselines (seconds on 100k sentences; off for speed; the
    #: single-position rules always run)
    baselines: bool = True
    #: split -> file it was read from, so identical splits can be called byte-identical files
    files: dict[str, Path] | None = None
    #: split -> target form of each sentence (None if unknown), when a generator provides them
    targets: dict[str, Sequence[str | None]] | None = None


Check = Callable[[ProbingTask, CheckOptions], list[Finding]]


def _quote(text: str, limit: int = 70) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}{'es' if word.endswith('s') else 's'}"


def _verb(n: int, singular: str, plural: str) -> str:
    return singular if n == 1 else plural


def task_labels(task: ProbingTask) -> list[str]:
    """The task's label order; also for a task read leniently without a train split."""
    if task.metadata.labels or "train" in task.splits:
        return task.labels
    return sorted({label for split in task.splits.values() for label in split.labels})


def paper_name(task: ProbingTask) -> str:
    """The paper's task name if known, else the last part of the task name."""
    return task.metadata.paper_name or task.name.rsplit("/", 1)[-1]


def _splits(task: ProbingTask) -> list[tuple[str, Split]]:
    return [(s, task.splits[s]) for s in SPLITS if s in task.splits]


def _finding(task: ProbingTask, check: str, severity: Severity, message: str, **kw) -> Finding:
    return Finding(check=check, severity=severity, message=message, task=task.name, **kw)


# ---------------------------------------------------------------------------- sizes


def check_sizes(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """Split sizes and classes (info): the context every other number needs."""
    sizes = {name: len(split) for name, split in _splits(task)}
    labels = sorted({label for _, split in _splits(task) for label in split.labels})
    text = ", ".join(f"{n} {s}" for s, n in sizes.items())
    return [
        _finding(
            task,
            "sizes",
            "info",
            f"{text}; {_plural(len(labels), 'class')}",
            data={"sizes": sizes, "n_classes": len(labels)},
        )
    ]


# ---------------------------------------------------------------------------- split disjointness


def _identical_pairs(task: ProbingTask) -> list[tuple[str, str]]:
    return [
        (a, b)
        for (a, sa), (b, sb) in combinations(_splits(task), 2)
        if len(sa) and sa.sentences == sb.sentences and sa.labels == sb.labels
    ]


def _same_bytes(a: Path, b: Path) -> bool:
    try:
        return a.stat().st_size == b.stat().st_size and a.read_bytes() == b.read_bytes()
    except OSError:
        return False


def check_identical_splits(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """Two splits with the same lines (X-Probe's tree_depth va.txt == te.txt): an error, since
    selecting on dev is then selecting on test."""
    out = []
    files = options.files or {}
    for a, b in _identical_pairs(task):
        fa, fb = files.get(a), files.get(b)
        if fa and fb and fa != fb and _same_bytes(fa, fb):
            what = f"{fa.name} and {fb.name} are byte-identical files"
        else:
            what = f"the {a} and {b} splits are identical"
        out.append(
            _finding(
                task,
                "identical-splits",
                "error",
                f"{what} ({len(task.splits[a])} lines in the same order); choosing the probe "
                f"on {a} then means choosing it on {b}",
                count=len(task.splits[a]),
                data={"splits": [a, b], "files": [str(fa), str(fb)] if fa and fb else None},
            )
        )
    return out


def check_split_overlap(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """Sentences shared between two splits (not already reported as identical splits).

    The share is taken of the later split's distinct sentences (the one that scores): at or
    above ``error_fraction`` it is an error, below a warning.
    """
    out = []
    identical = set(_identical_pairs(task))
    for (a, sa), (b, sb) in combinations(_splits(task), 2):
        if (a, b) in identical:
            continue
        later = set(sb.sentences)
        shared = [s for s in dict.fromkeys(sa.sentences) if s in later]
        if not shared:
            continue
        share = len(shared) / max(1, len(later))
        severity: Severity = "error" if share >= options.thresholds.error_fraction else "warning"
        out.append(
            _finding(
                task,
                "split-overlap",
                severity,
                f"{_plural(len(shared), 'sentence')} of {b} also in {a} ({share:.1%} of {b}); "
                "a probe can score on them by memory",
                count=len(shared),
                examples=[_quote(s) for s in shared[:5]],
                data={"splits": [a, b], "share": share},
            )
        )
    return out


def check_labels_per_sentence(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """Sentences carrying several labels, within one split or across splits (X-Probe's SOMO):
    they cap the reachable accuracy. Exact repeats within a split are reported as info."""
    per_split: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    repeats: Counter[str] = Counter()
    for name, split in _splits(task):
        seen: set[tuple[str, str]] = set()
        for sentence, label in zip(split.sentences, split.labels):
            if (sentence, label) in seen:
                repeats[name] += 1
            seen.add((sentence, label))
            per_split[sentence][name].add(label)
    within, across = [], []
    for sentence, by_split in per_split.items():
        labels = set().union(*by_split.values())
        if len(labels) < 2:
            continue
        where = "; ".join(f"{s}: {'/'.join(sorted(ls))}" for s, ls in by_split.items())
        example = f"{_quote(sentence)} ({where})"
        if any(len(ls) > 1 for ls in by_split.values()):
            within.append(example)
        else:
            across.append(example)
    out = []
    total = max(1, len(per_split))
    for kind, items in (("within a split", within), ("across splits", across)):
        if not items:
            continue
        share = len(items) / total
        severity: Severity = "error" if share >= options.thresholds.error_fraction else "warning"
        out.append(
            _finding(
                task,
                "multi-label",
                severity,
                f"{_plural(len(items), 'sentence')} {_verb(len(items), 'carries', 'carry')} "
                f"more than one label {kind} "
                f"({share:.2%} of distinct sentences); no probe can get them all right",
                count=len(items),
                examples=items[:5],
                data={"kind": kind, "share": share},
            )
        )
    if repeats:
        text = ", ".join(f"{n} in {s}" for s, n in repeats.items())
        out.append(
            _finding(
                task,
                "repeats",
                "info",
                f"sentences repeated with the same label within a split: {text}",
                count=sum(repeats.values()),
                data={"repeats": dict(repeats)},
            )
        )
    return out


# ---------------------------------------------------------------------------- classes


def class_counts(task: ProbingTask) -> dict[str, dict[str, int]]:
    """Examples per label per split (labels in the task's order)."""
    order = {label: i for i, label in enumerate(task_labels(task))}
    out = {}
    for name, split in _splits(task):
        c = Counter(split.labels)
        out[name] = dict(sorted(c.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))
    return out


def check_balance(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """Class counts per split (info) and splits whose largest/smallest class ratio exceeds
    ``imbalance_ratio`` (warning: the paper balances every split, and accuracies must then be
    read against the majority baseline)."""
    counts = class_counts(task)
    out = [
        _finding(
            task,
            "balance",
            "info",
            "classes per split: "
            + "; ".join(
                f"{s}: "
                + ", ".join(f"{k}={v}" for k, v in list(c.items())[:6])
                + (", ..." if len(c) > 6 else "")
                for s, c in counts.items()
            ),
            data={"counts": counts},
        )
    ]
    for name, c in counts.items():
        if len(c) < 2:
            continue  # one class: check_missing_classes reports it
        (big, n_big), (small, n_small) = (
            max(c.items(), key=lambda kv: kv[1]),
            min(c.items(), key=lambda kv: kv[1]),
        )
        ratio = n_big / n_small
        if ratio > options.thresholds.imbalance_ratio:
            total = sum(c.values())
            out.append(
                _finding(
                    task,
                    "imbalance",
                    "warning",
                    f"{name} split is imbalanced: {big!r} has {n_big} ({n_big / total:.0%}), "
                    f"{small!r} has {n_small} ({n_small / total:.0%}), ratio {ratio:.2f}; "
                    f"majority accuracy is {n_big / total:.1%}",
                    data={"split": name, "ratio": ratio, "majority": n_big / total},
                )
            )
    return out


def check_missing_classes(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """A split with one class, or an evaluation split lacking classes of train (Turkish
    X-Probe subj/obj number test files): accuracy there measures nothing, an error; a dev
    split, or a test split of a many-class task, missing a few classes is a warning."""
    out = []
    counts = class_counts(task)
    train = set(counts.get("train", {}))
    for name, c in counts.items():
        if len(c) == 1:
            (only,) = c
            out.append(
                _finding(
                    task,
                    "missing-class",
                    "error",
                    f"{name} split has a single class ({only!r}, {c[only]} examples): "
                    "accuracy on it says nothing about the probe",
                    data={"split": name, "classes": list(c)},
                )
            )
            continue
        missing = sorted(train - set(c)) if name != "train" else []
        if not missing:
            continue
        many = len(train) > options.thresholds.many_classes
        severity: Severity = "error" if name == "test" and not many else "warning"
        shown = ", ".join(repr(m) for m in missing[:5]) + (", ..." if len(missing) > 5 else "")
        out.append(
            _finding(
                task,
                "missing-class",
                severity,
                f"{name} split has no examples of {len(missing)} of the {len(train)} train "
                f"classes ({shown})",
                count=len(missing),
                data={"split": name, "missing": missing},
            )
        )
    return out


# ---------------------------------------------------------------------------- lexical split


def _forms(sentence: str) -> set[str]:
    return {t.lower() for t in sentence.split() if any(ch.isalpha() for ch in t)}


def _form_labels(forms: Sequence[set[str]], labels: Sequence[str]) -> dict[str, Counter[str]]:
    out: dict[str, Counter[str]] = defaultdict(Counter)
    for fs, label in zip(forms, labels):
        for form in fs:
            out[form][label] += 1
    return out


def _perfect(
    train: tuple[Sequence[set[str]], Sequence[str]],
    test: tuple[Sequence[set[str]], Sequence[str]],
    min_total: int,
) -> tuple[list[tuple[str, str, int, int]], float]:
    """The forms in train and test with one and the same label every time (at least
    ``min_total`` times in all), and their matched mass: the sum over those forms of
    min(test count, train count scaled to the test size)."""
    tr, te = _form_labels(*train), _form_labels(*test)
    scale = len(test[1]) / max(1, len(train[1]))
    out, mass = [], 0.0
    for form, c_te in te.items():
        c_tr = tr.get(form)
        if not c_tr or len(c_tr) != 1 or len(c_te) != 1:
            continue
        ((l_tr, n_tr),), ((l_te, n_te),) = c_tr.items(), c_te.items()
        if l_tr == l_te and n_tr + n_te >= min_total:
            out.append((form, l_tr, n_tr, n_te))
            mass += min(n_te, n_tr * scale)
    return sorted(out, key=lambda f: (-(f[2] + f[3]), f[0])), mass


def perfect_forms(
    train: tuple[Sequence[str], Sequence[str]],
    test: tuple[Sequence[str], Sequence[str]],
    min_total: int,
) -> list[tuple[str, str, int, int]]:
    """(form, label, train count, test count) of the word forms that occur in train and test
    with one and the same label every time, at least ``min_total`` times in all."""
    forms = ([_forms(s) for s in train[0]], train[1]), ([_forms(s) for s in test[0]], test[1])
    return _perfect(*forms, min_total)[0]


def check_target_forms(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """The lexical split of Tense/SubjNum/ObjNum: a target form (the main verb, the subject or
    object noun) must occur in one partition only, or the probe can memorise forms.

    With the generator's targets (``options.targets``) this is exact: a form in two splits is
    an error. Without them (published files carry no annotation) the split is tested as a
    whole: word forms that occur in train and test always with one label are counted, each
    weighted by min(test count, train count scaled to the test size) (the matched mass). A
    lexical split removes the train targets from test and the test targets from train, so a
    frequent train target that reappears in test as an ordinary word weighs little, while
    forms shared by nature (other verbs in the same tense, agreeing words) weigh as much as in
    any split. The mass is compared with the same mass when the same sentences are split at
    random ``lexical_resplits`` times: at or above ``lexical_ratio`` of it (and not far below
    in standard deviations), the partitions probably share target forms (a warning, never an
    error: it is a heuristic).
    """
    if options.targets:
        return _exact_targets(task, options.targets)
    if paper_name(task) not in LEXICAL_SPLIT_TASKS or not {"train", "test"} <= set(task.splits):
        return []
    th = options.thresholds
    train, test = task.splits["train"], task.splits["test"]
    forms = [_forms(s) for s in train.sentences] + [_forms(s) for s in test.sentences]
    labels = list(train.labels) + list(test.labels)
    n = len(train)
    found, mass = _perfect((forms[:n], labels[:n]), (forms[n:], labels[n:]), th.lexical_min_total)
    rng = np.random.default_rng(th.seed)
    masses = []
    for _ in range(th.lexical_resplits):
        order = rng.permutation(len(forms))
        a, b = order[:n], order[n:]
        masses.append(
            _perfect(
                ([forms[i] for i in a], [labels[i] for i in a]),
                ([forms[i] for i in b], [labels[i] for i in b]),
                th.lexical_min_total,
            )[1]
        )
    random_mass = float(np.mean(masses))
    sd = max(float(np.std(masses)), 0.05 * random_mass, 1.0)
    ratio = mass / random_mass if random_mass else 0.0
    z = (mass - random_mass) / sd
    enough = random_mass >= 2 * th.lexical_min_total
    shared = enough and ratio >= th.lexical_ratio and z > -3
    if not enough:
        verdict = "too few shared forms to tell"
    elif shared:
        verdict = (
            "as much as a random split gives: the partitions probably share target forms "
            "(lexical split violated)"
        )
    else:
        verdict = "well below a random split: target forms are kept apart"
    return [
        _finding(
            task,
            "lexical-split",
            "warning" if shared else "info",
            f"{_plural(len(found), 'word form')} {_verb(len(found), 'occurs', 'occur')} in "
            f"train and test always with the same label, matched mass {mass:.0f} test "
            f"occurrences vs {random_mass:.0f} when the same sentences are split at random "
            f"(ratio {ratio:.2f}); {verdict} [heuristic: no target annotation]",
            count=len(found),
            examples=[f"{f!r} always {lab!r} ({a} train, {b} test)" for f, lab, a, b in found[:5]],
            data={
                "mass": mass,
                "random_mass": random_mass,
                "ratio": ratio,
                "z": z,
                "heuristic": True,
            },
        )
    ]


def _exact_targets(task: ProbingTask, targets: dict[str, Sequence[str | None]]) -> list[Finding]:
    forms = {s: {t for t in ts if t} for s, ts in targets.items()}
    out = []
    for a, b in combinations([s for s in SPLITS if s in forms], 2):
        shared = sorted(forms[a] & forms[b])
        if shared:
            n = sum(1 for t in targets[b] if t in set(shared))
            out.append(
                _finding(
                    task,
                    "lexical-split",
                    "error",
                    f"{_plural(len(shared), 'target form')} "
                    f"{_verb(len(shared), 'occurs', 'occur')} in both {a} and {b} "
                    f"({n} {b} sentences); each form must stay in one partition",
                    count=len(shared),
                    examples=[repr(t) for t in shared[:5]],
                    data={"splits": [a, b], "heuristic": False},
                )
            )
    if not out:
        sizes = ", ".join(f"{len(v)} {s}" for s, v in forms.items())
        out.append(
            _finding(
                task,
                "lexical-split",
                "info",
                f"target forms are disjoint across splits ({sizes})",
                data={"forms": {s: len(v) for s, v in forms.items()}, "heuristic": False},
            )
        )
    return out


# ---------------------------------------------------------------------------- surface cues

#: Conneau et al. (2018), Table 2: test accuracy of the text baselines per paper task.
PAPER_BASELINES: dict[str, dict[str, float]] = {
    # SentLen, WC, TreeDepth, TopConst, BShift, Tense, SubjNum, ObjNum, SOMO, CoordInv
    name: dict(zip(PAPER_TASKS, row))
    for name, row in {
        "Majority": (20.0, 0.5, 17.9, 5.0, 50.0, 50.0, 50.0, 50.0, 50.0, 50.0),
        "Length": (100.0, 0.2, 18.1, 9.3, 50.6, 56.5, 50.3, 50.1, 50.2, 50.0),
        "NB-uni-tfidf": (22.7, 97.8, 24.1, 41.9, 49.5, 77.7, 68.9, 64.0, 38.0, 50.5),
        "NB-bi-tfidf": (23.0, 95.0, 24.6, 53.0, 63.8, 75.9, 69.1, 65.4, 39.9, 55.7),
    }.items()
}


def paper_margins(task: ProbingTask) -> dict[str, float]:
    """Points over Majority of the paper's Length, NB-uni-tfidf and NB-bi-tfidf on this task
    ({} for a task not in the paper)."""
    name = paper_name(task)
    if name not in PAPER_TASKS:
        return {}
    majority = PAPER_BASELINES["Majority"][name]
    return {
        b: round(PAPER_BASELINES[b][name] - majority, 1)
        for b in ("Length", "NB-uni-tfidf", "NB-bi-tfidf")
    }


def expects_no_surface_cue(task: ProbingTask) -> bool:
    """The task's metadata says no surface cue may predict the label (by default the paper's
    altered-sentence tasks, BShift, SOMO and CoordInv, whose classes are the same kind of
    sentence with or without one alteration)."""
    meta = task.metadata
    if meta.no_surface_cue is not None:
        return meta.no_surface_cue
    return paper_name(task) in ALTERED_TASKS


def is_punct(token: str) -> bool:
    """A token made of punctuation and symbols only."""
    return bool(token) and all(unicodedata.category(ch)[0] in "PS" for ch in token)


def token_class(token: str) -> str:
    """punct, number, all-caps, capitalised, lower or other (no letter, digit or punct)."""
    if is_punct(token):
        return "punct"
    if any(ch.isdigit() for ch in token):
        return "number"
    letters = [ch for ch in token if ch.isalpha()]
    if not letters:
        return "other"
    if len(letters) > 1 and all(ch.isupper() for ch in letters):
        return "all-caps"
    return "capitalised" if letters[0].isupper() else "lower"


def first_token(sentence: str) -> str:
    parts = sentence.split(None, 1)
    return parts[0] if parts else ""


def last_token(sentence: str) -> str:
    parts = sentence.rsplit(None, 1)
    return parts[-1] if parts else ""


def lower_initial(sentence: str) -> bool | None:
    """Whether the first word with a letter starts lower-case (None: no cased letter)."""
    for token in sentence.split():
        for ch in token:
            if ch.isalpha():
                if ch.islower():
                    return True
                if ch.isupper():
                    return False
                return None  # an uncased script
    return None


#: Punctuation counts at or above this are one feature value.
PUNCT_CAP = 10


@dataclass(frozen=True)
class Rule:
    """A single-position surface rule: a sentence's feature value decides the label (the most
    frequent train label of that value; unseen values and ties: the train majority label)."""

    check: str
    name: str
    feature: Callable[[str], Hashable]


#: The single-position rules, cheap enough to run on every audit (also with --no-baselines).
RULES: tuple[Rule, ...] = (
    Rule("first-token", "first token", first_token),
    Rule("first-token-class", "class of the first token", lambda s: token_class(first_token(s))),
    Rule("last-token", "last token", last_token),
    Rule("last-token-class", "class of the last token", lambda s: token_class(last_token(s))),
    Rule("last-char", "last character", lambda s: s.rstrip()[-1:]),
    Rule(
        "punct-count",
        "number of punctuation tokens",
        lambda s: min(PUNCT_CAP, sum(map(is_punct, s.split()))),
    ),
    Rule("casing-cue", "casing of the first word", lower_initial),
)
#: Its own check (:func:`check_casing_cue`) also reports the casing shares per class.
CASING_RULE = RULES[-1]


def _majority(labels: Sequence[str]) -> str:
    c = Counter(labels)
    return min(c, key=lambda k: (-c[k], k))  # ties: first in sorted order, as MajorityProbe


@dataclass(frozen=True)
class CueScore:
    """A cue's test accuracy against the train-majority prediction on the same items, and the
    exact one-sided binomial test that its hits exceed what any constant prediction expects
    (``chance``: the largest class share of the test items)."""

    accuracy: float
    majority: float
    chance: float
    n: int
    p: float

    @property
    def gain_points(self) -> float:
        return 100 * (self.accuracy - self.majority)


def score_against_majority(
    predicted: Sequence[str], majority: str, gold: Sequence[str]
) -> CueScore:
    """Accuracy of ``predicted`` vs always ``majority`` on ``gold``. Significance: the number
    of hits against Binomial(n, largest class share), one-sided and exact, so a tiny test
    split cannot make a cue significant by noise (a cue independent of the label cannot beat
    the best constant prediction in expectation)."""
    from scipy.stats import binomtest

    n = len(gold)
    hits = sum(p == g for p, g in zip(predicted, gold))
    chance = max(Counter(gold).values()) / n if n else 1.0
    p = binomtest(hits, n, chance, alternative="greater").pvalue if n and chance < 1 else 1.0
    return CueScore(
        accuracy=hits / max(n, 1),
        majority=sum(majority == g for g in gold) / max(n, 1),
        chance=chance,
        n=n,
        p=float(p),
    )


def _scored_test(task: ProbingTask) -> tuple[list[str], list[str]] | None:
    """Test items whose label occurs in train (others cannot be predicted by anything)."""
    if not {"train", "test"} <= set(task.splits):
        return None
    known = set(task.splits["train"].labels)
    test = task.splits["test"]
    pairs = [(s, y) for s, y in zip(test.sentences, test.labels) if y in known]
    if not pairs or len(known) < 2:
        return None
    return [s for s, _ in pairs], [y for _, y in pairs]


def rule_predictions(
    feature: Callable[[str], Hashable], train: Split, sentences: Sequence[str]
) -> list[str]:
    """Per feature value the most frequent train label (ties and unseen values: the train
    majority label)."""
    default = _majority(train.labels)
    table: dict[Hashable, Counter[str]] = defaultdict(Counter)
    for sentence, label in zip(train.sentences, train.labels):
        table[feature(sentence)][label] += 1
    rule = {}
    for value, counts in table.items():
        top = max(counts.values())
        best = sorted(label for label, c in counts.items() if c == top)
        rule[value] = default if default in best else best[0]
    return [rule.get(feature(s), default) for s in sentences]


def _signed(x: float) -> str:
    return f"{x:+.1f}"


def _cue_finding(
    task: ProbingTask,
    options: CheckOptions,
    check: str,
    cue: str,
    score: CueScore,
    *,
    kind: str,
    allowed: float = 0.0,
    alarm: bool | None = None,
    prefix: str = "",
    data: dict | None = None,
) -> Finding:
    """One cue's finding. Where the task must carry no surface cue (``alarm``, by default
    :func:`expects_no_surface_cue`), a significant gain (p < ``cue_p_value``) of
    ``cue_warning_points``/``cue_error_points`` over majority beyond ``allowed`` (the paper's own
    margin for that baseline, if any) is a warning/an error; elsewhere the gain is info, shown
    next to the paper's baseline margins."""
    th = options.thresholds
    if alarm is None:
        alarm = expects_no_surface_cue(task)
    gain = score.gain_points
    significant = score.p < th.cue_p_value
    severity: Severity = "info"
    if alarm and significant:
        if gain - allowed >= th.cue_error_points:
            severity = "error"
        elif gain - allowed >= th.cue_warning_points:
            severity = "warning"
    margins = paper_margins(task)
    beats = significant and bool(margins) and gain > max(margins.values())
    text = (
        f"{prefix}{cue} {kind}: {100 * score.accuracy:.1f}% vs majority "
        f"{100 * score.majority:.1f}% on test ({_signed(gain)} points, "
        f"p={score.p:.2g}{'' if significant else ', not significant'})"
    )
    if severity != "info":
        text += f"; {paper_name(task)} must carry no surface cue: the label leaks"
        if allowed > 0:
            text += f" (beyond the paper's own {_signed(allowed)} points)"
    elif margins and not alarm and significant:
        shown = ", ".join(f"{b} {_signed(m)}" for b, m in margins.items())
        text += f"; paper's baselines on {paper_name(task)}: {shown}"
        if beats:
            text += " (beaten)"
    return _finding(
        task,
        check,
        severity,
        text,
        data={
            "cue": cue,
            "kind": kind,
            "accuracy": score.accuracy,
            "majority": score.majority,
            "gain_points": gain,
            "p_value": score.p,
            "significant": significant,
            "n": score.n,
            "alarm": alarm,
            "allowed_points": allowed,
            "paper_margins": margins,
            "beats_paper": beats,
            **(data or {}),
        },
    )


def _rule_check(rule: Rule) -> Check:
    def check(task: ProbingTask, options: CheckOptions) -> list[Finding]:
        test = _scored_test(task)
        if test is None:
            return []
        train = task.splits["train"]
        predicted = rule_predictions(rule.feature, train, test[0])
        score = score_against_majority(predicted, _majority(train.labels), test[1])
        return [_cue_finding(task, options, rule.check, rule.name, score, kind="rule")]

    check.__name__ = f"check_{rule.check.replace('-', '_')}"
    check.__doc__ = (
        f"The rule 'the {rule.name} decides the label', fitted on train, against majority on "
        "test (see :func:`_cue_finding` for the severities)."
    )
    return check


def check_casing_cue(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """Casing of the first word (X-Probe's BShift swaps at the first position, so
    lower-case-initial sentences are almost all inverted): the share of lower-case-initial
    sentences per class, and the casing rule scored like every other single-position rule."""
    rows: dict[bool, Counter[str]] = {True: Counter(), False: Counter()}
    for _, split in _splits(task):
        for sentence, label in zip(split.sentences, split.labels):
            cue = lower_initial(sentence)
            if cue is not None:
                rows[cue][label] += 1
    if not rows[True] or not rows[False]:
        return []  # no variation (or an uncased script): nothing to learn from casing
    labels = sorted(set(rows[True]) | set(rows[False]))
    share = {
        label: rows[True][label] / max(1, rows[True][label] + rows[False][label])
        for label in labels
    }
    shown = ", ".join(f"{label}={share[label]:.1%}" for label in labels[:6])
    more = ", ..." if len(labels) > 6 else ""
    prefix = f"lower-case-initial sentences per class: {shown}{more}; "
    (finding,) = _rule_check(CASING_RULE)(task, options) or [None]
    if finding is None:
        return [
            _finding(task, "casing-cue", "info", prefix.rstrip("; "), data={"lower_share": share})
        ]
    finding.message = prefix + finding.message
    finding.data["lower_share"] = share
    return [finding]


def length_stats(task: ProbingTask) -> dict[str, dict[str, float]]:
    """Token count per class over all splits: mean, std, min, max, n."""
    lengths: dict[str, list[int]] = defaultdict(list)
    for _, split in _splits(task):
        for sentence, label in zip(split.sentences, split.labels):
            lengths[label].append(len(sentence.split()))
    out = {}
    labels = task_labels(task)
    for label in [lab for lab in labels if lab in lengths] + sorted(set(lengths) - set(labels)):
        a = np.asarray(lengths[label], dtype=float)
        out[label] = {
            "mean": float(a.mean()),
            "std": float(a.std()),
            "min": float(a.min()),
            "max": float(a.max()),
            "n": int(a.size),
        }
    return out


def check_length(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """Length distribution per class (info); whether it leaks is the Length baseline's call."""
    stats = length_stats(task)
    shown = ", ".join(f"{k}: {v['mean']:.1f}±{v['std']:.1f}" for k, v in list(stats.items())[:6])
    return [
        _finding(
            task,
            "length",
            "info",
            f"tokens per sentence by class: {shown}{', ...' if len(stats) > 6 else ''}",
            data={"per_class": stats},
        )
    ]


# ---------------------------------------------------------------------------- baselines


@dataclass(frozen=True)
class Baseline:
    """A text baseline trained as ``sentprobe run`` trains it (selection on dev, else CV)."""

    name: str
    #: the paper's row whose margin on the task is tolerated before a cue counts as a leak
    paper_row: str | None
    #: paper tasks (besides the no-surface-cue ones) where the paper has it at chance
    at_chance: frozenset[str] = frozenset()

    @property
    def check(self) -> str:
        return f"{self.name.lower()}-baseline"


#: Length at chance in the paper also on TreeDepth (the paper decorrelates depth and length).
BASELINES: tuple[Baseline, ...] = (
    Baseline("Length", "Length", frozenset({"TreeDepth"})),
    Baseline("NB-uni-tfidf", "NB-uni-tfidf"),
    Baseline("NB-bi-tfidf", "NB-bi-tfidf"),
    Baseline("NB-char-tfidf", "NB-uni-tfidf"),  # within-word n-grams: no order, like NB-uni
)


def baseline_predictions(task: ProbingTask, seed: int = 0) -> dict[str, np.ndarray]:
    """Test predictions of Majority and each of :data:`BASELINES` on the scored test items
    (those whose label occurs in train)."""
    from sentprobe.analysis.charnb import CharNBTfidfProbe
    from sentprobe.probes import LengthEncoder, LogisticProbe, MajorityProbe, NBTfidfProbe

    test = _scored_test(task)
    if test is None:
        return {}
    train = task.splits["train"]
    known = set(train.labels)
    dev_split = task.splits.get("dev")
    dev = None
    if dev_split is not None:
        pairs = [(s, y) for s, y in zip(dev_split.sentences, dev_split.labels) if y in known]
        dev = ([s for s, _ in pairs], [y for _, y in pairs]) if pairs else None
    out = {"Majority": MajorityProbe().fit(train.sentences, train.labels).predict(test[0])}
    enc = LengthEncoder()
    length = LogisticProbe(random_state=seed).fit(
        enc.encode(train.sentences),
        np.asarray(train.labels),
        None if dev is None else enc.encode(dev[0]),
        None if dev is None else np.asarray(dev[1]),
    )
    out["Length"] = length.predict(enc.encode(test[0]))
    cv = min(5, min(Counter(train.labels).values()))
    if dev is None and cv < 2:
        return out
    text_probes = {
        "NB-uni-tfidf": lambda: NBTfidfProbe(ngram_range=(1, 1), cv=max(cv, 2)),
        "NB-bi-tfidf": lambda: NBTfidfProbe(ngram_range=(1, 2), cv=max(cv, 2)),
        "NB-char-tfidf": lambda: CharNBTfidfProbe(ngram_range=(1, 4), cv=max(cv, 2)),
    }
    for name, make in text_probes.items():
        nb = make().fit(train.sentences, train.labels, *(dev or (None, None)))
        out[name] = nb.predict(test[0])
    return out


def baseline_scores(task: ProbingTask, seed: int = 0) -> dict[str, float]:
    """Test accuracy of Majority, Length, NB-uni/bi-tfidf and NB-char-tfidf."""
    test = _scored_test(task)
    if test is None:
        return {}
    gold = np.asarray(test[1])
    return {k: float(np.mean(v == gold)) for k, v in baseline_predictions(task, seed).items()}


def check_baselines(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """Length, NB-uni-tfidf, NB-bi-tfidf and NB-char-tfidf as leakage alarms, scored against
    majority like the rules. A leak where the task must carry no surface cue (and Length on
    TreeDepth, at chance in the paper) once the gain exceeds the paper's own margin for that
    baseline (NB-bi-tfidf is 13.8 points above chance on the paper's BShift: bigrams see the
    swap); elsewhere info next to the paper's margins. Skipped with ``baselines=False``."""
    if not options.baselines:
        return []
    test = _scored_test(task)
    if test is None:
        return []
    predictions = baseline_predictions(task, options.thresholds.seed)
    majority = str(predictions.pop("Majority")[0])
    margins = paper_margins(task)
    out = []
    for baseline in BASELINES:
        if baseline.name not in predictions:
            continue
        predicted = [str(p) for p in predictions[baseline.name]]
        score = score_against_majority(predicted, majority, test[1])
        allowed = max(0.0, margins.get(baseline.paper_row or "", 0.0))
        alarm = expects_no_surface_cue(task) or paper_name(task) in baseline.at_chance
        finding = _cue_finding(
            task,
            options,
            baseline.check,
            baseline.name,
            score,
            kind="baseline",
            allowed=allowed,
            alarm=alarm,
            data={"baseline": baseline.name},
        )
        out.append(finding)
    return out


# ---------------------------------------------------------------------------- twins


def _lowered(sentence: str) -> list[str]:
    return sentence.lower().split()


def _is_swap(a: list[str], b: list[str]) -> bool:
    diff = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    return (
        len(a) == len(b)
        and len(diff) == 2
        and diff[1] == diff[0] + 1
        and a[diff[0]] == b[diff[1]]
        and a[diff[1]] == b[diff[0]]
    )


def _is_replacement(a: list[str], b: list[str]) -> bool:
    return len(a) == len(b) and sum(x != y for x, y in zip(a, b)) == 1


def _is_reordering(a: list[str], b: list[str]) -> bool:
    return a != b and sorted(a) == sorted(b)


#: How each altered-sentence task alters a sentence: keys that group candidate twins, and the
#: exact relation between an original and its altered form.
TWINS: dict[str, tuple[Callable[[list[str]], list[Hashable]], Callable[..., bool], str]] = {
    "BShift": (lambda t: [tuple(sorted(t))], _is_swap, "two adjacent words swapped"),
    "CoordInv": (lambda t: [tuple(sorted(t))], _is_reordering, "the same words reordered"),
    # one word replaced: the first or the second half is unchanged
    "SOMO": (
        lambda t: [("a", len(t), *t[: len(t) // 2]), ("b", len(t), *t[len(t) // 2 :])],
        _is_replacement,
        "one word replaced",
    ),
}


def check_twins(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """An original sentence in one split and its altered form (BShift: two adjacent words
    swapped; SOMO: one word replaced; CoordInv: the same words reordered; compared
    lower-cased; the two with different labels) in another: a probe can score by recognising
    the pair. At or above ``error_fraction`` of the later split (and ``twin_error_count``
    sentences) an error, below a warning."""
    spec = TWINS.get(paper_name(task))
    if spec is None:
        return []
    keys, related, what = spec
    groups: dict[Hashable, list[tuple[int, int]]] = defaultdict(list)
    splits = _splits(task)
    tokens = [[_lowered(s) for s in split.sentences] for _, split in splits]
    for k, sentences in enumerate(tokens):
        for i, toks in enumerate(sentences):
            for key in keys(toks):
                groups[hash(key)].append((k, i))
    pairs: dict[tuple[int, int], list[str]] = defaultdict(list)
    later: dict[tuple[int, int], set[int]] = defaultdict(set)
    seen: set[tuple[int, int, int, int]] = set()
    for members in groups.values():
        if len(members) < 2 or len({k for k, _ in members}) < 2:
            continue
        for (ka, ia), (kb, ib) in combinations(members, 2):
            if ka == kb or (ka, ia, kb, ib) in seen:
                continue
            seen.add((ka, ia, kb, ib))
            if splits[ka][1].labels[ia] == splits[kb][1].labels[ib]:
                continue  # an original and its altered form differ in label
            if related(tokens[ka][ia], tokens[kb][ib]):
                a, b = splits[ka][1].sentences[ia], splits[kb][1].sentences[ib]
                pairs[(ka, kb)].append(f"{_quote(a, 60)} ~ {_quote(b, 60)}")
                later[(ka, kb)].add(ib)
    out = []
    for (ka, kb), examples in sorted(pairs.items()):
        (a, _), (b, sb) = splits[ka], splits[kb]
        n = len(later[(ka, kb)])
        share = n / max(1, len(sb))
        th = options.thresholds
        error = share >= th.error_fraction and n >= th.twin_error_count
        severity: Severity = "error" if error else "warning"
        out.append(
            _finding(
                task,
                "altered-twins",
                severity,
                f"{_plural(n, 'sentence')} of {b} {_verb(n, 'is', 'are')} "
                f"the altered or original form of a {a} sentence ({what}; {share:.1%} of {b}); "
                "a probe can score by recognising the pair",
                count=n,
                examples=examples[:5],
                data={"splits": [a, b], "share": share, "pairs": len(examples)},
            )
        )
    return out


#: Every check, in report order.
CHECKS: tuple[Check, ...] = (
    check_sizes,
    check_identical_splits,
    check_split_overlap,
    check_labels_per_sentence,
    check_missing_classes,
    check_balance,
    check_target_forms,
    check_twins,
    *(_rule_check(rule) for rule in RULES if rule is not CASING_RULE),
    check_casing_cue,
    check_length,
    check_baselines,
)


def run_checks(task: ProbingTask, options: CheckOptions | None = None) -> list[Finding]:
    """All checks on one task."""
    options = options or CheckOptions()
    return [f for check in CHECKS for f in check(task, options)]
