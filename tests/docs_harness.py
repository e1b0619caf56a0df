"""Runs the README's and docs' code blocks (tests/test_docs.py).

Every fenced ``bash``/``sh``/``python`` block of README.md and docs/*.md carries a marker on
the line before its fence:

- ``<!-- docs-test: run -->``: executed in the default test run;
- ``<!-- docs-test: slow -->``: executed with ``-m slow`` (minutes of work);
- ``<!-- docs-test: skip REASON -->``: not runnable here, and why (needs a GPU, a cluster,
  the user's SentEval checkout...).
- ``<!-- docs-test: file NAME -->``: a file the page shows (in any language): written as
  ``NAME`` into the page's working directory before the blocks after it run.

``run`` and ``slow`` may add ``setup=NAME[,NAME]`` (a function of :data:`SETUPS` that writes the
files the block names) and ``needs=shared`` (skips without ``../shared/data``); any other word
is an error. Blocks of one page run in order in one working directory, so a ``report`` block
sees what a ``run`` block stored. Bash blocks run with ``set -euo pipefail``; python blocks in
a fresh interpreter.

A value stated in a comment is checked: what that one-line statement prints must be the
stated text (whitespace runs count as one space). ``print(tree_depth(tree))  # -> 6``, or
``tree_depth(tree)  # -> 6`` (a bare expression is printed by repr, as the interactive prompt
shows it); in bash, ``command  # -> text``.

The sandbox is offline: the shipped MiniLM stands in for every Hub model a block names
(``hf:bert-base-uncased``, ``st:...``): a Hugging Face cache with those names holding
MiniLM's files, so the commands run exactly as written. A page that uses a stand-in names it
in a sentence containing :data:`STAND_IN_NOTE` (tests/test_docs.py checks it).

One page, or its blocks from a given one on (after a failure, say), runs from the command line:

    python tests/docs_harness.py README.md --mode slow --from 120   # from the block at line 120
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LANGS = {"bash": "bash", "sh": "bash", "shell": "bash", "python": "python", "py": "python"}
FENCE = re.compile(r"^(\s*)```\s*([\w+-]*)\s*$")
MARK = re.compile(r"^\s*<!--\s*docs-test:\s*(run|slow|skip|file)\b\s*(.*?)\s*-->\s*$")
HUB_NAME = re.compile(
    r"\b(?:hf|st|mteb):([A-Za-z][\w.-]*/[\w.-]+|[a-z][\w.-]*-(?:base|large|uncased|cased)[\w.-]*)(?![\w/])"
    r"|get_model\(\s*[\"']([A-Za-z][\w.-]*/[\w.-]+)[\"']"
)
STATED = re.compile(r"^(?P<code>.*?)\s+#\s*->\s*(?P<value>.+?)\s*$")
#: the words of the sentence by which a page names the models MiniLM stands in for
STAND_IN_NOTE = "MiniLM stands in for"
SENTINEL = "\x1edocs-stated"


@dataclass
class Block:
    """One fenced code block of a page."""

    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    mode: str | None  # run, slow, skip, file, or None (unmarked)
    reason: str = ""
    setups: list[str] = field(default_factory=list)
    needs: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # marker words that mean nothing here

    @property
    def where(self) -> str:
        return f"{shown(self.page)}:{self.line}"


def shown(page: Path) -> str:
    """``page`` as messages name it: relative to the repository when it is in it."""
    return str(page.relative_to(ROOT)) if page.is_relative_to(ROOT) else str(page)


def blocks(page: Path) -> list[Block]:
    """The bash and python blocks of ``page``, with their markers."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.group(1), m.group(2).lower()
        j = i + 1
        while j < len(lines) and not re.match(rf"^{indent}```\s*$", lines[j]):
            j += 1
        prev = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        mark = MARK.match(prev)
        is_file = bool(mark) and mark.group(1) == "file"
        if lang in LANGS or is_file:
            block = Block(
                page,
                i + 1,
                LANGS.get(lang, lang),
                "\n".join(x[len(indent) :] for x in lines[i + 1 : j]),
                None,
            )
            if mark:
                block.mode, rest = mark.group(1), mark.group(2)
                if block.mode in ("skip", "file"):
                    block.reason = rest
                else:
                    for word in rest.split():
                        key, _, value = word.partition("=")
                        names = value.split(",") if value else []
                        if key == "setup" and names and all(n in SETUPS for n in names):
                            block.setups.extend(names)
                        elif key == "needs" and names == ["shared"]:
                            block.needs.extend(names)
                        else:
                            block.unknown.append(word)
            found.append(block)
        i = j + 1
    return found


