"""``sentprobe label``: a task's label for given sentences, by the generator's own rule.

Why: a published suite's labels can be checked, and an annotator measured, only by labelling
the same sentences with the rule that writes the labels (``generation.labeling``). Input is
plain text (one Moses-tokenized sentence per line), a SentEval file or an X-Probe file,
detected from the first line; sentences go to the annotator pre-tokenized so their tokens
are kept. Registered in ``cli.main``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from sentprobe.cli.console import err, note, warning
from sentprobe.cli.options import Profile
from sentprobe.datasets.loaders import SENTEVAL_FILES, task_lines
from sentprobe.datasets.validation import ALLOWED_SPLITS, Problems, normalize_split
from sentprobe.errors import DataError, SentprobeError

if TYPE_CHECKING:
    from sentprobe.annotation.record import AnnotatedSentence
    from sentprobe.generation.labeling import Labelled, Vocabulary

Format = Literal["text", "senteval", "xprobe"]
_LAYOUTS = {
    "senteval": (3, "split, label, sentence"),
    "xprobe": (2, "sentence, label"),
    "text": (1, "one sentence per line"),
}


@dataclass
class LabelInput:
    """Sentences of a file in order, with their gold labels when the file carries them."""

    format: Format
    sentences: list[str]
    gold: list[str] | None


def read_label_input(path: Path) -> LabelInput:
    """Read and validate the whole file before any work; a DataError names every bad line."""
    problems = Problems(path)
    rows = list(task_lines(path, problems))
    problems.raise_if_any()
    if not rows:
        raise DataError(path, None, "no sentences (the file is empty)")
    first = rows[0][1].split("\t")
    fmt: Format
    if len(first) == 3:
        fmt = "senteval"
    elif len(first) == 2:
        fmt = "xprobe"
    elif len(first) == 1:
        fmt = "text"
    else:
        problems.add(
            rows[0][0],
            f"{len(first)} tab-separated columns; expected a sentence per line, "
            "sentence<TAB>label (X-Probe) or split<TAB>label<TAB>sentence (SentEval)",
        )
        problems.raise_if_any()
    width, layout = _LAYOUTS[fmt]
    sentences, gold = [], []
    for i, line in rows:
        parts = line.split("\t")
        if len(parts) != width:
            hint = " (a tab inside a sentence?)" if len(parts) > width else ""
            problems.add(
                i,
                f"expected {width} tab-separated column{'s' if width > 1 else ''} ({layout}, "
                f"as on line {rows[0][0]}), found {len(parts)}{hint}",
            )
            continue
        if fmt == "senteval":
            split, label, sentence = parts
            if normalize_split(split) is None:
                problems.add(i, f"unknown split {split!r} (allowed: {ALLOWED_SPLITS})")
                continue
        elif fmt == "xprobe":
            sentence, label = parts
        else:
            sentence, label = parts[0], ""
        if not sentence.strip():
            problems.add(i, "empty sentence")
        elif fmt != "text" and not label.strip():
            problems.add(i, "empty label")
        sentences.append(sentence.strip())
        gold.append(label.strip())
    problems.raise_if_any()
    return LabelInput(fmt, sentences, None if fmt == "text" else gold)


def _task_from_path(path: Path) -> str | None:
    """``past_present.txt`` (SentEval) or ``.../subj_number/te.txt`` (X-Probe) -> a task."""
    for stem in (path.name.split(".")[0], path.parent.name):
        if stem in SENTEVAL_FILES:
            return SENTEVAL_FILES[stem]
    return None


def _vocabulary(task: str, profile: str, gold: list[str] | None) -> Vocabulary:
    """The profile's label names, unless the file's labels are all in the other vocabulary:
    the rule (profile) and the file's label names (layout) are independent choices."""
    from sentprobe.generation.labeling import vocabulary_labels

    mine: Vocabulary = "xprobe" if profile == "xprobe" else "senteval"
    other: Vocabulary = "senteval" if mine == "xprobe" else "xprobe"
    if gold is None:
        return mine
    labels = set(gold)
    own, alt = vocabulary_labels(task, mine), vocabulary_labels(task, other)
    if own is not None and alt is not None and not labels <= set(own) and labels <= set(alt):
        note(f"note: the file uses {other} label names ({', '.join(alt)}); so does the output")
        return other
    return mine


def _label_annotated(
    sentences: list[list[str]],
    spec: str | None,
    lang: str,
    rule: Callable[[AnnotatedSentence], Labelled],
    constituency: bool,
) -> list[Labelled]:
    """Annotate pre-tokenized sentences and label each as it comes (records are not kept:
    a published task has 120k sentences); warn when the annotator changed the tokens."""
    from rich.progress import track

    from sentprobe.annotation import default_annotator, get_annotator
    from sentprobe.generation.inputs import as_tokens
    from sentprobe.generation.labeling import with_constituency

    annotator = get_annotator(spec) if spec else default_annotator(lang)
    stream = track(
        annotator.annotate(sentences, pretokenized=True),
        total=len(sentences),
        description=f"annotating with {annotator.name}",
        console=err,
        transient=True,
        disable=not err.is_terminal,
    )
    results, changed = [], 0
    for rec, toks in zip(stream, sentences):
        changed += list(as_tokens(rec)) != toks
        results.append(rule(with_constituency(rec) if constituency else rec))
    if len(results) != len(sentences):
        raise SentprobeError(
            f"annotator {annotator.name} returned {len(results)} records for "
            f"{len(sentences)} sentences"
        )
    if changed:
        warning(
            f"annotator {annotator.name} changed the tokens of {changed} "
            "sentence(s); labels are computed on its tokens"
        )
    return results


