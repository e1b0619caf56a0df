"""One identity for every stored number, and the one query every report reads results through.

A stored result is the number of one *identity*: its row (the encoder fingerprint, weights
and view included; a seeded encoder's draws, one fingerprint per seed, are the seeds of the
row their ``extra["row_fingerprint"]`` names), its task (source, language and name; a
control task is the task's name with ``~control``), its probe and its seed. Of several
results of one identity only the newest counts: an older one was computed on older task data,
by an older probe version or an older version of a text baseline, and is *stale*, never a
second sample. A row whose vectors had a task's property erased (evaluation/erasure.py) is a
row of its own: its fingerprint is the plain row's with ``|erase:SPEC`` after it, ``erasure``
is the SPEC (``leace:sample-en/Tense(en,1a2b3c4d):v2``, ``random:seed0:...``, the held-out
check of an erasure ``heldout:leace:...``; ``leace[train+dev]:...`` for an eraser fit on train
and dev; empty for plain rows) and ``base_row`` the plain row's identity, which the erasure
report pairs it with.

Nothing else may group, average, name files or overwrite: display names are made from
identities at render time (:func:`row_names`, :func:`task_names`) and disambiguated whenever
two identities would print alike, so grouping by a display name is grouping by identity.

:func:`resolve` is the query: the newest result per identity, each row's ``encoder`` turned
into a display name unique to its fingerprint (the stored label kept as ``encoder_label``).
It is idempotent and a part of a resolved frame keeps the whole's names, so a frame resolved
once can be split and handed to any report.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import PurePath

import pandas as pd

from sentprobe.datasets.identity import full_task_name, is_path_source

#: What a task is: where it comes from, its language and its name.
TASK = ("task_source", "language", "task")
#: What a stored number is of (``row_id`` is :func:`row_identity` of the fingerprint).
IDENTITY = ("row_id", *TASK, "probe", "seed", "erasure")
#: What separates an erased row's fingerprint from its plain row's (evaluation/erasure.py).
ERASE_MARK = "|erase:"
_DEFAULTS = {"task_source": "", "language": "", "category": "other", "probe": "", "seed": 0}


def row_identity(fingerprint: str) -> str:
    """The row a fingerprint belongs to: the fingerprint itself, except that a text
    baseline's version (``baseline:LABEL:VERSION``) marks stale results, like a probe's."""
    if fingerprint.startswith("baseline:") and fingerprint.count(":") >= 2:
        return fingerprint.rsplit(":", 1)[0]
    return fingerprint


def short_hash(text: str, length: int = 8) -> str:
    """The first ``length`` hex digits of text's SHA-1: a short, file-name-safe handle."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:length]


def _filled(frame: pd.DataFrame) -> pd.DataFrame:
    df = frame.copy()
    for name, default in _DEFAULTS.items():
        if name not in df.columns:
            df[name] = default
        df[name] = df[name].fillna(default)
    for name in ("task_source", "language", "category", "probe", "task"):
        df[name] = df[name].astype(str)
    if "encoder_label" not in df.columns:
        df["encoder_label"] = df["encoder"].astype(str)
    if "encoder_fingerprint" not in df.columns:
        df["encoder_fingerprint"] = df["encoder_label"]
    prints = df["encoder_fingerprint"].fillna(df["encoder_label"]).astype(str)
    df["encoder_fingerprint"] = prints
    if "task_hash" in df.columns:  # one content under several paths is one task
        df["task_source"] = _content_sources(df)
    extras = df["extra"] if "extra" in df.columns else [None] * len(df)
    rows = [  # a seeded encoder's draws (one fingerprint per seed) are seeds of one row
        e["row_fingerprint"] if isinstance(e, dict) and e.get("row_fingerprint") else fp
        for e, fp in zip(extras, prints, strict=True)
    ]
    df["row_id"] = [row_identity(fp) for fp in rows]
    df["erasure"] = [
        str(e["erasure"]["spec"]) if isinstance(e, dict) and e.get("erasure") else ""
        for e in extras
    ]
    df["base_row"] = [
        r.replace(ERASE_MARK + spec, "", 1) if spec else r
        for r, spec in zip(df["row_id"], df["erasure"], strict=True)
    ]
    return df