#: a comment meant as a marker: ``docs-test`` in any spelling of its mode
NEAR_MARK = re.compile(r"<!--\s*docs[-_ ]?tests?\b", re.I)


def problems(page: Path) -> list[str]:
    """What makes ``page``'s markers or stated values unreadable, one line each: a marker
    comment that is not one (``<!-- docs-test: runn -->``), unknown words, setups or needs
    after run/slow, a block without a marker, a skip without its reason, a file block without
    its name, and a stated value (``# ->``) in a fence that names no language (never read).
    The harness refuses to run a page with any (``main``); tests/test_docs.py checks all."""
    lines = page.read_text(encoding="utf-8").splitlines()
    out = []
    for number, line in enumerate(lines, 1):
        if NEAR_MARK.search(line) and not MARK.match(line):
            out.append(f"{shown(page)}:{number}: not a docs-test marker: {line.strip()}")
    in_fence, lang, start = False, "", 0
    for number, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if m and not in_fence:
            in_fence, lang, start = True, m.group(2), number
        elif in_fence and re.match(r"^\s*```\s*$", line):
            in_fence = False
        elif in_fence and not lang and STATED.match(line):
            out.append(
                f"{shown(page)}:{number}: a stated value (# ->) in a fence without a language "
                f"(line {start}): name it (```python, ```bash) so the harness runs and checks it"
            )
    for b in blocks(page):
        if b.mode is None:
            out.append(f"{b.where}: no marker: add <!-- docs-test: run|slow|skip REASON -->")
        elif b.mode == "skip" and len(b.reason) < 10:
            out.append(f"{b.where}: a skipped block says why it cannot run here")
        elif b.mode == "file" and not b.reason:
            out.append(f"{b.where}: a file block names its file: <!-- docs-test: file NAME -->")
        if b.unknown:
            out.append(
                f"{b.where}: unknown marker words {b.unknown}: run/slow take only "
                f"setup=NAME[,NAME] (one of {', '.join(sorted(SETUPS))}) and needs=shared"
            )
    return out


def all_blocks() -> list[Block]:
    return [b for page in DOCS for b in blocks(page)]


def stand_ins(code: str) -> set[str]:
    """The Hub models ``code`` names, for which MiniLM stands in here."""
    return {a or b for a, b in HUB_NAME.findall(code)}


def unnamed_stand_ins(page: Path) -> list[str]:
    """Stand-ins used by ``page``'s runnable blocks that no stand-in sentence of it names."""
    text = " ".join(page.read_text(encoding="utf-8").split())
    notes = [s for s in re.split(r"(?<=[.!?])\s", text) if STAND_IN_NOTE in s]
    used = {n for b in blocks(page) if b.mode in ("run", "slow") for n in stand_ins(b.code)}
    return sorted(n for n in used if not any(n in note for note in notes))


def stated_values(block: Block) -> tuple[str, list[str]]:
    """``block``'s code with each stated value's statement wrapped in sentinels, and the values.

    Raises ValueError when a stated value follows something other than a one-line statement.
    """
    out, values = [], []
    for number, line in enumerate(block.code.splitlines(), block.line + 1):
        m = STATED.match(line)
        if not m or not m.group("code").strip():
            out.append(line)
            continue
        code = m.group("code")
        indent = code[: len(code) - len(code.lstrip())]
        statement = code.strip()
        if block.lang == "python":
            try:
                tree = ast.parse(statement)
            except SyntaxError:
                tree = None
            if tree is None or len(tree.body) != 1:
                raise ValueError(
                    f"{shown(block.page)}:{number}: a stated value (# -> ...) must "
                    "follow a one-line statement"
                )
            node = tree.body[0]
            is_print = (
                isinstance(node, ast.Expr)
                and isinstance(node.value, ast.Call)
                and getattr(node.value.func, "id", "") == "print"
            )
            if isinstance(node, ast.Expr) and not is_print:
                statement = f"print(repr({statement}))"
            begin = f"print({SENTINEL + str(len(values))!r}, flush=True)"
            end = f"print({SENTINEL!r}, flush=True)"
        else:
            begin, end = f"echo '{SENTINEL}{len(values)}'", f"echo '{SENTINEL}'"
        out += [indent + begin, indent + statement, indent + end]
        values.append(m.group("value"))
    return "\n".join(out), values


