"""The annotation loop of a generated function-word suite closed (issue 48): `annotate
import` measures each NLI labelling rule against the votes (n, agreement, 95 % CI), records it
in the suite (manifest, QUALITY.md, AGREEMENT.md), confirms a rule at >= 50 items and >= 80 %;
votes for some sets only are accepted; a single vote per item is no unanimity; `run` scores
what it can and skips the rest in one line each."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dnc_fixture import acceptability_items, write_set
from sentprobe.cli.main import app
from sentprobe.datasets.loaders.dnc import SmallSetError, load_dnc, load_dnc_set
from sentprobe.generation.function_words.labels import rule_agreement

FLIP = {"entailment": "contradiction", "contradiction": "entailment"}
LIKERT = {"entailment": "5", "contradiction": "1", "neutral": "3"}


def _nli_suite_set(root: Path, name: str, tuples: int) -> None:
    """A generated-style NLI set: per tuple an original (gold label) and its mutation
    (no label, the rule's guess as candidate_label, expected_label unverified)."""
    data, meta = [], []
    for t in range(tuples):
        label = ["entailment", "contradiction"][t % 2]
        for original in (True, False):
            pid = 2 * t + (not original)
            hyp = f"The price of item {t} is higher than before ."
            data.append({"context": f"Item {t} costs more than it did in year {t} .",
                         "hypothesis": hyp if original else hyp.replace(" is ", " is not "),
                         "label": label if original else "", "pair-id": pid,
                         "binary-label": label == "entailment" if original else None})  # fmt: skip
            misc = {"original": original, "tuple_id": t, "task_desc": "compare_more_less"}
            if not original:
                misc |= {"expected_label": "unverified", "candidate_label": FLIP[label]}
            meta.append({"pair-id": pid, "misc": misc})
    write_set(root / "NLI", name, data, meta)


@pytest.fixture
def suite(tmp_path):
    root = tmp_path / "suite"
    _nli_suite_set(root, "nli-comparatives", 80)
    _nli_suite_set(root, "nli-spatial", 30)
    data, meta = acceptability_items(60)
    write_set(root / "ACCEPTABILITY", "acceptability-whwords", data, meta)
    (root / "manifest.json").write_text(json.dumps({"suite": "gen", "sets": {}}))
    return root


def _cli(*args: str):
    res = CliRunner().invoke(app, list(args), prog_name="sentprobe")
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    return res


def _vote(path: Path, rows: list[tuple[str, str]]) -> None:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "answer"])
        w.writerows(rows)


def _mutated(root: Path, name: str) -> list[tuple[str, str]]:
    meta = json.loads((root / f"NLI/{name}_metadata.json").read_text())
    return [(f"{name}:{m['pair-id']}", m["misc"]["candidate_label"]) for m in meta
            if m["misc"]["original"] is False]  # fmt: skip


def test_votes_on_one_set_confirm_its_rule_and_the_suite_records_it(suite, tmp_path):
    mutated = _mutated(suite, "nli-comparatives")[:50]
    # 45 of 50 votes agree with the rule (90 %), 5 say neutral
    _vote(tmp_path / "v.csv", [(i, LIKERT[g] if k % 10 else "3") for k, (i, g) in
                               enumerate(mutated)])  # fmt: skip
    res = _cli("annotate", "import", str(suite), str(tmp_path / "v.csv"), "-o", str(tmp_path / "f"))
    assert res.exit_code == 0, res.output
    final = tmp_path / "f"
    rules = json.loads((final / "manifest.json").read_text())["annotation"]["rules"]
    entry = rules["nli-comparatives:negated-hypothesis"]
    assert (entry["n"], entry["agree"], entry["confirmed"]) == (50, 45, True)
    lo, hi = entry["ci95"]
    assert lo < 90.0 < hi
    # recorded in the suite, not in the package's table
    assert "annotated" not in rule_agreement().get("nli-comparatives:negated-hypothesis", {})
    quality = (final / "QUALITY.md").read_text()
    assert "| nli-comparatives:negated-hypothesis |" in quality
    row = next(r for r in quality.splitlines() if r.startswith("| nli-comparatives:negated"))
    assert "90.0 % of 50" in row and row.rstrip().endswith("| yes |")
    agreement = (final / "AGREEMENT.md").read_text()
    assert "| nli-comparatives:negated-hypothesis |" in agreement
    # one vote per item: said so, never "unanimity 100"
    comp = next(r for r in agreement.splitlines() if r.startswith("| nli-comparatives "))
    cells = [c.strip() for c in comp.strip("|").split("|")]
    assert cells[1:4] == ["-", "-", "-"] and cells[5] == "1"
    assert "One vote per item in nli-comparatives" in agreement
    # the unvoted mutations are labelled by the confirmed rule (heuristic), with their originals
    task = load_dnc_set(final / "NLI/nli-comparatives_data.json")
    assert task.metadata.heuristic_labels == 30
    # the set not voted on is copied as it was (still awaiting annotation)
    assert (final / "NLI/nli-spatial_data.json").read_bytes() != b""
    # run: Comp scored (heuristic labels allowed), Spatial skipped in one line, exit 0
    from sentprobe.evaluation.runner import run

    with pytest.warns(UserWarning, match=r"skipped nli-spatial: all 30 mutated items await"):
        tasks = load_dnc(final, suite="gen")
    frame = run([], tasks, baselines="majority", results=tmp_path / "r.sqlite", progress=False,
                cache_dir=tmp_path / "c", allow_heuristic_labels=True)  # fmt: skip
    assert set(frame["task"]) == {"wh-words", "Comp"}