def _content_sources(df: pd.DataFrame) -> list[str]:
    """Each record's task source, the same content (task, language and content hash) under
    several sources being the first-written one's: a task is its content, so one file copied
    to two paths is one task, while two different files are two (their sources differ)."""
    first: dict[tuple[str, str, str], str] = {}
    out = []
    for task, language, source, digest in zip(
        df["task"], df["language"], df["task_source"], df["task_hash"], strict=True
    ):
        if not isinstance(digest, str) or not digest:
            out.append(source)
            continue
        out.append(first.setdefault((task, language, digest), source))
    return out


def short_sources(sources: Sequence[str]) -> dict[str, str]:
    """Readable names of task sources that must be told apart: a path by its last few
    components, as many as make it unique among them (``a/de/past_present`` and
    ``b/de/past_present``, not two whole absolute paths); any other source as it is."""
    paths = [s for s in dict.fromkeys(sources) if is_path_source(s)]
    out = {s: s for s in sources}
    for k in range(1, 1 + max((len(PurePath(p).parts) for p in paths), default=0)):
        tails = {p: "/".join(PurePath(p).parts[-k:]) for p in paths}
        if len(set(tails.values())) == len(paths) and not set(tails.values()) & set(out):
            return {**out, **tails}
    return out


def newest(frame: pd.DataFrame) -> pd.DataFrame:
    """The newest result of each identity (by ``created``, then write order), in write
    order; the frame gets the filled identity columns and ``row_id``."""
    df = _filled(frame).reset_index(drop=True)
    if "created" in df.columns:  # stable: equal timestamps keep write order
        df = df.sort_values("created", kind="stable")
    return df.drop_duplicates(subset=list(IDENTITY), keep="last").sort_index()


def row_names(labels: pd.Series, rows: pd.Series) -> pd.Series:
    """Display names of rows: the label, with a short hash of the row identity after it
    where one label stands for several rows (``nmt@epoch-2 (1a2b3c4d)``)."""
    names = labels.astype(str).copy()
    for label, group in rows.groupby(labels, sort=False):
        distinct = list(dict.fromkeys(group.astype(str)))
        if len(distinct) > 1:
            tags = {r: row_tag(r) for r in distinct}
            names[group.index] = [f"{label} ({tags[str(r)]})" for r in group]
    return names


def task_names(frame: pd.DataFrame) -> pd.Series:
    """Display names of tasks: the name, with the language (``Tense (en)``), the source
    (``Tense [sample-en]``) or both after it where one name stands for several tasks."""
    df = _filled(frame)
    labels = df["task"].copy()
    for task, group in df.groupby("task", sort=False):
        variants = group[["task_source", "language"]].drop_duplicates()
        if len(variants) < 2:
            continue
        if variants["language"].nunique() == len(variants):
            suffix = " (" + group["language"] + ")"
        elif variants["task_source"].nunique() == len(variants):
            suffix = " [" + group["task_source"].map(short_sources(group["task_source"])) + "]"
        else:
            shown = group["task_source"].map(short_sources(group["task_source"]))
            suffix = " [" + shown + ", " + group["language"] + "]"
        labels[group.index] = f"{task}" + suffix
    return labels


def resolve(frame: pd.DataFrame) -> pd.DataFrame:
    """The query every report reads through: :func:`newest`, with ``encoder`` a display name
    unique to its row identity (the stored label in ``encoder_label``)."""
    if frame.empty and "encoder" not in frame.columns:
        return frame
    named = "row_id" in frame.columns  # resolved before: a part keeps the whole's names
    df = newest(frame)
    if not named:
        df["encoder"] = row_names(df["encoder_label"], df["row_id"])
    return df