def check_stated(block: Block, values: list[str], stdout: str) -> None:
    """Every stated value is what its statement printed, each time it ran (at least once)."""
    found = re.findall(rf"{SENTINEL}(\d+)\n(.*?){SENTINEL}\n", stdout, re.S)
    wrong = []
    for i, expected in enumerate(values):
        printed = [" ".join(text.split()) for k, text in found if int(k) == i]
        if not printed or any(p != " ".join(expected.split()) for p in printed):
            wrong.append(f"stated {expected!r}, printed {printed or 'nothing'}")
    if wrong:
        raise AssertionError(f"{block.where}: " + "; ".join(wrong))


# -- the sandbox ---------------------------------------------------------------------------


def minilm_dir() -> Path:
    from sentprobe.encoders.sbert import minilm_path

    return Path(minilm_path())


def hub_stand_ins(code: str, hub: Path) -> None:
    """A Hugging Face cache in ``hub`` where every Hub model ``code`` names is MiniLM."""
    for name in {a or b for a, b in HUB_NAME.findall(code)}:
        repo = hub / ("models--" + name.replace("/", "--"))
        commit = "0" * 40
        snap = repo / "snapshots" / commit
        if snap.exists():
            continue
        shutil.copytree(minilm_dir(), snap)
        (repo / "refs").mkdir(parents=True, exist_ok=True)
        (repo / "refs" / "main").write_text(commit)


def environment(sandbox: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_HUB_CACHE=str(sandbox / "hub"),
        SENTPROBE_CACHE=str(sandbox / "embeddings"),
        SENTPROBE_PROGRESS_SECONDS="60",
        PYTHONPATH=str(ROOT / "src"),
        # `--executor ray` starts its own Ray instance: never joins one that another test or
        # process left running on this machine (Ray's default is to join it).
        RAY_ADDRESS="local",
    )
    if (SHARED_DATA / "dnc_function_words").is_dir():
        env["SENTPROBE_DNC"] = str(SHARED_DATA / "dnc_function_words")  # the suite kim2019
    return env


def run_block(block: Block, cwd: Path, sandbox: Path, timeout: float = 1200) -> None:
    """Run one block in ``cwd``; raise AssertionError with its output when it fails."""
    if block.mode == "file":
        (cwd / block.reason).write_text(block.code + "\n", encoding="utf-8")
        return
    for name in block.setups:
        SETUPS[name](cwd)
    hub_stand_ins(block.code, sandbox / "hub")
    code, values = stated_values(block)
    if block.lang == "bash":
        argv = ["bash", "-c", "set -euo pipefail\n" + code]
    else:
        argv = [sys.executable, "-c", code]
    done = subprocess.run(
        argv, cwd=cwd, env=environment(sandbox), capture_output=True, text=True, timeout=timeout
    )
    if done.returncode:
        tail = (done.stdout[-3000:] + "\n" + done.stderr[-3000:]).strip()
        raise AssertionError(f"{block.where}: exit {done.returncode}\n{tail}")
    check_stated(block, values, done.stdout)


def run_page(page: Path, mode: str, cwd: Path, sandbox: Path, start: int = 0) -> list[Block]:
    """Run ``page``'s blocks of ``mode`` in order in ``cwd``, from the block whose fence is at
    line ``start`` or after (the files the page shows are all written); returns the blocks."""
    chosen = [b for b in blocks(page) if b.mode == "file" or b.mode == mode and b.line >= start]
    for block in chosen:  # a slow block may encode all of sample-en several times on a CPU
        run_block(block, cwd, sandbox, timeout=600 if mode == "run" else 5400)
    return chosen


# -- files the examples name ---------------------------------------------------------------


def _sample_task_lines(n: int = 60) -> list[str]:
    """SentEval lines (split, label, sentence) of sample-en's Tense task."""
    from sentprobe.datasets import resolve_tasks

    task = next(t for t in resolve_tasks("sample-en") if t.name.endswith("Tense"))
    codes = {"train": "tr", "dev": "va", "test": "te"}
    out = []
    for split, code in codes.items():
        data = task.splits[split]
        for s, y in list(zip(data.sentences, data.labels))[: n if split == "train" else n // 3]:
            out.append(f"{code}\t{y}\t{s}")
    return out


def senteval_dir(cwd: Path) -> None:
    """``path/to/senteval/probing``: a SentEval probing folder (one task, from sample-en)."""
    folder = cwd / "path/to/senteval/probing"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "past_present.txt").write_text("\n".join(_sample_task_lines()) + "\n")


