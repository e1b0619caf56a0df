"""Human judgments for generated function-word sets, the way Kim et al. (2019, sec. 2.4 and
Appendix C) collected them: export the items for annotators, read their votes back, keep the
items the votes support, and report agreement like the paper's Table 3. Long because the
acceptability and NLI protocols, the rule agreement a vote confirms and the suite rewrite
share one pass over the votes; split apart they would each re-read and re-key them.

- Acceptability items are judged natural / unnatural / neither. An item is kept when a strict
  majority of its votes agrees with the expected label (natural for an original sentence,
  unnatural for a mutated one); the kept items are then balanced, keeping unanimous items
  first (the paper: "take a subset of the natural sentences so that the label ratio is
  balanced, prioritizing examples with perfect inter-annotator agreement"), and dealt to ten
  folds again.
- NLI items are judged on a 1-5 Likert scale (5 = definitely entailment) or "does not make
  sense". An item with any "does not make sense" vote is dropped; votes map 5, 4 ->
  entailment, 3 -> neutral, 2, 1 -> contradiction, and the strict majority is the label.
- Items without a strict majority are dropped.
- In Prep, Comp, Quant and Spatial (items in original/mutated pairs) a pair whose two members
  end with the same label is dropped, as the release keeps only mutations that change the
  label.

Agreement (Table 3): pairwise agreement of the votes (``Agree``), the share of unanimous items
(``Unan.``) and the share of votes equal to the final label (``Accuracy``), on the final
items, as the paper's numbers are consistent with; and, over every voted item, Krippendorff's
alpha (nominal; any number of votes per item) and Fleiss' kappa (when every item has the same
number of votes).
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sentprobe.errors import DataError, SentprobeError
from sentprobe.generation.function_words.labels import (
    LABEL_MUST_CHANGE,
    MIN_ANNOTATED,
    MIN_RULE_AGREEMENT,
    rule_name,
)
from sentprobe.generation.function_words.release import (
    N_FOLDS,
    fold_splits,
    is_nli,
    read_release_set,
    release_sets,
    write_release_set,
)
from sentprobe.io import atomic_write_text, read_csv_table

ACCEPTABILITY_ANSWERS = ("natural", "unnatural", "neither")
NONSENSE = "does not make sense"
NLI_ANSWERS = ("1", "2", "3", "4", "5", NONSENSE)
LIKERT = {"5": "entailment", "4": "entailment", "3": "neutral", "2": "contradiction",
          "1": "contradiction"}  # fmt: skip
JUDGED = {"natural": "acceptable", "unnatural": "unacceptable"}
EXPORT_COLUMNS = ("item_id", "set", "sentence1", "sentence2", "options", "answer")


def item_id(set_name: str, pair_id: object) -> str:
    return f"{set_name}:{pair_id}"


def _items(suite: Path) -> dict[str, dict[str, tuple[dict, dict]]]:
    """Set name -> {item id: (data, metadata)} of every set of a DNC-format suite."""
    sets = release_sets(suite)
    if not sets:
        raise SentprobeError(f"{suite}: no <set>_data.json files (not a function-word suite)")
    return {
        name: {item_id(name, d["pair-id"]): (d, m) for d, m in read_release_set(path)}
        for name, path in sets.items()
    }


def export_rows(suite: str | Path, seed: int = 0) -> list[dict[str, str]]:
    """One row per item of every set, shuffled (the paper presented items in random order),
    with the paper's answer options and an empty ``answer`` column."""
    rows = []
    for name, items in _items(Path(suite)).items():
        options = " | ".join(NLI_ANSWERS if is_nli(name) else ACCEPTABILITY_ANSWERS)
        for iid, (data, _) in items.items():
            rows.append(
                {
                    "item_id": iid,
                    "set": name,
                    "sentence1": data["context"],
                    "sentence2": data.get("hypothesis") or "",
                    "options": options,
                    "answer": "",
                }
            )
    order = np.random.default_rng(seed).permutation(len(rows))
    return [rows[i] for i in order]


