"""sentprobe's probing tasks inside MTEB: :func:`to_mteb_tasks` turns a suite into MTEB
classification tasks that MTEB's own ``mteb.evaluate`` runs and returns MTEB result objects for.

    import mteb
    from sentprobe.datasets.mteb_tasks import to_mteb_tasks

    tasks = to_mteb_tasks("sample-en")               # any -t spec: suite, task, folder, hf:...
    result = mteb.evaluate(mteb.get_model("sentence-transformers/all-MiniLM-L6-v2"), tasks)

Each task is an ``AbsTaskClassification`` whose data comes from sentprobe (no download): the
text column is the sentence, the label column the label's index in the task's label list, and
the splits are train, validation and test. Inside MTEB the task is scored as ``sentprobe run``
scores it: by default the task's own probe (``TaskMetadata.probe``, else ``logreg``) from
sentprobe's probe registry is fitted on all of train, its strength chosen on the validation
split where the task has one (by cross-validation on train otherwise), and scored on test, so
MTEB's number and ``sentprobe run``'s agree within the task's confidence interval (what still
differs: MTEB encodes through its own model wrapper, so an encoder's prompts, batching and
precision are MTEB's; MTEB reports f1 and the other scores beside accuracy). ``probe=NAME``
picks another sentprobe probe; ``probe=None`` gives MTEB's own protocol, a scikit-learn
``LogisticRegression(max_iter=100)`` on the raw vectors without dev selection, trained once on
all of train (``samples_per_label`` = the largest class count, ``n_experiments=1``), or with
``samples_per_label=8, n_experiments=10`` MTEB's few-shot protocol.

Task names are :func:`~sentprobe.datasets.identity.mteb_name_of`'s (a task loaded from a path:
its short name, language and a hash of its resolved path); ``report --format mteb`` names its
result files the same way, so MTEB's ``ResultCache`` finds sentprobe's stored results for
these tasks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from sentprobe import registry
from sentprobe.datasets.citations import bibtex
from sentprobe.datasets.identity import mteb_name_of, mteb_task_name  # noqa: F401
from sentprobe.datasets.task import ProbingTask
from sentprobe.errors import SentprobeError, require

#: ISO 639-1 codes of the languages sentprobe builds suites for (and a few more) -> MTEB's
#: ``language-Script`` codes; any other language becomes ``und-Zyyy`` (undetermined).
MTEB_LANGUAGES = {
    "en": "eng-Latn",
    "fr": "fra-Latn",
    "es": "spa-Latn",
    "ru": "rus-Cyrl",
    "de": "deu-Latn",
    "it": "ita-Latn",
    "pt": "por-Latn",
    "nl": "nld-Latn",
    "tr": "tur-Latn",
    "fi": "fin-Latn",
    "pl": "pol-Latn",
    "ar": "ara-Arab",
    "zh": "zho-Hans",
    "ja": "jpn-Jpan",
}
_EXTRA = "mteb"


def mteb_metadata(task: ProbingTask, dataset_path: str | None = None) -> Any:
    """MTEB ``TaskMetadata`` of a probing task; ``dataset`` names sentprobe's data (with the
    content hash as its revision), it is never downloaded."""
    mteb = require("mteb", _EXTRA, "MTEB tasks")
    meta = task.metadata
    fields = _metadata_fields(task, dataset_path)
    try:  # MTEB accepts a fixed list of licences: the task's own if it is one of them
        return mteb.TaskMetadata(license=meta.license.lower() or "not specified", **fields)
    except ValueError:  # pydantic's ValidationError
        several = " and " in meta.license.lower()
        return mteb.TaskMetadata(license="multiple" if several else "not specified", **fields)


def _metadata_fields(task: ProbingTask, dataset_path: str | None) -> dict[str, Any]:
    meta = task.metadata
    return dict(
        name=mteb_name_of(task),
        description=meta.description or f"sentprobe probing task {task.name}",
        reference=None,
        dataset={"path": dataset_path or f"sentprobe/{task.name}", "revision": task.content_hash()},
        type="Classification",
        category="t2c",
        modalities=["text"],
        eval_splits=["test"],
        eval_langs=[MTEB_LANGUAGES.get(meta.language, "und-Zyyy")],
        main_score="accuracy",
        date=None,
        domains=None,
        task_subtypes=None,
        annotations_creators="derived",
        dialect=[],
        sample_creation="found",
        bibtex_citation=bibtex(meta.citation),
    )


#: ``probe=`` default of :func:`to_mteb_task`: the task's own probe, as ``sentprobe run``.
TASK_PROBE = "task"


def _probe_scored(self: Any, model: Any, data_split: Any, **kwargs: Any) -> Any:
    """``_evaluate_subset`` of a task scored by a sentprobe probe: encode train, validation
    (where there is one) and the evaluated split with MTEB's ``model``, fit the probe on
    train (strength chosen on validation), score the split with MTEB's metrics."""
    from mteb._create_dataloaders import create_dataloader

    split, subset = kwargs["hf_split"], kwargs["hf_subset"]
    encode_kwargs = kwargs.get("encode_kwargs") or {}
    vectors, labels = {}, {}
    for name in dict.fromkeys(("train", "validation", split)):
        if name not in data_split:
            continue
        loader = create_dataloader(
            data_split[name],
            task_metadata=self.metadata,
            input_column=self.input_column_name,
            num_proc=kwargs.get("num_proc"),
            **encode_kwargs,
        )
        vectors[name] = np.asarray(
            model.encode(
                loader,
                task_metadata=self.metadata,
                hf_split=name,
                hf_subset=subset,
                **encode_kwargs,
            )
        )
        labels[name] = np.asarray(data_split[name][self.label_column_name])
    estimator = registry.probes.get(self.sentprobe_probe)(
        self.sentprobe_short_name, self.sentprobe_seed
    )
    dev = (vectors["validation"], labels["validation"]) if "validation" in vectors else ()
    estimator.fit(vectors["train"], labels["train"], *dev)
    predicted = estimator.predict(vectors[split])
    return self._calculate_avg_scores([self._calculate_scores(labels[split], predicted)])


