"""Data checks shared by ``sentprobe audit`` (published suites) and the quality report of
generated suites: one set of functions, each ``(task, options) -> list[Finding]``.

They look for what makes probing scores wrong or misleading without any encoder: the same
sentence in several splits or with several labels, unbalanced or one-class splits, target forms
shared between partitions (the paper's lexical split), and surface cues (casing of the first
word, length, bag of words) that predict the label on tasks where they should not.
The numbers behind each finding are in ``Finding.data`` so reports can tabulate them.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import numpy as np

from sentprobe.analysis.findings import Finding, Severity
from sentprobe.datasets.task import SPLITS, ProbingTask, Split

#: Tasks whose paper version keeps each target form in one partition (Conneau et al. 2018).
LEXICAL_SPLIT_TASKS = frozenset({"Tense", "SubjNum", "ObjNum"})
#: Tasks on which the Length baseline is at chance in the paper (Table 2): above it = a leak.
LENGTH_AT_CHANCE = frozenset({"TreeDepth", "BShift", "SOMO", "CoordInv"})
#: Tasks on which a bag of words cannot know the label (word order, or a replacement word that
#: must not repeat across partitions): NB-uni-tfidf above chance = a leak.
NB_UNI_AT_CHANCE = frozenset({"BShift", "CoordInv", "SOMO"})


@dataclass(frozen=True)
class Thresholds:
    """Where an observation turns into a warning or an error (fractions, ratios, points)."""

    #: share of an evaluation split (or of all sentences) above which overlap/ambiguity is an error
    error_fraction: float = 0.01
    #: largest/smallest class size above which a split counts as imbalanced (paper: balanced)
    imbalance_ratio: float = 1.2
    #: significance level of the casing-label chi-square test
    p_value: float = 1e-3
    #: casing cue accuracy above majority (points) that makes the cue an error
    cue_error_points: float = 5.0
    #: baseline accuracy above majority (points) for a warning / an error where it should be chance
    baseline_warning_points: float = 3.0
    baseline_error_points: float = 10.0
    #: and the z-score of that gain (binomial, test split) must reach this
    baseline_z: float = 3.0
    #: lexical heuristic: a form needs this many occurrences (train + test) to count
    lexical_min_total: int = 5
    #: missing classes in test are an error up to this many classes (a warning above)
    many_classes: int = 10
    seed: int = 0


@dataclass
class CheckOptions:
    """What the checks may use besides the task itself."""

    thresholds: Thresholds = field(default_factory=Thresholds)
    #: train the Length and NB-uni-tfidf baselines (seconds on 100k sentences; off for speed)
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


def _form_labels(sentences: Sequence[str], labels: Sequence[str]) -> dict[str, Counter[str]]:
    out: dict[str, Counter[str]] = defaultdict(Counter)
    for sentence, label in zip(sentences, labels):
        for form in _forms(sentence):
            out[form][label] += 1
    return out


def perfect_forms(
    train: tuple[Sequence[str], Sequence[str]],
    test: tuple[Sequence[str], Sequence[str]],
    min_total: int,
) -> list[tuple[str, str, int, int]]:
    """(form, label, train count, test count) of the word forms that occur in train and test
    with one and the same label every time, at least ``min_total`` times in all."""
    tr, te = _form_labels(*train), _form_labels(*test)
    out = []
    for form, c_te in te.items():
        c_tr = tr.get(form)
        if not c_tr or len(c_tr) != 1 or len(c_te) != 1:
            continue
        ((l_tr, n_tr),), ((l_te, n_te),) = c_tr.items(), c_te.items()
        if l_tr == l_te and n_tr + n_te >= min_total:
            out.append((form, l_tr, n_tr, n_te))
    return sorted(out, key=lambda f: (-(f[2] + f[3]), f[0]))


def check_target_forms(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """The lexical split of Tense/SubjNum/ObjNum: a target form (the main verb, the subject or
    object noun) must occur in one partition only, or the probe can memorise forms.

    With the generator's targets (``options.targets``) this is exact: a form in two splits is
    an error. Without them (published files carry no annotation) the target is approximated:
    a word form that occurs in train and test and carries one and the same label every time
    (at least ``lexical_min_total`` times) behaves as a memorisable target. Rare words pass
    that test by chance too, so the count is compared with the same count after shuffling the
    labels within each split; only a count well above chance is a warning (a heuristic, never
    an error).
    """
    if options.targets:
        return _exact_targets(task, options.targets)
    if paper_name(task) not in LEXICAL_SPLIT_TASKS or not {"train", "test"} <= set(task.splits):
        return []
    th = options.thresholds
    train, test = task.splits["train"], task.splits["test"]
    found = perfect_forms(
        (train.sentences, train.labels), (test.sentences, test.labels), th.lexical_min_total
    )
    rng = np.random.default_rng(th.seed)
    chance = np.mean(
        [
            len(
                perfect_forms(
                    (train.sentences, list(rng.permutation(train.labels))),
                    (test.sentences, list(rng.permutation(test.labels))),
                    th.lexical_min_total,
                )
            )
            for _ in range(3)
        ]
    )
    flagged = {f[0] for f in found}
    covered = sum(1 for s in test.sentences if _forms(s) & flagged)
    share = covered / max(1, len(test))
    above = len(found) >= 2 * chance + 3
    severity: Severity = "warning" if above else "info"
    verdict = (
        "well above chance: the partitions probably share target forms (lexical split violated)"
        if above
        else "not above chance"
    )
    return [
        _finding(
            task,
            "lexical-split",
            severity,
            f"{_plural(len(found), 'word form')} {_verb(len(found), 'occurs', 'occur')} in "
            "train and test always with the same "
            f"label (about {chance:.0f} expected by chance), in {share:.1%} of test sentences; "
            f"{verdict} [heuristic: no target annotation]",
            count=len(found),
            examples=[f"{f!r} always {lab!r} ({a} train, {b} test)" for f, lab, a, b in found[:5]],
            data={"chance": float(chance), "test_share": share, "heuristic": True},
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


def _majority(labels: Sequence[str]) -> str:
    c = Counter(labels)
    return min(c, key=lambda k: (-c[k], k))  # ties: first in sorted order, as MajorityProbe


def check_casing_cue(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """Casing of the first word as a label cue (X-Probe's BShift swaps at the first position,
    so lower-case-initial sentences are almost all inverted).

    Reports the share of lower-case-initial sentences per class; the cue is tested by a
    chi-square test of independence (tasks with at most ``many_classes`` classes) and by the
    test accuracy of the rule "predict the train majority label of the sentence's casing"
    against the majority baseline. Significant: warning; and a gain of ``cue_error_points``:
    error.
    """
    th = options.thresholds
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
    p = None
    if len(labels) <= th.many_classes:
        from scipy.stats import chi2_contingency

        table = np.array([[rows[v][label] for label in labels] for v in (True, False)])
        table = table[:, table.sum(0) > 0]
        p = float(chi2_contingency(table)[1]) if table.shape[1] > 1 else 1.0
    gain = 0.0
    if {"train", "test"} <= set(task.splits):
        train, test = task.splits["train"], task.splits["test"]
        default = _majority(train.labels)
        by_cue: dict[bool | None, list[str]] = defaultdict(list)
        for sentence, label in zip(train.sentences, train.labels):
            by_cue[lower_initial(sentence)].append(label)
        rule = {cue: _majority(ls) for cue, ls in by_cue.items()}
        pred = [rule.get(lower_initial(s), default) for s in test.sentences]
        cue_acc = float(np.mean([a == b for a, b in zip(pred, test.labels)]))
        maj_acc = float(np.mean([default == b for b in test.labels]))
        gain = 100 * (cue_acc - maj_acc)
    significant = (p is not None and p < th.p_value) or (p is None and gain >= 1.0)
    severity: Severity = "info"
    if significant:
        severity = "error" if gain >= th.cue_error_points else "warning"
    shown = ", ".join(f"{label}={share[label]:.1%}" for label in labels[:6])
    verdict = "predicts the label" if significant else "no association"
    p_text = "" if p is None else f", chi-square p={p:.2g}"
    return [
        _finding(
            task,
            "casing-cue",
            severity,
            f"lower-case-initial sentences per class: {shown}{', ...' if len(labels) > 6 else ''}"
            f"{p_text}; casing rule scores {gain:+.1f} points over majority on test: {verdict}",
            data={"lower_share": share, "p_value": p, "gain_points": gain},
        )
    ]


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


def baseline_scores(task: ProbingTask, seed: int = 0) -> dict[str, float]:
    """Test accuracy of Majority, Length (logistic regression on the token count) and
    NB-uni-tfidf, trained as ``sentprobe run`` trains them (selection on dev or by CV).
    Dev/test items with labels unseen in train are dropped (they cannot be predicted)."""
    from sentprobe.probes import LengthEncoder, LogisticProbe, MajorityProbe, NBTfidfProbe

    train, test = task.splits["train"], task.splits["test"]
    known = set(train.labels)

    def keep(split: Split | None) -> tuple[list[str], list[str]] | None:
        if split is None:
            return None
        pairs = [(s, y) for s, y in zip(split.sentences, split.labels) if y in known]
        return ([s for s, _ in pairs], [y for _, y in pairs]) if pairs else None

    dev, te = keep(task.splits.get("dev")), keep(test)
    if te is None:
        return {}
    y_te = np.asarray(te[1])
    majority = MajorityProbe().fit(train.sentences, train.labels)
    out = {"Majority": float(np.mean(majority.predict(te[0]) == y_te))}
    if len(known) < 2:
        return out
    enc = LengthEncoder()
    length = LogisticProbe(random_state=seed).fit(
        enc.encode(train.sentences),
        np.asarray(train.labels),
        None if dev is None else enc.encode(dev[0]),
        None if dev is None else np.asarray(dev[1]),
    )
    out["Length"] = float(np.mean(length.predict(enc.encode(te[0])) == y_te))
    cv = min(5, min(Counter(train.labels).values()))
    if dev is not None or cv >= 2:
        nb = NBTfidfProbe(ngram_range=(1, 1), cv=max(cv, 2)).fit(
            train.sentences, train.labels, *(dev or (None, None))
        )
        out["NB-uni-tfidf"] = float(np.mean(nb.predict(te[0]) == y_te))
    return out


def check_baselines(task: ProbingTask, options: CheckOptions) -> list[Finding]:
    """Length and NB-uni-tfidf as leakage alarms: on tasks where the paper has them at chance
    (Length: TreeDepth, BShift, SOMO, CoordInv; NB-uni: BShift, CoordInv, SOMO), a test
    accuracy well above majority (``baseline_warning_points``/``baseline_error_points`` and a
    binomial z of ``baseline_z``) means the label can be read off the surface. Elsewhere the
    accuracies are reported as info."""
    if not options.baselines or not {"train", "test"} <= set(task.splits):
        return []
    th = options.thresholds
    scores = baseline_scores(task, th.seed)
    if not scores:
        return []
    majority, n = scores["Majority"], len(task.splits["test"])
    name = paper_name(task)
    out = []
    for baseline, at_chance in (("Length", LENGTH_AT_CHANCE), ("NB-uni-tfidf", NB_UNI_AT_CHANCE)):
        if baseline not in scores:
            continue
        acc = scores[baseline]
        gain = 100 * (acc - majority)
        sd = math.sqrt(max(majority * (1 - majority), 1e-12) / max(n, 1))
        z = (acc - majority) / sd
        severity: Severity = "info"
        note = ""
        if name in at_chance and z >= th.baseline_z:
            if gain >= th.baseline_error_points:
                severity = "error"
            elif gain >= th.baseline_warning_points:
                severity = "warning"
            if severity != "info":
                note = f"; it should be at chance on {name}: the label leaks through the surface"
        out.append(
            _finding(
                task,
                f"{baseline.lower()}-baseline",
                severity,
                f"{baseline} baseline {100 * acc:.1f}% vs majority {100 * majority:.1f}% on "
                f"test ({gain:+.1f} points){note}",
                data={
                    "baseline": baseline,
                    "accuracy": acc,
                    "majority": majority,
                    "gain_points": gain,
                    "z": z,
                },
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
    check_casing_cue,
    check_length,
    check_baselines,
)


def run_checks(task: ProbingTask, options: CheckOptions | None = None) -> list[Finding]:
    """All checks on one task."""
    options = options or CheckOptions()
    return [f for check in CHECKS for f in check(task, options)]