def export_items(suite: str | Path, out: str | Path, seed: int = 0) -> int:
    """Write the annotation sheet (CSV) atomically; returns the number of items."""
    rows = export_rows(suite, seed)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=EXPORT_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    atomic_write_text(out, buf.getvalue())
    return len(rows)


def read_votes(path: str | Path, kinds: dict[str, bool]) -> dict[str, list[str]]:
    """Item id -> its answers, from a CSV with ``item_id`` and ``answer`` columns (one vote a
    row; other columns, e.g. ``annotator``, are ignored). ``kinds``: item id -> is NLI. An
    unknown item id or answer is a DataError naming the line."""
    path = Path(path)
    table = read_csv_table(path, ("item_id", "answer"), None, hint="the columns item_id and answer")
    votes: dict[str, list[str]] = defaultdict(list)
    for lineno, row in table:
        iid = row["item_id"]
        if iid not in kinds:
            raise DataError(path, lineno, f"unknown item id {iid!r}")
        answer = " ".join(row["answer"].lower().split())
        allowed = NLI_ANSWERS if kinds[iid] else ACCEPTABILITY_ANSWERS
        if answer not in allowed:
            raise DataError(
                path,
                lineno,
                f"item {iid}: unknown answer {answer!r} (one of: {', '.join(allowed)})",
            )
        votes[iid].append(answer)
    if not votes:
        raise DataError(path, None, "no votes")
    return dict(votes)


def majority(labels: Sequence[str]) -> str | None:
    """The label of more than half of ``labels``, else None."""
    if not labels:
        return None
    label, count = Counter(labels).most_common(1)[0]
    return label if 2 * count > len(labels) else None


def decide(answers: Sequence[str], nli: bool, expected: str) -> tuple[str | None, str]:
    """(final label or None, reason) of one item's votes."""
    if nli:
        if NONSENSE in answers:
            return None, "dropped: a 'does not make sense' vote"
        label = majority([LIKERT[a] for a in answers])
        return (label, "kept") if label else (None, "dropped: no majority")
    top = majority(answers)
    if top is None:
        return None, "dropped: no majority"
    if JUDGED.get(top) != expected:
        return None, f"dropped: majority {top}, expected {expected}"
    return expected, "kept"


def krippendorff_alpha(units: Sequence[Sequence[str]]) -> float | None:
    """Krippendorff's alpha, nominal, from the values of each unit (any number per unit;
    units with fewer than two values are not pairable and left out)."""
    coincidences: dict[tuple[str, str], float] = defaultdict(float)
    for values in units:
        m = len(values)
        if m < 2:
            continue
        counts = Counter(values)
        for a, ca in counts.items():
            for b, cb in counts.items():
                coincidences[a, b] += ca * (cb - (a == b)) / (m - 1)
    totals: dict[str, float] = defaultdict(float)
    for (a, _), v in coincidences.items():
        totals[a] += v
    n = sum(totals.values())
    expected = sum(totals[a] * totals[b] for a in totals for b in totals if a != b)
    if n <= 1 or expected == 0:
        return None
    observed = sum(v for (a, b), v in coincidences.items() if a != b)
    return 1 - (n - 1) * observed / expected


def fleiss_kappa(units: Sequence[Sequence[str]]) -> float | None:
    """Fleiss' kappa; None unless every unit has the same number (>= 2) of values."""
    sizes = {len(u) for u in units}
    if len(sizes) != 1 or min(sizes) < 2:
        return None
    n = sizes.pop()
    categories = sorted({v for u in units for v in u})
    table = np.array([[Counter(u)[c] for c in categories] for u in units], dtype=float)
    p_item = ((table**2).sum(axis=1) - n) / (n * (n - 1))
    p_cat = table.sum(axis=0) / table.sum()
    chance = float((p_cat**2).sum())
    return None if chance == 1 else float((p_item.mean() - chance) / (1 - chance))


