"""The lexical-forms check: a class of a split carried by one target form (today's sample-en
SubjNum dev: every NN item has the subject "list") or by too few forms is a warning, read
from the ``.forms`` sidecar beside the task file or from a generator's targets."""

from __future__ import annotations

import random
import sys
from collections import Counter
from pathlib import Path

from conftest import Maker, words, write_xprobe_task
from sentprobe.analysis import audit_suite
from sentprobe.analysis.quality import quality_report
from sentprobe.cli.main import main
from sentprobe.generation import GeneratedTask

SHORT = {"train": "tr", "dev": "va", "test": "te"}


def subjnum_rows(m: Maker, forms: dict[str, dict[str, Counter]]) -> dict[str, list]:
    """``{split: [(sentence, label, form), ...]}``: one sentence per item, subject ``form``."""
    rows: dict[str, list] = {}
    for split, by_label in forms.items():
        rows[split] = []
        for label, counts in by_label.items():
            for form, n in counts.items():
                for _ in range(n):
                    sentence = " ".join(m._unique(lambda f=form: ["The", f, *m.clause(), "."]))
                    rows[split].append((sentence, label, form))
    return rows


def many(prefix: str, n_forms: int, items: int) -> Counter:
    """``items`` spread evenly over ``n_forms`` made-up forms ending in ``prefix``."""
    names = words(random.Random(sum(map(ord, prefix))), n_forms, prefix)
    return Counter({name: items // n_forms + (k < items % n_forms) for k, name in enumerate(names)})


def todays_sample_en(m: Maker) -> dict[str, list]:
    """The SubjNum split sample-en shipped before the form rules: dev NN is 150 times 'list',
    dev NNS 'modules' 70, 'women' 59, 'packages' 11, 'brackets' 10; test about 10 forms a
    class; train many forms."""
    return subjnum_rows(
        m,
        {
            "train": {"NN": many("a", 120, 600), "NNS": many("bs", 120, 600)},
            "dev": {
                "NN": Counter({"list": 150}),
                "NNS": Counter({"modules": 70, "women": 59, "packages": 11, "brackets": 10}),
            },
            "test": {"NN": many("c", 10, 150), "NNS": many("ds", 10, 150)},
        },
    )


def healthy(m: Maker) -> dict[str, list]:
    return subjnum_rows(
        m,
        {
            split: {"NN": many(f"{split[:2]}n", k, n), "NNS": many(f"{split[:2]}ns", k, n)}
            for split, n, k in (("train", 600, 120), ("dev", 150, 40), ("test", 150, 40))
        },
    )


def write_senteval(directory: Path, rows: dict[str, list], forms: bool = True) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    items = [(SHORT[s], x, y, f) for s, part in rows.items() for x, y, f in part]
    text = "".join(f"{c}\t{y}\t{x}\n" for c, x, y, _ in items)
    (directory / "subj_number.txt").write_text(text, encoding="utf-8")
    if forms:
        (directory / "subj_number.forms").write_text("".join(f"{f}\n" for *_, f in items))
    return directory


def spread_findings(report):
    return [f for f in report.findings if f.check == "lexical-forms"]


def test_todays_sample_en_subjnum_dev_is_a_warning(tmp_path):
    report = audit_suite(
        write_senteval(tmp_path / "s", todays_sample_en(Maker(1))), baselines=False
    )
    (finding,) = spread_findings(report)
    assert finding.severity == "warning" and report.failed("warning")
    bad = "\n".join(finding.examples)
    assert "dev NN: 'list' is 150 of 150 (100%; at most 15), 1 distinct forms (at least 30)" in bad
    assert "dev NNS: 'modules' is 70 of 150 (47%; at most 15), 4 distinct forms" in bad
    assert "test NN: 10 distinct forms (at least 30)" in bad and "train" not in bad
    # the sidecar also makes the lexical-split check exact (no heuristic)
    (lexical,) = [f for f in report.findings if f.check == "lexical-split"]
    assert lexical.data["heuristic"] is False


def test_cli_fails_on_the_warning(tmp_path, monkeypatch, capsys):
    suite = write_senteval(tmp_path / "s", todays_sample_en(Maker(1)))
    monkeypatch.setattr(sys, "argv", ["sentprobe", "audit", str(suite), "--no-baselines",
                                      "--fail-on", "warning"])  # fmt: skip
    try:
        main()
        code = 0
    except SystemExit as e:
        code = int(e.code or 0)
    assert code == 1 and "lexical-forms" in capsys.readouterr().out


def test_many_forms_pass_with_the_figures(tmp_path):
    report = audit_suite(write_senteval(tmp_path / "s", healthy(Maker(2))), baselines=False)
    (finding,) = spread_findings(report)
    assert finding.severity == "info" and "dev NN 40 forms, top 2.7%" in finding.message


def test_without_a_sidecar_nothing_is_claimed(tmp_path):
    suite = write_senteval(tmp_path / "s", todays_sample_en(Maker(1)), forms=False)
    assert not spread_findings(audit_suite(suite, baselines=False))


def test_a_sidecar_out_of_step_is_refused_and_claims_nothing(tmp_path):
    """The loaders read the sidecar (one reader): out of step with its task file, it is a load
    error naming it, and no form figure is claimed from it."""
    suite = write_senteval(tmp_path / "s", healthy(Maker(2)))
    lines = (suite / "subj_number.forms").read_text().splitlines()
    (suite / "subj_number.forms").write_text("".join(f"{f}\n" for f in lines[:-1]))
    report = audit_suite(suite, baselines=False)
    (load,) = [f for f in report.findings if f.check == "load"]
    assert load.severity == "error" and "subj_number.forms" in " ".join(load.examples)
    assert not spread_findings(report)


def test_xprobe_layout_reads_one_sidecar_per_split(tmp_path):
    rows = todays_sample_en(Maker(3))
    folder = write_xprobe_task(
        tmp_path / "xp" / "en" / "subj_number",
        {s: [(x, y) for x, y, _ in part] for s, part in rows.items()},
    )
    for split, part in rows.items():
        (folder / f"{SHORT[split]}.forms").write_text("".join(f"{f}\n" for *_, f in part))
    (finding,) = spread_findings(audit_suite(tmp_path / "xp", baselines=False))
    assert finding.severity == "warning" and any("dev NN: 'list'" in e for e in finding.examples)


def test_quality_report_reads_the_generator_targets():
    rows = todays_sample_en(Maker(4))
    task = GeneratedTask(
        "SubjNum",
        "subj_number.txt",
        ["NN", "NNS"],
        {s: [(x, y) for x, y, _ in part] for s, part in rows.items()},
        targets={x: f for part in rows.values() for x, _, f in part},
    )
    text = quality_report([task], baselines=False)
    assert "lexical-forms" in text and "'list' is 150 of 150" in text