def my_task(cwd: Path) -> None:
    """``my_task.tsv``: a table with sentence, label and split columns."""
    rows = ["sentence\tlabel\tsplit"]
    names = {"tr": "train", "va": "dev", "te": "test"}
    for line in _sample_task_lines():
        code, label, sentence = line.split("\t")
        rows.append(f"{sentence}\t{label}\t{names[code]}")
    (cwd / "my_task.tsv").write_text("\n".join(rows) + "\n")


def my_encoder(cwd: Path) -> None:
    """``my_encoder.py`` with a plain function ``encode``, and a SentEval-style script."""
    (cwd / "my_encoder.py").write_text(
        "import numpy as np\n\n"
        "def encode(sentences):\n"
        "    return np.array([[len(s), s.count(' '), s.count('e')] for s in sentences], float)\n"
    )
    (cwd / "senteval_script.py").write_text(
        "import numpy as np\n\n"
        "def prepare(params, samples):\n"
        "    params.vocab = sorted({w for s in samples for w in s})[:50]\n\n"
        "def batcher(params, batch):\n"
        "    return np.array([[w in s for w in params.vocab] for s in batch], float)\n"
    )


def model_dir(cwd: Path) -> None:
    """``my-model-dir``: a local transformers model directory (MiniLM's files)."""
    target = cwd / "my-model-dir"
    if not target.exists():
        shutil.copytree(minilm_dir(), target)


def precomputed(cwd: Path) -> None:
    """``vectors.npy`` + ``sentences.txt``: vectors for every sentence of sample-en."""
    import numpy as np

    from sentprobe.datasets import resolve_tasks

    sentences = sorted(
        {s for t in resolve_tasks("sample-en") for sp in t.splits.values() for s in sp.sentences}
    )
    (cwd / "sentences.txt").write_text("\n".join(sentences) + "\n")
    rng = np.random.default_rng(0)
    np.save(cwd / "vectors.npy", rng.standard_normal((len(sentences), 16)).astype("float32"))


def _sentences(suite: str, limit: int | None = None) -> list[str]:
    """Distinct sentences of a built-in suite, in a fixed order (Moses-tokenized text)."""
    from sentprobe.datasets import resolve_tasks

    seen = {s for t in resolve_tasks(suite) for sp in t.splits.values() for s in sp.sentences}
    return sorted(seen)[:limit]


def corpus(cwd: Path) -> None:
    """English raw text, one sentence per line: ``corpus.txt``, ``corpus.txt.gz`` and the
    names the training examples use (``books.txt``, ``text.txt``, ``running-text.txt``); the
    first sentences of the shipped training corpus (package text, none of it in sample-en)."""
    import gzip
    from importlib import resources

    demo = resources.files("sentprobe.training") / "demo/corpus.txt.gz"
    lines = gzip.decompress(demo.read_bytes()).decode("utf-8").splitlines()
    text = "\n".join([x for x in lines if x.strip()][:CORPUS_SENTENCES]) + "\n"
    for name in ("corpus.txt", "books.txt", "text.txt", "running-text.txt"):
        (cwd / name).write_text(text, encoding="utf-8")
    with gzip.open(cwd / "corpus.txt.gz", "wt", encoding="utf-8") as out:
        out.write(text)


#: sentences of the ``corpus`` fixture: enough for every task at ``--sizes auto``, few enough
#: to annotate in minutes on a CPU
CORPUS_SENTENCES = 6000


def raw_ru(cwd: Path) -> None:
    """``raw-ru.txt`` and ``help-ru.txt``: Russian raw text (sample-ru's sentences)."""
    text = "\n".join(_sentences("sample-ru")) + "\n"
    for name in ("raw-ru.txt", "help-ru.txt"):
        (cwd / name).write_text(text, encoding="utf-8")


def ud_fr(cwd: Path) -> None:
    """``fr_gsd-ud-{dev,test}.conllu.gz``: links to the French GSD treebank in ../shared/data."""
    for split in ("dev", "test"):
        name = f"fr_gsd-ud-{split}.conllu.gz"
        if not (cwd / name).exists():
            (cwd / name).symlink_to(SHARED_DATA / "ud" / "fr_gsd" / name)