def table3_row(
    final: Sequence[tuple[Sequence[str], str]],
) -> dict[str, float | int | str | None]:
    """Agree / Unan. / Accuracy (%) / Size of final items, each (votes as labels, label).
    Agreement needs two votes: Agree, Unan. and Accuracy are over the items with at least
    two votes (None when there is none: one vote per item measures no agreement, and its
    "unanimity" would be 100 by construction); ``votes per item`` says how many there were."""
    pairs = agree = unanimous = hits = votes = multi = 0
    per_item = sorted({len(labels) for labels, _ in final})
    for labels, label in final:
        m = len(labels)
        if m < 2:
            continue
        multi += 1
        counts = Counter(labels)
        pairs += m * (m - 1)
        agree += sum(c * (c - 1) for c in counts.values())
        unanimous += len(counts) == 1
        hits += counts[label]
        votes += m
    size = len(final)
    return {
        "agree": round(100 * agree / pairs, 1) if pairs else None,
        "unanimous": round(100 * unanimous / multi, 1) if multi else None,
        "accuracy": round(100 * hits / votes, 1) if votes else None,
        "size": size,
        "votes per item": (
            None
            if not per_item
            else str(per_item[0])
            if len(per_item) == 1
            else f"{per_item[0]}-{per_item[-1]}"
        ),
    }


def _wilson(k: int, n: int) -> list[float]:
    """95 % Wilson interval of k successes in n, in %."""
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(method="wilson")
    return [round(100 * ci.low, 1), round(100 * ci.high, 1)]


