"""The three formats (SentEval, X-Probe, generic tables), gzip, and format detection."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest

from sentprobe.datasets.loaders import (
    load_senteval_dir,
    load_senteval_file,
    load_table,
    load_task,
    load_tasks,
    load_xprobe_dir,
    load_xprobe_task,
    manifest_tasks,
)
from sentprobe.errors import DataError, SentprobeError

GOOD = [
    "tr\tA\tthe cat sat .",
    "tr\tB\tthe dogs ran .",
    "tr\tA\ta cat slept .",
    "tr\tB\tsome dogs barked .",
    "va\tA\tthis cat ate .",
    "va\tB\tthose dogs ate .",
    "te\tA\tmy cat hid .",
    "te\tB\tyour dogs hid .",
]
XPROBE = {
    "tr": ["the cat sat .\tO", "sat cat the .\tI", "a dog ran .\tO", "dog a ran .\tI"],
    "va": ["my cat hid .\tO", "cat my hid .\tI"],
    "te": ["one bird sang .\tO", "bird one sang .\tI"],
}


def write(path: Path, lines: list[str], compress: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = ("\n".join(lines) + "\n").encode("utf-8")
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def write_xprobe(folder: Path, splits: tuple[str, ...] = ("tr", "va", "te")) -> Path:
    for split in splits:
        write(folder / f"{split}.txt", XPROBE[split])
    return folder


# ---------------------------------------------------------------------------- SentEval


def test_senteval_file_known_name_gets_paper_name_and_category(tmp_path: Path) -> None:
    task = load_senteval_file(write(tmp_path / "bigram_shift.txt", GOOD))
    assert task.name == "BShift" and task.metadata.paper_name == "BShift"
    assert task.metadata.category == "syntactic"
    assert task.splits["train"].sentences[:2] == ["the cat sat .", "the dogs ran ."]
    assert task.splits["dev"].labels == ["A", "B"]
    assert task.labels == ["A", "B"]


def test_senteval_file_other_name_and_overrides(tmp_path: Path) -> None:
    path = write(tmp_path / "my_probe.txt", GOOD)
    task = load_senteval_file(path)
    assert task.name == "my_probe" and task.metadata.paper_name is None
    assert task.metadata.category == "other"
    assert load_senteval_file(path, name="Custom").name == "Custom"


def test_crlf_bom_and_blank_lines_are_tolerated(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    text = "\ufeff" + "\r\n".join(GOOD[:4]) + "\r\n\r\n" + "\r\n".join(GOOD[4:])
    path.write_bytes(text.encode())
    task = load_senteval_file(path)
    assert task.splits["train"].sentences[0] == "the cat sat ."
    assert task.splits["test"].labels == ["A", "B"]


def test_gzip_file_loads_like_plain(tmp_path: Path) -> None:
    plain = load_senteval_file(write(tmp_path / "plain" / "tree_depth.txt", GOOD))
    packed = load_senteval_file(write(tmp_path / "tree_depth.txt.gz", GOOD, compress=True))
    assert packed.name == "TreeDepth"
    assert packed.content_hash() == plain.content_hash()


def test_corrupt_gzip_is_a_data_error(tmp_path: Path) -> None:
    path = tmp_path / "t.txt.gz"
    path.write_bytes(gzip.compress(b"tr\tA\tx\n" * 100)[:30])
    with pytest.raises(DataError, match="gzip"):
        load_senteval_file(path)


def test_senteval_dir_orders_tasks_and_skips_non_task_files(tmp_path: Path) -> None:
    write(tmp_path / "word_content.txt", GOOD)
    write(tmp_path / "sentence_length.txt.gz", GOOD, compress=True)
    write(tmp_path / "zz_custom.txt", GOOD)
    write(tmp_path / "README.txt", ["Just some notes", "about the data"])
    tasks = load_senteval_dir(tmp_path)
    assert [t.name for t in tasks] == ["SentLen", "WC", "zz_custom"]


def test_senteval_dir_known_file_with_errors_is_not_skipped(tmp_path: Path) -> None:
    write(tmp_path / "past_present.txt", ["oops no tabs here"] + GOOD)
    with pytest.raises(DataError) as info:
        load_senteval_dir(tmp_path)
    assert info.value.path == str(tmp_path / "past_present.txt") and info.value.line == 1


def test_senteval_dir_skips_a_task_that_cannot_run_with_one_line(tmp_path: Path) -> None:
    """The real SentEval sample's WC has dev labels never seen in train: that task is skipped
    with a one-line warning and the other tasks of the folder load."""
    write(tmp_path / "word_content.txt", [*GOOD, "va\tC\ta label never in train ."])
    write(tmp_path / "past_present.txt", GOOD)
    with pytest.warns(UserWarning) as caught:
        tasks = load_senteval_dir(tmp_path)
    assert [t.name for t in tasks] == ["Tense"]
    (message,) = [str(w.message) for w in caught]
    assert "skipped, the other tasks run" in message and "word_content.txt" in message
    assert "never in train" in message and "\n" not in message


def test_senteval_dir_manifest_gives_metadata(tmp_path: Path) -> None:
    write(tmp_path / "sentence_length.txt", GOOD)
    manifest = {
        "suite": "tiny",
        "language": "en",
        "source": "unit test",
        "license": "CC0",
        "citation": "Nobody 2024",
        "tasks": {"SentLen": {"file": "sentence_length.txt", "labels": ["B", "A"]}},
    }
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    (task,) = load_senteval_dir(tmp_path)
    assert task.name == "tiny/SentLen" and task.metadata.paper_name == "SentLen"
    assert task.metadata.license == "CC0" and task.metadata.citation == "Nobody 2024"
    assert task.labels == ["B", "A"]  # declared order wins


def test_manifest_naming_missing_file(tmp_path: Path) -> None:
    manifest = {"suite": "tiny", "tasks": {"WC": {"file": "word_content.txt"}}}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(DataError, match="word_content.txt.*missing"):
        load_senteval_dir(tmp_path)


def test_manifest_invalid_json_reports_line(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text('{\n  "suite": "x",\n  "tasks": {,}\n}')
    with pytest.raises(DataError) as info:
        load_senteval_dir(tmp_path)
    assert info.value.line == 3 and info.value.path.endswith("manifest.json")


def test_large_file_loads(tmp_path: Path) -> None:
    rng = random.Random(0)
    words = [f"w{i}" for i in range(3000)]
    lines = [
        f"{split}\t{rng.randint(5, 12)}\t{' '.join(rng.choices(words, k=rng.randint(5, 28)))}"
        for split, n in (("tr", 100_000), ("va", 10_000), ("te", 10_000))
        for _ in range(n)
    ]
    path = write(tmp_path / "tree_depth.txt", lines)
    task = load_task(path)  # speed is a benchmark's business, not a unit test's
    assert len(task.splits["train"]) == 100_000


# ---------------------------------------------------------------------------- X-Probe


def test_xprobe_task_folder_language_from_parent(tmp_path: Path) -> None:
    (task,) = load_xprobe_dir(write_xprobe(tmp_path / "de" / "bigram_shift"))
    assert task.name == "de/BShift" and task.metadata.language == "de"
    assert task.metadata.category == "syntactic"
    assert task.splits["train"].sentences[0] == "the cat sat ."
    assert task.splits["test"].labels == ["O", "I"]


def test_xprobe_language_argument_and_unknown_language(tmp_path: Path) -> None:
    folder = write_xprobe(tmp_path / "data_v1" / "custom_task", ("tr", "te"))
    (task,) = load_xprobe_dir(folder)
    assert task.name == "custom_task" and task.metadata.language == "und"
    assert "dev" not in task.splits
    (task,) = load_xprobe_dir(folder, language="fi")
    assert task.name == "fi/custom_task" and task.metadata.language == "fi"


def test_xprobe_language_folder_and_root(tmp_path: Path) -> None:
    for lang in ("en", "ru"):
        write_xprobe(tmp_path / lang / "tree_depth")
        write_xprobe(tmp_path / lang / "sentence_length")
    names = [t.name for t in load_xprobe_dir(tmp_path / "ru")]
    assert names == ["ru/SentLen", "ru/TreeDepth"]
    names = [t.name for t in load_tasks(tmp_path)]
    assert names == ["en/SentLen", "en/TreeDepth", "ru/SentLen", "ru/TreeDepth"]


def test_xprobe_gzip_split_files(tmp_path: Path) -> None:
    folder = tmp_path / "es" / "subj_number"
    for split, lines in XPROBE.items():
        write(folder / f"{split}.txt.gz", lines, compress=True)
    (task,) = load_tasks(folder)
    assert task.name == "es/SubjNum" and len(task.splits["train"]) == 4


# ---------------------------------------------------------------------------- tables


def test_tsv_with_header_in_any_order(tmp_path: Path) -> None:
    rows = [line.split("\t") for line in GOOD]
    lines = ["label\tid\tsentence\tsplit"]
    lines += [f"{y}\t{i}\t{s}\t{p}" for i, (p, y, s) in enumerate(rows)]
    task = load_table(write(tmp_path / "probe.tsv", lines))
    assert task.name == "probe" and task.metadata.language == "und"
    assert task.splits["dev"].sentences == ["this cat ate .", "those dogs ate ."]


def test_jsonl_with_long_split_names_and_int_labels(tmp_path: Path) -> None:
    split = {"tr": "train", "va": "dev", "te": "test"}
    lines = [
        json.dumps({"sentence": s, "label": 0 if y == "A" else 1, "split": split[p]})
        for p, y, s in (line.split("\t") for line in GOOD)
    ]
    task = load_table(write(tmp_path / "probe.jsonl.gz", lines, compress=True))
    assert task.name == "probe" and task.labels == ["0", "1"]
    assert task.splits["test"].sentences == ["my cat hid .", "your dogs hid ."]


# ---------------------------------------------------------------------------- detection


def test_load_task_detects_formats(tmp_path: Path) -> None:
    senteval = write(tmp_path / "a" / "odd_man_out.txt", GOOD)
    assert load_task(senteval).name == "SOMO"
    assert load_task(senteval.parent).name == "SOMO"
    assert load_task(write_xprobe(tmp_path / "x" / "fr" / "obj_number")).name == "fr/ObjNum"
    table = write(
        tmp_path / "t.tsv",
        ["sentence\tlabel\tsplit"]
        + [f"{s}\t{y}\t{p}" for p, y, s in (line.split("\t") for line in GOOD)],
    )
    assert len(load_task(table).splits) == 3


def test_load_task_rejects_several_tasks_and_missing_paths(tmp_path: Path) -> None:
    write(tmp_path / "word_content.txt", GOOD)
    write(tmp_path / "tree_depth.txt", GOOD)
    with pytest.raises(SentprobeError, match="2 tasks"):
        load_task(tmp_path)
    with pytest.raises(DataError, match="no such file"):
        load_tasks(tmp_path / "nope")


def test_directory_without_tasks(tmp_path: Path) -> None:
    write(tmp_path / "notes.md", ["nothing here"])
    with pytest.raises(DataError, match="no probing tasks found"):
        load_tasks(tmp_path)


def test_manifest_declares_no_surface_cue(tmp_path: Path) -> None:
    write(tmp_path / "data.txt", GOOD)
    write(tmp_path / "other.txt", GOOD)
    manifest = {
        "tasks": {
            "Mine": {"file": "data.txt", "no_surface_cue": True},
            "Other": {"file": "other.txt"},
        }
    }
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    found = {meta.name: meta for meta, _ in manifest_tasks(tmp_path)}
    assert found["Mine"].no_surface_cue is True and found["Mine"].expects_no_surface_cue
    assert found["Other"].no_surface_cue is None


# ---------------------------------------------------------------------------- lenient mode


def test_lenient_senteval_collects_problems_and_keeps_readable_lines(tmp_path: Path) -> None:
    bad = [*GOOD, "xx\tA\tan unknown split .", "te\tC\ta label never in train .", "te\tA"]
    path = write(tmp_path / "bigram_shift.txt", bad)
    with pytest.raises(DataError):
        load_senteval_file(path)
    rejected: list = []
    task = load_senteval_file(path, rejected=rejected)
    assert [(p, line) for p, line, _ in rejected] == [
        (str(path), 9),
        (str(path), 11),
        (str(path), 10),
    ]
    assert "unknown split 'xx'" in rejected[0][2] and "never in train" in rejected[2][2]
    assert task.name == "BShift" and len(task.splits["test"]) == 3  # the unseen label is kept


def test_lenient_xprobe_reports_a_missing_split_file_and_reads_the_rest(tmp_path: Path) -> None:
    folder = write_xprobe(tmp_path / "en" / "bigram_shift", ("tr", "va"))
    rejected: list = []
    task = load_xprobe_task(folder, rejected=rejected)
    problems = [problem for _, _, problem in rejected]
    assert problems[0].startswith("no te.txt (test split)")
    assert any(p.startswith("no test split") for p in problems)
    assert task.name == "en/BShift" and len(task.splits["train"]) == 4 and "test" not in task.splits


def test_any_task_path_takes_its_language(tmp_path):
    """A TSV is "und" and a SentEval file "en" unless the spec names the language."""
    from sentprobe.datasets import resolve_tasks

    tsv = tmp_path / "tense.tsv"
    rows = [f"{split}\tune phrase {i} .\t{'A' if i % 2 else 'B'}" for i in range(12)
            for split in ("train", "dev", "test")]  # fmt: skip
    tsv.write_text("split\tsentence\tlabel\n" + "\n".join(rows) + "\n", encoding="utf-8")
    (plain,) = resolve_tasks(str(tsv))
    (named,) = resolve_tasks(f"{tsv}?language=FR")
    assert (plain.metadata.language, named.metadata.language) == ("und", "fr")
    assert named.content_hash() == plain.content_hash()
    senteval = tmp_path / "past_present.txt"
    senteval.write_text(
        "".join(
            f"{s}\t{'PAST' if i % 2 else 'PRES'}\tune phrase {s} {i} .\n"
            for s in ("tr", "va", "te")
            for i in range(6)
        ),  # fmt: skip
        encoding="utf-8",
    )
    assert resolve_tasks(str(senteval))[0].metadata.language == "en"
    assert resolve_tasks(f"{senteval}?language=fr")[0].metadata.language == "fr"
    with pytest.raises(SentprobeError, match="is not an ISO 639 code"):
        resolve_tasks(f"{tsv}?language=french")
    with pytest.raises(SentprobeError, match=r"\?sentence= and \?label= name a dataset folder"):
        resolve_tasks(f"{tsv}?sentence=text")