def published(cwd: Path) -> None:
    """``published/past_present.txt``: a SentEval Tense file (sample-en's Tense task)."""
    (cwd / "published").mkdir(exist_ok=True)
    (cwd / "published/past_present.txt").write_text("\n".join(_sample_task_lines()) + "\n")


def _copy_shipped(name: str, target: Path) -> None:
    """Copy the package's ``data/<name>`` folder to ``target`` (unless it is there already)."""
    from importlib import resources

    if not target.exists():
        with resources.as_file(resources.files("sentprobe.datasets") / "data" / name) as src:
            shutil.copytree(src, target)


def suite(cwd: Path) -> None:
    """``path/to/suite``: a built suite with its manifest (a copy of sample-en)."""
    _copy_shipped("sample_en", cwd / "path/to/suite")


def kim_suite(cwd: Path) -> None:
    """``suite``: a function-word suite in the DNC release's format (a copy of the shipped
    sample-kim-en, generated from sample-en's text)."""
    _copy_shipped("sample_kim_en", cwd / "suite")


def model_path(cwd: Path) -> None:
    """``path/to/model``: a local transformers model directory (MiniLM's files)."""
    target = cwd / "path/to/model"
    if not target.exists():
        shutil.copytree(minilm_dir(), target)


def human(cwd: Path) -> None:
    """``human.csv``: reference rows (row,task,score,note), here the human accuracies of Kim
    et al. (2019, Table 3) from the shipped reference table."""
    from importlib import resources

    table = resources.files("sentprobe.datasets") / "data/reference/kim2019.csv"
    lines = table.read_text(encoding="utf-8").splitlines()
    keep = [lines[0], *(x for x in lines[1:] if x.startswith("Human"))]
    (cwd / "human.csv").write_text("\n".join(keep) + "\n", encoding="utf-8")


def scores(cwd: Path) -> None:
    """``scores.csv``: downstream scores (encoder,task,score) of the default baselines and
    MiniLM, drawn at random (seeded): a stand-in for the user's downstream results."""
    import numpy as np

    rng = np.random.default_rng(0)
    rows = ["# example downstream scores (tests/docs_harness.py), not measured"]
    rows.append("encoder,task,score")
    for encoder in ("Majority", "Length", "NB-uni-tfidf", "NB-bi-tfidf", "BoV-GloVe", "MiniLM-L6"):
        for task in ("SST2", "TREC", "MRPC"):
            rows.append(f"{encoder},{task},{rng.uniform(50, 90):.1f}")
    (cwd / "scores.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")


def nli_pairs(cwd: Path) -> None:
    """``mnli.jsonl`` / ``nli.jsonl``: NLI pairs (premise, hypothesis, label) made from
    sample-en's sentences: the sentence itself (entailment), the sentence with "not" after its
    first auxiliary (contradiction), another sentence (neutral)."""
    import json

    sentences = _sentences("sample-en", NLI_PAIRS)
    aux = re.compile(r"\b(is|are|was|were|can|will|should|could|would|does|did|has|have)\b")
    rows = []
    for i, s in enumerate(sentences):
        rows.append({"premise": s, "hypothesis": s, "label": "entailment"})
        negated = aux.sub(lambda m: m.group(0) + " not", s, count=1)
        if negated != s:
            rows.append({"premise": s, "hypothesis": negated, "label": "contradiction"})
        other = sentences[(i * 7 + 3) % len(sentences)]
        rows.append({"premise": s, "hypothesis": other, "label": "neutral"})
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    for name in ("mnli.jsonl", "nli.jsonl"):
        (cwd / name).write_text(text, encoding="utf-8")


#: premises of the ``nli`` fixture
NLI_PAIRS = 3000


def votes(cwd: Path) -> None:
    """``votes.csv``: three votes per item of the function-word suite ``suite``, each
    annotator giving the answer that matches the generator's label 9 times in 10 (seeded)."""
    import csv

    import numpy as np

    from sentprobe.analysis import votes as v

    rng = np.random.default_rng(0)
    by_label = {label: answer for answer, label in v.JUDGED.items()}
    by_label.update({label: answer for answer, label in v.LIKERT.items()})
    with open(cwd / "votes.csv", "w", encoding="utf-8", newline="") as f:
        out = csv.writer(f)
        out.writerow(["item_id", "answer", "annotator"])
        for name, items in v._items(cwd / "suite").items():
            options = v.NLI_ANSWERS if v.is_nli(name) else v.ACCEPTABILITY_ANSWERS
            for iid, (data, _) in items.items():
                for who in ("a1", "a2", "a3"):
                    answer = by_label.get(data["label"], options[0])
                    if rng.random() >= 0.9:
                        answer = str(rng.choice(options))
                    out.writerow([iid, answer, who])