def task_name(task: str, task_source: str) -> str:
    """A stored result's full task name as ``-t`` names it (``sample-en/Tense``; a task
    loaded from a path: the path): :func:`sentprobe.datasets.identity.full_task_name`."""
    return full_task_name(task, task_source)


def row_display_names(frame: pd.DataFrame) -> pd.Series:
    """The name each row of a resolved frame has in the results table: its ``encoder``, with
    the probe in brackets where the same encoder was probed with several (``BoV-GloVe
    [mlp]``)."""
    probes = frame.groupby("encoder", sort=False)["probe"].nunique()
    return pd.Series(
        [
            f"{e} [{p}]" if probes[e] > 1 else str(e)
            for e, p in zip(frame["encoder"], frame["probe"], strict=True)
        ],
        index=frame.index,
        dtype=object,
    )


def select_rows(frame: pd.DataFrame, names: Sequence[str]) -> tuple[pd.DataFrame, list[str]]:
    """The records of a resolved frame whose row any of ``names`` names, and the names that
    name none. A name matches a row by every name the reports print for it: its table name
    (``BoV-GloVe [mlp]``), its display name (``nmt@epoch-2 (1a2b3c4d)``), its stored label,
    its tag or its ``ENCODER [PROBE]`` even where the table shows no probe."""
    if frame.empty:
        return frame, list(names)
    table = row_display_names(frame)
    with_probe = frame["encoder"].astype(str) + " [" + frame["probe"].astype(str) + "]"
    label_probe = frame["encoder_label"].astype(str) + " [" + frame["probe"].astype(str) + "]"
    keys = [table, frame["encoder"].astype(str), frame["encoder_label"].astype(str)]
    keys += [with_probe, label_probe]
    if "row_id" in frame.columns:
        keys.append(frame["row_id"].astype(str).map(row_tag))
    keep = pd.Series(False, index=frame.index)
    unmatched = []
    for name in dict.fromkeys(names):
        hit = pd.Series(False, index=frame.index)
        for key in keys:
            hit |= key == name
        if not hit.any():
            unmatched.append(name)
        keep |= hit
    return frame[keep], unmatched


#: A trained run's fingerprint: ``trained-run-v2|FOLDER|...`` (training/checkpoint.py).
_RUN_PREFIX = "trained-run-v2|"


def run_folder(fingerprint: str) -> str:
    """The resolved folder of a trained run's row (its fingerprint's second field), or ""
    for any other row: a run is its folder plus its checkpoint's content."""
    text = str(fingerprint)
    if not text.startswith(_RUN_PREFIX):
        return ""
    return text[len(_RUN_PREFIX) :].split("|", 1)[0]


def row_tag(row_id: str) -> str:
    """A row's tag: the short hash every report shows after a name that stands for several
    rows (``nmt@epoch-2 (1a2b3c4d)``), the same in every section and format."""
    return short_hash(str(row_id))


def tag_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """What each tag shown in a resolved frame's row names stands for: one record per tagged
    row with its tag, display name, stored label, run folder (trained runs), fingerprint
    (model, revision, layer, pooling and other settings as the encoder states them) and
    erasure; empty when no name carries a tag."""
    columns = ["tag", "row", "label", "folder", "fingerprint", "erasure"]
    if frame.empty or "row_id" not in frame.columns:
        return pd.DataFrame(columns=columns)
    df = frame.drop_duplicates("row_id")
    tags = df["row_id"].map(row_tag)
    tagged = [str(e).endswith(f"({t})") for e, t in zip(df["encoder"], tags, strict=True)]
    df, tags = df[tagged], tags[tagged]
    return pd.DataFrame(
        {
            "tag": tags,
            "row": df["encoder"].astype(str),
            "label": df["encoder_label"].astype(str),
            "folder": df["encoder_fingerprint"].map(run_folder),
            "fingerprint": df["row_id"].astype(str),
            "erasure": df["erasure"].astype(str),
        },
        columns=columns,
    ).reset_index(drop=True)