def to_mteb_task(
    task: ProbingTask,
    *,
    probe: str | None = TASK_PROBE,
    seed: int = 0,
    samples_per_label: int | None = None,
    n_experiments: int = 1,
) -> Any:
    """One probing task as an MTEB classification task instance (see the module docstring):
    scored by the sentprobe ``probe`` (default: the task's own) with ``seed``, or with
    ``probe=None`` by MTEB's own classifier (``samples_per_label``, ``n_experiments``)."""
    datasets = require("datasets", "hf-datasets", "MTEB tasks")
    if task.folds or any(s.sentences2 is not None for s in task.splits.values()):
        raise SentprobeError(
            f"task {task.name}: only single-sentence tasks without folds become MTEB tasks"
        )
    labels = task.labels
    index = {label: i for i, label in enumerate(labels)}
    hub = {"train": "train", "dev": "validation", "test": "test"}
    largest = max(Counter(task.splits["train"].labels).values())

    def load_data(self: Any, num_proc: int | None = None, **kwargs: Any) -> None:
        if self.data_loaded:
            return
        self.dataset = datasets.DatasetDict(
            {
                hub[name]: datasets.Dataset.from_dict(
                    {"text": split.sentences, "label": [index[y] for y in split.labels]}
                )
                for name, split in task.splits.items()
            }
        )
        self.data_loaded = True

    scoring: dict[str, Any] = {}
    if probe is not None:
        name = (task.metadata.probe or "logreg") if probe == TASK_PROBE else probe
        registry.probes.get(name)  # an unknown name fails here, not inside mteb.evaluate
        scoring = {
            "sentprobe_probe": name,
            "sentprobe_short_name": task.metadata.paper_name or task.name,
            "sentprobe_seed": seed,
            "_evaluate_subset": _probe_scored,
        }
    cls = type(
        mteb_name_of(task).replace(".", "_").replace("-", "_"),
        (require("mteb.abstasks", _EXTRA, "MTEB tasks").AbsTaskClassification,),
        {
            "metadata": mteb_metadata(task),
            "samples_per_label": samples_per_label or largest,
            "n_experiments": n_experiments,
            "load_data": load_data,
            **scoring,
            "__doc__": f"The sentprobe probing task {task.name} (content hash "
            f"{task.content_hash()}).",
        },
    )
    return cls()


def to_mteb_tasks(
    spec: str | Sequence[str] | Sequence[ProbingTask],
    *,
    probe: str | None = TASK_PROBE,
    seed: int = 0,
    samples_per_label: int | None = None,
    n_experiments: int = 1,
) -> list[Any]:
    """The tasks ``spec`` names (anything ``-t`` takes, or loaded tasks) as MTEB tasks, for
    ``mteb.evaluate(model, tasks)``; ``probe``, ``seed`` and the rest as :func:`to_mteb_task`."""
    from sentprobe.datasets.builtin import resolve_tasks

    if spec and not isinstance(spec, str) and isinstance(spec[0], ProbingTask):
        tasks = [t for t in spec if isinstance(t, ProbingTask)]
    else:
        tasks = resolve_tasks(spec)  # type: ignore[arg-type]
    return [
        to_mteb_task(
            t,
            probe=probe,
            seed=seed,
            samples_per_label=samples_per_label,
            n_experiments=n_experiments,
        )
        for t in tasks
    ]


def probing_metadata() -> Any:
    """The MTEB ``TaskMetadata`` that sentprobe passes to an MTEB model's ``encode`` when it
    probes one (``-e mteb:NAME``): one for every task, so an instruction-tuned model gets the
    same prompt (MTEB's classification default) on every task and cached vectors are shared."""
    from sentprobe.datasets.task import Split, TaskMetadata

    stand_in = ProbingTask(
        TaskMetadata(name="probing", language="und", description="sentprobe probing"),
        {"train": Split(["."], ["0"]), "test": Split(["."], ["0"])},
    )
    return mteb_metadata(stand_in, dataset_path="sentprobe/probing")