def rule_sample(
    name: str, items: dict[str, tuple[dict, dict]], votes: dict[str, list[str]]
) -> dict[str, dict]:
    """Per labelling rule of NLI set ``name``: its annotated sample, the voted mutated items
    (``n``), how many of them the votes' strict majority labels as the rule does (``agree``;
    a "does not make sense" vote or no majority counts as a disagreement), the share and its
    95 % Wilson interval (%), and whether it confirms the rule (at least ``MIN_ANNOTATED``
    items, agreement at least ``MIN_RULE_AGREEMENT``)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for iid, (_, meta) in items.items():
        misc = meta.get("misc", {})
        guess = misc.get("candidate_label") or misc.get("expected_label_before_votes")
        if misc.get("original") is not False or not guess or not votes.get(iid):
            continue
        label, _ = decide(votes[iid], True, "")
        rule = rule_name(name, str(misc.get("task_desc", "")))
        counts[rule][0] += 1
        counts[rule][1] += label == guess
    out = {}
    for rule, (n, agree) in sorted(counts.items()):
        share = agree / n
        out[rule] = {
            "n": n, "agree": agree, "share": round(share, 4), "ci95": _wilson(agree, n),
            "confirmed": n >= MIN_ANNOTATED and share >= MIN_RULE_AGREEMENT,
        }  # fmt: skip
    return out


@dataclass
class SetOutcome:
    """What the votes did to one set."""

    name: str
    kept: list[tuple[dict, dict]] = field(default_factory=list)
    reasons: Counter = field(default_factory=Counter)
    agreement: dict = field(default_factory=dict)
    #: per labelling rule, its annotated sample (NLI sets: :func:`rule_sample`)
    rules: dict = field(default_factory=dict)
    #: False when no item of the set has a vote: the set is copied as it was
    voted: bool = True


def _vote_labels(answers: Sequence[str], nli: bool) -> list[str]:
    return [LIKERT[a] for a in answers if a != NONSENSE] if nli else list(answers)


def _balance(kept: list[tuple[dict, dict, bool]], rng: np.random.Generator) -> list:
    """Equal classes: each class cut to the smallest, unanimous items first."""
    by_label: dict[str, list] = defaultdict(list)
    for entry in kept:
        by_label[entry[0]["label"]].append(entry)
    n = min(len(v) for v in by_label.values()) if len(by_label) == 2 else 0
    out = []
    for label in sorted(by_label):
        group = by_label[label]
        order = sorted(range(len(group)), key=lambda i: (not group[i][2], rng.random()))
        out += [group[i] for i in order[:n]]
    return out


def _label_changed(kept: list[tuple[dict, dict, bool]], outcome: SetOutcome) -> list:
    """``kept`` without the pairs (two kept items of one ``tuple_id``) whose final labels are
    equal: a mutation that did not change the label does not test the function word."""
    by_tuple: dict[object, list[int]] = defaultdict(list)
    for k, (_, meta, _) in enumerate(kept):
        tuple_id = meta.get("misc", {}).get("tuple_id")
        if tuple_id is not None:
            by_tuple[tuple_id].append(k)
    drop = {
        k
        for ks in by_tuple.values()
        if len(ks) == 2 and kept[ks[0]][0]["label"] == kept[ks[1]][0]["label"]
        for k in ks
    }
    outcome.reasons["dropped: the mutation did not change the label"] = len(drop)
    return [entry for k, entry in enumerate(kept) if k not in drop]


def judge_set(
    name: str, items: dict[str, tuple[dict, dict]], votes: dict[str, list[str]], seed: int
) -> SetOutcome:
    """Final items of one set (labels, folds and vote records updated) and its agreement."""
    nli = is_nli(name)
    outcome = SetOutcome(name)
    kept: list[tuple[dict, dict, bool]] = []
    units = []
    if not any(votes.get(iid) for iid in items):  # not voted on: copied as it is
        outcome.voted = False
        outcome.kept = list(items.values())
        outcome.reasons["not voted: copied unchanged"] = len(items)
        outcome.agreement = {**table3_row([]), "voted items": 0, "krippendorff_alpha": None,
                             "fleiss_kappa": None}  # fmt: skip
        return outcome
    if nli:
        outcome.rules = rule_sample(name, items, votes)
    confirmed = {r for r, e in outcome.rules.items() if e["confirmed"]}
    unvoted: list[tuple[dict, dict]] = []
    for iid, (data, meta) in items.items():
        answers = votes.get(iid, [])
        if not answers:
            unvoted.append((data, meta))
            continue
        units.append(_vote_labels(answers, nli))
        label, reason = decide(answers, nli, data["label"])
        outcome.reasons[reason] += 1
        if label is None:
            continue
        labels = _vote_labels(answers, nli)
        new_data = {**data, "label": label, "binary-label": label in ("entailment", "acceptable")}
        misc = {**meta.get("misc", {}), "votes": list(answers)}
        if nli:
            misc["assigned_labels"] = ",".join(labels)
            misc["expected_label_before_votes"] = misc.pop("candidate_label", data["label"])
            if misc.get("expected_label") in ("unverified", "heuristic"):
                misc["expected_label"] = "annotated"
        new_meta = {**meta, "creation-approach": "crowdsource", "misc": misc}
        kept.append((new_data, new_meta, len(set(labels)) == 1))
    if nli:
        kept += _unvoted_nli(name, unvoted, kept, confirmed, outcome)
    else:
        outcome.reasons["dropped: no votes"] += len(unvoted)
    if name in LABEL_MUST_CHANGE:
        kept = _label_changed(kept, outcome)
    rng = np.random.default_rng(seed)
    if not nli:
        before = len(kept)
        kept = _balance(kept, rng)
        outcome.reasons["dropped: balancing the classes"] = before - len(kept)
        order = rng.permutation(len(kept))
        per_label: Counter = Counter()
        for i in order:  # deal each label round-robin, so every fold is balanced
            data, meta, _ = kept[i]
            chunk = per_label[data["label"]] % N_FOLDS
            per_label[data["label"]] += 1
            misc = {k: v for k, v in meta["misc"].items() if not k.startswith("fold")}
            meta["misc"] = dict(sorted({**misc, **fold_splits(chunk)}.items()))
        kept = [kept[i] for i in sorted(order)]
    outcome.kept = [(d, m) for d, m, _ in kept]
    answer_of = {"acceptable": "natural", "unacceptable": "unnatural"}
    final = [
        (_vote_labels(m["misc"]["votes"], nli), d["label"] if nli else answer_of[d["label"]])
        for d, m in outcome.kept
        if "votes" in m.get("misc", {})
    ]
    outcome.agreement = {
        **table3_row(final),
        "voted items": len(units),
        "krippendorff_alpha": _round(krippendorff_alpha(units)),
        "fleiss_kappa": _round(fleiss_kappa(units)),
    }
    return outcome


def _unvoted_nli(
    name: str,
    unvoted: list[tuple[dict, dict]],
    kept: list[tuple[dict, dict, bool]],
    confirmed: set[str],
    outcome: SetOutcome,
) -> list[tuple[dict, dict, bool]]:
    """The unvoted items of an NLI set that the final set keeps: a mutated item whose rule
    the votes confirmed, labelled by the rule (``expected_label: heuristic``, scored with
    ``run --allow-heuristic-labels``); an unmutated original (its label is the source
    file's, annotators' of the NLI corpus) whose tuple keeps a mutated item."""
    out = []
    for data, meta in unvoted:
        misc = meta.get("misc", {})
        rule = rule_name(name, str(misc.get("task_desc", "")))
        if misc.get("original") is False and rule in confirmed and misc.get("candidate_label"):
            label = misc["candidate_label"]
            new_misc = {**misc, "expected_label": "heuristic", "rule_confirmed_by_votes": rule}
            new_misc.pop("candidate_label")
            new_data = {**data, "label": label, "binary-label": label == "entailment"}
            out.append((new_data, {**meta, "misc": new_misc}, False))
            outcome.reasons["labelled by a confirmed rule"] += 1
    tuples = {m.get("misc", {}).get("tuple_id") for _, m, _ in [*kept, *out]}
    for data, meta in unvoted:
        misc = meta.get("misc", {})
        if misc.get("original") is False:
            if misc.get("expected_label") != "unverified" or data.get("label"):
                out.append((data, meta, False))  # already labelled (gold or heuristic)
            elif rule_name(name, str(misc.get("task_desc", ""))) not in confirmed:
                outcome.reasons["dropped: no votes"] += 1
        elif misc.get("tuple_id") in tuples and data.get("label"):
            out.append((data, meta, False))
            outcome.reasons["unvoted original of a kept pair"] += 1
        else:
            outcome.reasons["dropped: no votes"] += 1
    return out


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def import_votes(
    suite: str | Path, votes_file: str | Path, out: str | Path, seed: int = 0
) -> list[SetOutcome]:
    """Read ``votes_file`` (every line checked before anything is written), keep the items
    the votes support, and write the final suite to ``out``: the sets in the DNC format,
    ``manifest.json`` (the suite's, with the annotation record) and ``AGREEMENT.md``."""
    suite, out = Path(suite), Path(out)
    if out.resolve() == suite.resolve():
        raise SentprobeError(f"{out}: the final suite must go to a new folder, not {suite}")
    sets = _items(suite)
    kinds = {iid: is_nli(name) for name, items in sets.items() for iid in items}
    votes = read_votes(votes_file, kinds)
    outcomes = [judge_set(name, items, votes, seed) for name, items in sets.items()]
    if not any(o.kept for o in outcomes if o.voted):
        voted = ", ".join(o.name for o in outcomes if o.voted)
        raise SentprobeError(
            f"no item of {voted} survives the votes in {votes_file}; nothing written"
        )
    manifest_path = suite / "manifest.json"
    manifest = json.loads(manifest_path.read_text("utf-8")) if manifest_path.is_file() else {}
    rules = {r: e for o in outcomes for r, e in o.rules.items()}
    manifest["annotation"] = {
        "votes_file": str(votes_file),
        "votes": sum(map(len, votes.values())),
        "sets": {
            o.name: {"agreement": o.agreement, "outcome": dict(o.reasons), "voted": o.voted}
            for o in outcomes
        },
        "rules": rules,
        "rule_bar": {"min_annotated": MIN_ANNOTATED, "min_agreement": MIN_RULE_AGREEMENT},
    }
    for o in outcomes:
        entry = manifest.setdefault("sets", {}).setdefault(o.name, {})
        if not o.kept:  # every voted item dropped: the set is not written
            entry["counts"] = {}
            entry["not written"] = "no item survives the votes"
            continue
        write_release_set(out, o.name, [d for d, _ in o.kept], [m for _, m in o.kept])
        entry["counts"] = dict(sorted(Counter(d["label"] for d, _ in o.kept).items()))
    atomic_write_text(out / "AGREEMENT.md", agreement_markdown(outcomes))
    atomic_write_text(
        out / "manifest.json", json.dumps(manifest, indent=1, ensure_ascii=False) + "\n"
    )
    return outcomes


def agreement_markdown(outcomes: Sequence[SetOutcome]) -> str:
    """Table 3 of the paper for these votes, plus alpha, kappa, what was dropped, and each
    NLI labelling rule's agreement with the votes."""
    from sentprobe.reporting.render import markdown_table

    def cell(x: object) -> str:
        return "-" if x is None else str(x)

    def what(o: SetOutcome) -> str:
        if not o.voted:
            return "not voted on: copied unchanged"
        shown = "; ".join(f"{k.removeprefix('dropped: ')} {v}" for k, v in sorted(o.reasons.items())
                          if k.startswith("dropped") and v)  # fmt: skip
        return shown if o.kept else f"{shown}; not written (no item left)"

    rows = [
        [o.name, *(cell(o.agreement[k]) for k in ("agree", "unanimous", "accuracy", "size",
                                                  "votes per item")),
         cell(o.agreement["krippendorff_alpha"]), cell(o.agreement["fleiss_kappa"]), what(o)]
        for o in outcomes
    ]  # fmt: skip
    header = ["set", "Agree", "Unan.", "Accuracy", "Size", "votes/item", "alpha", "kappa",
              "dropped"]  # fmt: skip
    single = [o.name for o in outcomes if o.voted and o.agreement["votes per item"] == "1"]
    parts = [
        "# Annotator agreement\n\n"
        "As Kim et al. (2019), Table 3, on the final items: Agree = pairwise agreement of the "
        "votes (%), Unan. = unanimous items (%), Accuracy = votes equal to the final label (%), "
        "all three over the items with at least two votes; Size = final items. alpha = "
        "Krippendorff's alpha (nominal) and kappa = Fleiss' kappa "
        "(only when every item has the same number of votes) over every voted item; NLI "
        "votes mapped to entailment (5, 4), neutral (3), contradiction (2, 1).\n\n"
        + markdown_table(header, rows)
    ]
    if single:
        parts.append(
            f"One vote per item in {', '.join(single)}: no agreement between annotators can be "
            "measured (Agree, Unan., Accuracy, alpha and kappa need two votes on an item)."
        )
    rules = [(r, e) for o in outcomes for r, e in o.rules.items()]
    if rules:
        parts.append(rules_markdown(dict(rules)))
    return "\n\n".join(parts).rstrip() + "\n"


def rules_markdown(rules: dict[str, dict]) -> str:
    """The labelling rules' agreement with the votes: items, agreeing, %, 95 % Wilson
    interval, and whether the rule is confirmed (the bar: at least ``MIN_ANNOTATED`` items,
    at least ``MIN_RULE_AGREEMENT``)."""
    from sentprobe.reporting.render import markdown_table

    rows = [
        [r, str(e["n"]), str(e["agree"]), f"{100 * e['share']:.1f}",
         f"{e['ci95'][0]}-{e['ci95'][1]}", "yes" if e["confirmed"] else "no"]
        for r, e in sorted(rules.items())
    ]  # fmt: skip
    return (
        "## Labelling rules against the votes\n\n"
        "Each rule's label of a voted mutated item against the votes' strict majority "
        "(a 'does not make sense' vote or no majority counts as a disagreement). A rule is "
        f"confirmed with at least {MIN_ANNOTATED} annotated items and at least "
        f"{100 * MIN_RULE_AGREEMENT:.0f} % agreement; a confirmed rule labels the set's "
        "unvoted mutated items (`expected_label: heuristic`: `sentprobe run "
        "--allow-heuristic-labels` scores them, marked ♯).\n\n"
        + markdown_table(["rule", "items", "agree", "%", "95 % CI", "confirmed"], rows)
    )