def dataset_folder(cwd: Path) -> None:
    """``my-dataset-folder``: a ``datasets.save_to_disk`` folder with columns text and y."""
    from datasets import Dataset, DatasetDict

    names = {"tr": "train", "va": "validation", "te": "test"}
    parts: dict[str, dict[str, list[str]]] = {}
    for line in _sample_task_lines():
        code, label, sentence = line.split("\t")
        part = parts.setdefault(names[code], {"text": [], "y": []})
        part["text"].append(sentence)
        part["y"].append(label)
    DatasetDict({k: Dataset.from_dict(v) for k, v in parts.items()}).save_to_disk(
        str(cwd / "my-dataset-folder")
    )


def pairs(cwd: Path) -> None:
    """``pairs.tsv``: English-French sentence pairs (the shipped LibreOffice help pairs)."""
    import gzip
    from importlib import resources

    data = resources.files("sentprobe.datasets") / "data/parallel_en_fr"
    tsv = (data / "libreoffice-help.en-fr.tsv.gz").read_bytes()
    (cwd / "pairs.tsv").write_bytes(gzip.decompress(tsv))


def damaged_store(cwd: Path) -> None:
    """``damaged.sqlite``: a results store of 300 units (synthetic records, each with its
    test predictions) cut to half its size, as a copy or a disk that stopped leaves it."""
    from sentprobe.evaluation.predictions import Predictions
    from sentprobe.evaluation.store import ResultRecord, ResultsStore

    full = cwd / "full-store.sqlite"
    with ResultsStore(full) as store:
        for i in range(300):
            record = ResultRecord(
                encoder=f"enc{i % 7}", encoder_fingerprint=f"fp{i % 7}", task=f"task{i}",
                task_source="synthetic", task_hash=f"h{i}", category="other", language="en",
                seed=0, probe="logreg", selection="dev", config={"C": 1.0}, dev_score=0.5,
                test_score=i / 300, n_train=10, n_dev=2, n_test=4, n_classes=2, dim=8,
            )  # fmt: skip
            store.add(record, f"k{i}", Predictions.from_labels("abab", "abba"))
    data = full.read_bytes()
    (cwd / "damaged.sqlite").write_bytes(data[: len(data) // 2])
    full.unlink()


SHARED_DATA = ROOT.parent / "shared" / "data"

SETUPS: dict[str, Callable[[Path], None]] = {
    "senteval-dir": senteval_dir,
    "my-task": my_task,
    "my-encoder": my_encoder,
    "model-dir": model_dir,
    "model-path": model_path,
    "precomputed": precomputed,
    "corpus": corpus,
    "raw-ru": raw_ru,
    "ud-fr": ud_fr,
    "published": published,
    "suite": suite,
    "kim-suite": kim_suite,
    "human": human,
    "scores": scores,
    "nli": nli_pairs,
    "votes": votes,
    "dataset-folder": dataset_folder,
    "pairs": pairs,
    "damaged-store": damaged_store,
}


def main() -> int:
    parser = argparse.ArgumentParser(description="Run one page's docs blocks, in order.")
    parser.add_argument("page", type=Path, help="README.md or docs/NAME.md")
    parser.add_argument("--mode", choices=("run", "slow"), default="slow")
    parser.add_argument(
        "--from",
        dest="start",
        type=int,
        default=0,
        metavar="LINE",
        help="start at the block whose fence is at LINE (or the next one)",
    )
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args()
    page = args.page.resolve()
    wrong = problems(page)
    if wrong:
        print("\n".join(wrong), file=sys.stderr)
        print(f"{len(wrong)} marker problem(s) in {shown(page)}: nothing run", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="sentprobe-docs-") as tmp:
        cwd = args.keep or Path(tmp) / "work"
        cwd.mkdir(parents=True, exist_ok=True)
        try:
            done = run_page(page, args.mode, cwd, Path(tmp) / "sandbox", args.start)
        except AssertionError as failure:
            print(f"FAILED {failure}", file=sys.stderr)
            return 1
    ran = sum(b.mode == args.mode for b in done)
    print(f"{ran} {args.mode} block(s) of {shown(page)} passed, after writing the files it shows")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    sys.exit(main())