def _write_atomic(text: str, output: Path) -> None:
    from sentprobe.io import atomic_write_text

    atomic_write_text(output, text)
    note(f"wrote {output}")


def label(
    file: Annotated[
        Path,
        typer.Argument(
            help="Sentences to label: plain text (one Moses-tokenized sentence per line), a "
            "SentEval file (split<TAB>label<TAB>sentence) or an X-Probe file "
            "(sentence<TAB>label); detected from the first line."
        ),
    ],
    task: Annotated[
        str | None,
        typer.Option(  # noqa: UP007
            "--task",
            "-t",
            help="SentLen, TreeDepth, TopConst, Tense, SubjNum or ObjNum (or a SentEval file "
            "stem); default: from the file name (past_present.txt, subj_number/te.txt).",
        ),
    ] = None,
    lang: Annotated[str, typer.Option(help="Language of the sentences.")] = "en",
    profile: Annotated[
        Profile | None,
        typer.Option(  # noqa: UP007
            help="Generator rules: paper (PTB tags, constituency trees; SentEval labels) or "
            "xprobe (UD features, dependency trees; X-Probe labels). Default: paper for en, "
            "else xprobe.",
        ),
    ] = None,
    annotator: Annotated[
        str | None,
        typer.Option(  # noqa: UP007
            help="Annotator spec (spacy:<model>, stanza:<lang>, udpipe:<file>, benepar...); "
            "default: the language's default annotator."
        ),
    ] = None,
    compare: Annotated[
        bool,
        typer.Option(
            "--compare",
            help="Compare with the file's labels: agreement overall and per class, sentences "
            "the rule could not label, confusion table (markdown, on stdout; the labels go to "
            "-o if given).",
        ),
    ] = False,
    output: Annotated[
        Path | None,
        typer.Option(  # noqa: UP007
            "--output", "-o", help="Write label<TAB>sentence lines here (atomically)."
        ),
    ] = None,
) -> None:
    """Label sentences with a task's rule, the one its generator uses to write the task.

    Prints label<TAB>sentence per sentence, "-" where the rule gives no label (no finite
    main verb, no subject...), and how many such sentences there were on stderr. Only tasks
    whose label is a property of the sentence alone can be labelled.
    """
    from sentprobe.generation.labeling import (
        UNLABELLED,
        compare_labels,
        labeler,
        needs_annotation,
        needs_constituency,
        resolve_task,
    )

    if task is None:
        task = _task_from_path(file)
        if task is None:
            raise SentprobeError(
                f"{file}: cannot tell the task from the file name; name it with --task"
            )
    name = resolve_task(task)
    prof = profile.value if profile else ("paper" if lang == "en" else "xprobe")
    data = read_label_input(file)
    if compare and data.gold is None:
        raise SentprobeError(
            f"{file}: --compare needs gold labels, but this is a plain-text file; give a "
            "SentEval (split<TAB>label<TAB>sentence) or X-Probe (sentence<TAB>label) file"
        )
    vocab = _vocabulary(name, prof, data.gold) if data.gold is not None else None
    classes = set(data.gold) if name == "TopConst" and data.gold is not None else None
    rule = labeler(name, prof, lang=lang, vocabulary=vocab, classes=classes)

    tokens = [s.split() for s in data.sentences]
    if needs_annotation(name):
        constituency = needs_constituency(name, prof)
        results = _label_annotated(tokens, annotator, lang, rule, constituency)
    else:
        results = [rule(t) for t in tokens]  # SentLen: tokens are all it needs

    reasons = Counter(r.reason or "no label" for r in results if r.label is None)
    lines = "".join(
        f"{r.label if r.label is not None else UNLABELLED}\t{s}\n"
        for r, s in zip(results, data.sentences)
    )
    missing = sum(reasons.values())
    detail = "; ".join(f"{why}: {k}" for why, k in reasons.most_common())
    note(
        f"{name}: labelled {len(results) - missing} of {len(results)} sentences; "
        f"{missing} could not be labelled ({UNLABELLED})" + (f" — {detail}" if detail else "")
    )
    if compare:
        assert data.gold is not None
        comparison = compare_labels(data.gold, results)
        title = f"{name}: labels of {file.name} vs. the {prof} rule"
        print(comparison.to_markdown(title), end="")
        if output is not None:
            _write_atomic(lines, output)
    elif output is not None:
        _write_atomic(lines, output)
    else:
        print(lines, end="")