def test_a_rule_under_the_bar_is_not_confirmed(suite, tmp_path):
    mutated = _mutated(suite, "nli-comparatives")[:50]
    _vote(tmp_path / "v.csv", [(i, LIKERT[g] if k % 4 else "3") for k, (i, g) in
                               enumerate(mutated)])  # 75 %  # fmt: skip
    res = _cli("annotate", "import", str(suite), str(tmp_path / "v.csv"), "-o", str(tmp_path / "f"))
    assert res.exit_code == 0, res.output
    rules = json.loads((tmp_path / "f/manifest.json").read_text())["annotation"]["rules"]
    assert rules["nli-comparatives:negated-hypothesis"]["confirmed"] is False
    task = load_dnc_set(tmp_path / "f/NLI/nli-comparatives_data.json")
    assert task.metadata.heuristic_labels == 0  # only voted items and their originals
    n = sum(len(s.labels) for s in task.folds[0].values())
    assert n == 100  # 50 voted mutations and their 50 originals


def test_one_mutated_item_does_not_load_its_sets_unmutated_originals(suite, tmp_path):
    name = "nli-comparatives"
    data = json.loads((suite / f"NLI/{name}_data.json").read_text())
    meta = json.loads((suite / f"NLI/{name}_metadata.json").read_text())
    data[1]["label"] = "contradiction"
    meta[1]["misc"]["expected_label"] = "annotated"
    write_set(suite / "NLI", name, data, meta)
    with pytest.raises(SmallSetError, match="too few for ten folds"):
        load_dnc_set(suite / f"NLI/{name}_data.json")  # 2 items, not 81


def test_too_small_sets_are_skipped_in_one_line_the_others_run(suite, tmp_path):
    """Votes on a few items leave sets of 3-18 items: each is skipped with one line (no
    "Found array with 0 sample(s)"), the others run, exit 0."""
    few = _mutated(suite, "nli-comparatives")[:4]
    _vote(tmp_path / "v.csv", [(i, LIKERT[g]) for i, g in few])
    res = _cli("annotate", "import", str(suite), str(tmp_path / "v.csv"), "-o", str(tmp_path / "f"))
    assert res.exit_code == 0, res.output
    from sentprobe.evaluation.runner import run

    with pytest.warns(UserWarning) as record:
        tasks = load_dnc(tmp_path / "f", suite="gen")
    shown = [str(w.message) for w in record]
    assert any(m.startswith("skipped nli-comparatives: 8 items, too few for ten folds")
               for m in shown), shown  # fmt: skip
    frame = run([], tasks, baselines="majority", results=tmp_path / "r.sqlite", progress=False,
                cache_dir=tmp_path / "c")  # fmt: skip
    assert set(frame["task"]) == {"wh-words"}


def test_without_allow_a_set_of_rule_labels_is_skipped_in_one_line(suite, tmp_path):
    mutated = _mutated(suite, "nli-comparatives")[:50]
    _vote(tmp_path / "v.csv", [(i, LIKERT[g]) for i, g in mutated])
    res = _cli("annotate", "import", str(suite), str(tmp_path / "v.csv"), "-o", str(tmp_path / "f"))
    assert res.exit_code == 0, res.output
    from sentprobe.evaluation.runner import run

    with pytest.warns(UserWarning):
        tasks = load_dnc(tmp_path / "f", suite="gen")
    with pytest.warns(UserWarning, match=r"skipped gen/Comp: 30 items with heuristic labels"):
        frame = run([], tasks, baselines="majority", results=tmp_path / "r.sqlite",
                    progress=False, cache_dir=tmp_path / "c")  # fmt: skip
    assert set(frame["task"]) == {"wh-words"}
