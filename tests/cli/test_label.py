"""``sentprobe label``: labels for a file's sentences, --compare's numbers and tables, tokens
kept, clean errors (exit 1) and nothing written on bad input.

Runs the real entry point (``cli.main.main``) in-process with ``label`` registered as the lead
registers it; a tiny rule-based annotator makes the compared numbers exact.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from sentprobe.annotation.backends import Annotator, Sentence
from sentprobe.annotation.backends import base as backends
from sentprobe.annotation.record import AnnotatedSentence
from sentprobe.cli import main as cli_main
from sentprobe.cli.label import label


class ToyAnnotator(Annotator):
    """``Det Noun Verb rest...``: the noun is the subject (NNS if it ends in s), the verb the
    root (VBD for -ed, VBZ for -s, else VB: no finite verb); it records what it was given."""

    name = "toy"
    lang = "en"
    received: list[tuple[list[str], bool]] = []

    def annotate(
        self, sentences: Iterable[Sentence], *, pretokenized: bool = False
    ) -> Iterator[AnnotatedSentence]:
        for s in sentences:
            toks = s.split() if isinstance(s, str) else list(s)
            self.received.append((toks, pretokenized))
            n = len(toks)
            verb = toks[2]
            vtag = "VBD" if verb.endswith("ed") else "VBZ" if verb.endswith("s") else "VB"
            yield AnnotatedSentence(
                tokens=toks,
                upos=["DET", "NOUN", "VERB"] + ["ADV"] * (n - 3),
                xpos=["DT", "NNS" if toks[1].endswith("s") else "NN", vtag] + ["RB"] * (n - 3),
                heads=[2, 3, 0] + [3] * (n - 3),
                deprels=["det", "nsubj", "root"] + ["advmod"] * (n - 3),
            )


@pytest.fixture
def toy(monkeypatch):
    ToyAnnotator.received = []
    monkeypatch.setitem(backends.annotators._entries, "toy", lambda arg=None, **kw: ToyAnnotator())
    monkeypatch.setattr(backends, "_LOADED", {})
    return ToyAnnotator


@pytest.fixture
def cli(monkeypatch, capsys):
    """Run ``sentprobe <args>`` through the real entry point: (exit code, stdout, stderr)."""
    app = cli_main.app
    monkeypatch.setattr(app, "registered_commands", list(app.registered_commands))
    if not any(c.name == "label" for c in app.registered_commands):
        app.command("label")(label)

    def run(*args: str) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "argv", ["sentprobe", *args])
        try:
            cli_main.main()
            code = 0
        except SystemExit as e:
            code = int(e.code or 0)
        out, err = capsys.readouterr()
        return code, out, " ".join(err.split())  # rich wraps stderr at the terminal width

    return run


def write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def row(markdown: str, first: str, last: bool = False) -> list[str]:
    """Cells of the first (or last) table row whose first cell is ``first``."""
    rows = [ln for ln in markdown.splitlines() if ln.startswith(f"| {first} ")]
    line = rows[-1] if last else rows[0]
    return [c.strip() for c in line.strip().strip("|").split(" | ")]


TENSE = [  # gold, sentence -> the toy rule's label
    "tr\tPAST\tThe dog barked .",  # PAST
    "tr\tPAST\tThe cat jumped high .",  # PAST
    "tr\tPRES\tThe dog runs .",  # PRES
    "va\tPRES\tThe cats walked .",  # PAST: disagrees
    "te\tPAST\tThe bird sings today .",  # PRES: disagrees
    "te\tPRES\tThe birds sing .",  # no finite verb: unlabelled
]


def test_compare_senteval_file(cli, toy, tmp_path):
    data = write(tmp_path / "past_present.txt", TENSE)  # task from the file name
    out_file = tmp_path / "out" / "labels.tsv"
    code, out, err = cli("label", str(data), "--annotator", "toy", "--compare", "-o", str(out_file))
    assert code == 0, err
    assert "- sentences: 6; labelled by the rule: 5; could not be labelled: 1" in out
    assert "  - no finite verb in the main clause: 1" in out
    assert "- agreement: 3 of 5 labelled sentences = 60.0% (50.0% of all 6)" in out
    # per gold class: n, unlabelled, agree, agreement %, predicted, precision %
    assert row(out, "PAST") == ["PAST", "3", "0", "2", "66.7", "3", "66.7"]
    assert row(out, "PRES") == ["PRES", "3", "1", "1", "50.0", "2", "50.0"]
    # confusion: gold rows x predicted columns, "-" = could not label
    assert row(out, "gold \\ predicted") == ["gold \\ predicted", "PAST", "PRES", "-"]
    assert row(out, "PAST", last=True) == ["PAST", "2", "1", "0"]
    assert row(out, "PRES", last=True) == ["PRES", "1", "1", "1"]
    assert "1 could not be labelled" in err
    assert out_file.read_text().splitlines() == [
        "PAST\tThe dog barked .",
        "PAST\tThe cat jumped high .",
        "PRES\tThe dog runs .",
        "PAST\tThe cats walked .",
        "PRES\tThe bird sings today .",
        "-\tThe birds sing .",
    ]


def test_plain_text_is_passed_pretokenized(cli, toy, tmp_path):
    data = write(
        tmp_path / "s.txt", ["The cats walked , dog-tired .", "", "A man sings , can't he ?"]
    )
    code, out, err = cli("label", "--task", "SubjNum", str(data), "--annotator", "toy")
    assert code == 0, err
    assert out.splitlines() == [
        "NNS\tThe cats walked , dog-tired .",
        "NN\tA man sings , can't he ?",
    ]
    assert toy.received == [
        (["The", "cats", "walked", ",", "dog-tired", "."], True),
        (["A", "man", "sings", ",", "can't", "he", "?"], True),
    ]
    assert "labelled 2 of 2 sentences; 0 could not be labelled" in err


def test_default_spacy_annotator_on_plain_text(cli, tmp_path):
    lines = ["He walked home .", "She likes green tea .", "What a wonderful day !"]
    data = write(tmp_path / "plain.txt", lines)
    code, out, err = cli("label", "-t", "tense", str(data))
    assert code == 0, err
    assert out.splitlines() == ["PAST\tHe walked home .", "PRES\tShe likes green tea .",
                                "-\tWhat a wonderful day !"]  # fmt: skip
    assert "1 could not be labelled (-)" in err and "no finite verb in the main clause: 1" in err


def test_xprobe_file_keeps_its_label_names(cli, toy, tmp_path):
    data = write(tmp_path / "en" / "subj_number" / "te.txt",
                 ["The dog barked .\tSing", "The dogs barked .\tSing"])  # fmt: skip
    code, out, err = cli("label", str(data), "--annotator", "toy", "--compare")
    assert code == 0, err
    assert "- agreement: 1 of 2 labelled sentences = 50.0%" in out
    assert row(out, "Sing", last=True) == ["Sing", "1", "1", "0"]
    assert "uses xprobe label names" in err


def test_sentlen_needs_no_annotator(cli, tmp_path):
    data = write(tmp_path / "x.txt", ["a b c d e\t0", "a b c d e f g h i\t1", "a b\t0"])
    code, out, err = cli("label", "-t", "SentLen", str(data), "--annotator", "nope:x")
    assert code == 0, err
    assert out.splitlines() == ["0\ta b c d e", "1\ta b c d e f g h i", "-\ta b"]
    assert "length 2 outside every bin: 1" in err


@pytest.mark.parametrize(
    ("task", "why"),
    [("WC", "target words"), ("BShift", "swapped"), ("CoordInv", "inverted"), ("nope", "unknown")],
)
def test_unsupported_task_is_a_clean_error(cli, toy, tmp_path, task, why):
    data = write(tmp_path / "s.txt", ["The dog barked ."])
    out_file = tmp_path / "o.tsv"
    code, out, err = cli("label", "-t", task, str(data), "--annotator", "toy", "-o", str(out_file))
    assert code == 1 and out == ""
    assert err.startswith("error:") and why in err and "Traceback" not in err
    assert not out_file.exists() and toy.received == []


@pytest.mark.parametrize(
    ("lines", "line_no", "word"),
    [
        (TENSE[:2] + ["tr\tPAST"] + TENSE[2:], 3, "expected 3 tab-separated columns"),
        (TENSE[:4] + ["xx\tPAST\tThe dog barked ."], 5, "unknown split"),
        (["The dog barked .\tSing", "The dogs barked ."], 2, "expected 2 tab-separated columns"),
        (["tr\tPAST\t  "], 1, "empty sentence"),
    ],
)
def test_bad_file_is_a_data_error_and_nothing_is_written(cli, toy, tmp_path, lines, line_no, word):
    data = write(tmp_path / "bad.txt", lines)
    out_file = tmp_path / "out" / "labels.tsv"
    code, out, err = cli(
        "label", "-t", "Tense", str(data), "--annotator", "toy", "-o", str(out_file)
    )
    assert code == 1 and out == ""
    assert f"bad.txt, line {line_no}:" in err and word in err
    assert not (tmp_path / "out").exists() and toy.received == []


def test_compare_needs_labels_and_file_must_exist(cli, toy, tmp_path):
    data = write(tmp_path / "plain.txt", ["The dog barked ."])
    code, _, err = cli("label", "-t", "Tense", str(data), "--annotator", "toy", "--compare")
    assert code == 1 and "--compare needs gold labels" in err
    code, _, err = cli("label", "-t", "Tense", str(tmp_path / "missing.txt"))
    assert code == 1 and "missing.txt: file not found" in err
    code, _, err = cli("label", str(data))
    assert code == 1 and "--task" in err
