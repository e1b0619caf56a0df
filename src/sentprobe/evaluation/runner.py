"""Run the probing experiment: every (row, task, seed) unit encoded, probed and stored once.

A *row* of the results table is either an encoder (its vectors go to a probe) or a text
baseline (Majority, NB-tfidf: a classifier on the raw sentences). Each unit's result is
committed to the results store as soon as it exists and embeddings go to the on-disk cache,
so a run that is interrupted and started again skips finished units and encodes nothing twice.

Long because every kind of unit (text baselines, encoders with views, seeds and restarts,
cross-validated and zero-shot tasks whose protocol lives in evaluation/folds.py) goes through
the one loop that derives unit keys, skips finished units and records results: split up, the
key rules would be repeated in several modules.
"""

from __future__ import annotations

import json
import os
import time
import warnings
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from sentprobe import __version__, registry
from sentprobe.datasets import ProbingTask, resolve_tasks
from sentprobe.datasets.controls import (
    ControlTask,
    control_ceiling,
    control_tasks,
    controlled_name,
    controls_after_their_tasks,
    is_control,
)
from sentprobe.datasets.identity import task_source
from sentprobe.datasets.loaders.nli import NLIPairs, load_nli_pairs
from sentprobe.encoders import expand_encoder_spec as expand
from sentprobe.encoders import get_encoder
from sentprobe.encoders.base import Encoder, WrappedEncoder
from sentprobe.encoders.cache import EmbeddingCache
from sentprobe.encoders.custom import CallableEncoder
from sentprobe.errors import SentprobeError
from sentprobe.evaluation.baselines import baseline_names, default_baselines
from sentprobe.evaluation.erasure import (
    CONTROL_SEEDS,
    ErasedEncoder,
    ErasingCache,
    check_erasable,
    erased_tasks,
    heldout_task,
)
from sentprobe.evaluation.executors import check_executor, failure_line, report_failure, run_ray
from sentprobe.evaluation.folds import (
    ZERO_SHOT,
    HeadCache,
    check_heuristic_labels,
    cross_validate,
    protocol,
    protocol_signature,
    train_head,
    without_evaluated_pairs,
    zero_shot,
)
from sentprobe.evaluation.intervention import (
    CONTROL_SEEDS as INTERVENE_CONTROLS,
)
from sentprobe.evaluation.intervention import (
    Reader,
    all_layers,
    check_intervenable,
    held_out,
    intervened_tasks,
    interventions,
)
from sentprobe.evaluation.memory import MemoryStore
from sentprobe.evaluation.predictions import Predictions
from sentprobe.evaluation.provenance import foreign_reason
from sentprobe.evaluation.shards import SHARD_META, PositionedStore, plan, plan_id
from sentprobe.evaluation.store import ResultRecord, ResultsStore, unit_key
from sentprobe.evaluation.stream import adopt_view, check_streamable, stream_task
from sentprobe.io import check_writable_dir
from sentprobe.probes import make_probe
from sentprobe.probes.baselines import MajorityProbe
from sentprobe.probes.closed_form import RidgeProbe
from sentprobe.probes.devices import resolve_device
from sentprobe.progress import tqdm
from sentprobe.registry import Baseline

DEFAULT_RESULTS = Path("sentprobe-results") / "results.sqlite"

#: What ``run``/``evaluate`` take as encoders: one name, ``Encoder`` or function (sentences ->
#: (n, d) array), a list of them, or a mapping from name to that encoder's own options.
EncoderSpec = str | Encoder | Callable[[list[str]], Any]
EncoderSpecs = EncoderSpec | Sequence[EncoderSpec] | Mapping[str, Mapping[str, Any]]


def default_cache_dir() -> Path:
    """``$SENTPROBE_CACHE``, else ``~/.cache/sentprobe/embeddings``: shared by all runs.
    Absolute (``~`` expanded): a Ray worker must get this machine's path, not its own home."""
    env = os.environ.get("SENTPROBE_CACHE")
    path = Path(env).expanduser() if env else Path.home() / ".cache" / "sentprobe" / "embeddings"
    return path.absolute()


def expand_baselines(
    spec: str | Sequence[str] | None, tasks: Sequence[ProbingTask] = ()
) -> list[str]:
    """``all``, ``none``, ``default`` or a comma-separated list of registered baseline names
    (``sentprobe.registry.baselines``). ``default`` is the fast SentEval baselines, plus the
    controls the tasks' papers report (``TaskMetadata.baselines``); when every task declares
    its controls (Kim et al. 2019), just those."""
    declared = list(dict.fromkeys(b for t in tasks for b in t.metadata.baselines))
    if tasks and all(t.metadata.baselines for t in tasks):
        defaults = declared
    else:
        defaults = list(dict.fromkeys([*default_baselines(), *declared]))
    if spec is None:
        return defaults
    items = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
    out: list[str] = []
    for item in items:
        if item == "all":
            out += baseline_names()
        elif item == "default":
            out += defaults
        elif item in ("none", ""):
            continue
        elif item in registry.baselines:
            out.append(item)
        else:
            known = ", ".join(["all", "default", "none", *baseline_names()])
            raise SentprobeError(f"unknown baseline {item!r}; known: {known}")
    return list(dict.fromkeys(out))


def _short_name(task: ProbingTask) -> str:
    return task.metadata.paper_name or task.name


def _task_source(task: ProbingTask) -> str:
    """The stored source: a path task's resolved path, a suite's name (datasets/identity.py)."""
    return task_source(task)


def _signature(estimator: Any) -> str:
    # neither the seed (a unit's own key field) nor the device (--probe-device: the same
    # model up to float rounding) makes another unit
    skip = ("random_state", "device")
    params = sorted((k, repr(v)) for k, v in estimator.get_params().items() if k not in skip)
    return f"{type(estimator).__name__}{params}"


def probe_version(estimator: Any) -> str:
    """The probe's own ``version`` (bumped when its code changes results); part of unit keys."""
    return str(getattr(estimator, "version", "0"))


def uses_seed(estimator: Any) -> bool:
    """Whether a fitted probe's result depends on its seed (assumed, unless it says not)."""
    return bool(getattr(estimator, "uses_seed", True))


class _Prepared(WrappedEncoder):
    """An encoder already prepared for the sentences it is given: the cache's ``prepare``
    call is dropped, everything else is the wrapped encoder's."""

    def prepare(self, sentences: Sequence[str]) -> None:
        pass


def _predict(estimator: Any, X: Any, task: ProbingTask) -> Predictions:
    """The fitted ``estimator``'s predictions on the task's test split (X: its inputs)."""
    test = task.splits["test"]
    return Predictions.from_labels(
        test.labels,
        estimator.predict(X),
        task.labels,
        getattr(test, "groups", None),
        getattr(test, "clusters", None),
    )


_CEILINGS: dict[str, float | None] = {}


def _ceiling(task: ProbingTask) -> float | None:
    """``control_ceiling`` of a control task, computed once per task data (every row and seed
    of a run records it)."""
    if task.content_hash() not in _CEILINGS:
        # the keys are known only to the control task built with them
        ceiling = control_ceiling(task) if isinstance(task, ControlTask) else None
        _CEILINGS[task.content_hash()] = ceiling
    return _CEILINGS[task.content_hash()]


def _unit_seeds(task: ProbingTask, seeds: Sequence[int]) -> list[int]:
    """The seeds of ``seeds`` a task is probed with: a control task drawn with seed ``s``
    (``ControlTask.map_seed``) only with seed ``s``, so seed ``s``'s control record pairs
    with seed ``s``'s task record and a probe without a seed still fits once per map."""
    drawn = getattr(task, "map_seed", None)
    return list(seeds) if drawn is None else [s for s in seeds if s == drawn]


def _probe_checks(encoder: Encoder, task: ProbingTask) -> dict[str, Any]:
    """``extra`` entries for every result of ``task``: what ``encoder`` says about how it
    reads the test sentences (a trained run's unknown words, a student's language)."""
    checks = encoder.probe_checks(task.splits["test"].sentences, task.metadata.language)
    return {"probe_checks": checks} if checks else {}


class Runner:
    """Runs rows x tasks x seeds into a results store. Build with ``run`` or use directly."""

    def __init__(
        self,
        tasks: list[ProbingTask],
        *,
        probe: str | None = "logreg",
        seeds: int = 1,
        store: ResultsStore | MemoryStore,
        cache: EmbeddingCache,
        progress: bool = True,
        nli_train: NLIPairs | None = None,
    ) -> None:
        """``probe`` None: each task's own (``TaskMetadata.probe``), else logreg.
        ``nli_train``: the pairs NLI heads learn from (NLI-format tasks, evaluation/folds.py)."""
        self.tasks, self.probe, self.seeds = tasks, probe, seeds
        self.store, self.cache, self.progress = store, cache, progress
        self.nli_train = nli_train
        self.heads = HeadCache(None if cache.root is None else cache.root / "nli-heads")
        self.keys: list[str] = []
        self._warned_foreign = False  # said that results of another version are recomputed
        #: reuse results made by other code or versions (provenance.py) instead of recomputing
        self.keep_foreign = False
        #: Where the probes that take a device train (``--probe-device``: cpu, cuda, auto).
        self.probe_device: str | None = None
        #: Probe each view as it is encoded (ridge from statistics), nothing cached.
        self.stream = False
        #: Probe only these views (indices into ``encoder.views``): a Ray job's share of a
        #: ``--layer all`` row (evaluation/executors.py); None: every view.
        self.only_views: set[int] | None = None

    # -- shared bookkeeping ---------------------------------------------------------------
    def _make_probe(self, probe: str, task: str, seed: int) -> Any:
        """``make_probe``, with ``--probe-device`` when one was given."""
        if self.probe_device is None:
            return make_probe(probe, task, seed)
        return make_probe(probe, task, seed, device=self.probe_device)

    def _done(self, key: str) -> bool:
        """The unit is stored by this installation's code and versions. A result made by
        another (provenance.py: version, source, a decisive library's major.minor) is computed
        again, not silently reused, unless ``keep_foreign``."""
        record = self.store.get(key)
        reason = None if record is None else foreign_reason(record.extra)
        if reason is None or self.keep_foreign:
            return record is not None
        if not self._warned_foreign:  # once per run
            self._warned_foreign = True
            warnings.warn(
                f"{getattr(self.store, 'path', 'results store')}: stored results made by "
                f"{reason} are computed again by sentprobe {__version__}, not reused "
                "(--keep-other-versions reuses them)",
                stacklevel=2,
            )
        return False

    def _record(
        self,
        key: str,
        task: ProbingTask,
        predictions: Predictions,
        constant: bool = False,
        **fields: Any,
    ) -> None:
        """Store a unit's record. Unless the probe is ``constant`` by design (Majority), its
        ``extra`` gets what tells whether the probe says nothing (reporting/tables.py): how
        many classes it predicted on test, the dev split's majority rate, and how likely its
        test hits are from a constant guess (test majority share, one-sided binomial p)."""
        splits = task.splits
        values: dict[str, Any] = {  # defaults; a fold unit gives its own (evaluation/folds.py)
            "n_train": len(splits["train"]),
            "n_dev": len(splits["dev"]) if "dev" in splits else 0,
            "n_test": len(splits["test"]),
            "test_score": predictions.accuracy,
        }
        values.update(fields)
        if not constant:
            facts: dict[str, Any] = {
                "predicted_classes": len(set(predictions.predicted_labels())),
                "test_majority": predictions.majority_share,
                "p_above_majority": predictions.p_above_majority(),
            }
            dev = splits["dev"].labels if "dev" in splits else []
            if dev:
                facts["dev_majority"] = Counter(dev).most_common(1)[0][1] / len(dev)
            values["extra"] = {**values.get("extra", {}), **facts}
        if is_control(task.name):  # what a perfect memoriser of the control function scores
            values["extra"] = {
                **values.get("extra", {}),
                "control_ceiling": _ceiling(task),
                "control_seed": getattr(task, "map_seed", 0),
                "control_permutes": bool(getattr(task, "permutes", False)),
                "control_agreement": getattr(task, "agreement", None),
                "control_agreement_with": {
                    str(j): v for j, v in getattr(task, "agreement_with", {}).items()
                },
            }
        rec = ResultRecord(
            task=_short_name(task),
            task_source=_task_source(task),
            task_hash=task.content_hash(),
            category=task.metadata.category,
            language=task.metadata.language,
            n_classes=len(task.labels),
            warnings=list(task.warnings),
            **values,
        )
        self.store.add(rec, key, predictions)

    def _bar(self, total: int, desc: str):
        return tqdm(total=total, desc=desc, unit="probe", disable=not self.progress, leave=False)

    def _unit_signature(self, probe: str, est: Any, task: ProbingTask) -> str:
        signature = f"{probe}:{_signature(est)}:v{probe_version(est)}"
        return signature + protocol_signature(task, self.nli_train)

    def _text_signature(self, est: Any, task: ProbingTask) -> str:
        return f"{_signature(est)}:v{probe_version(est)}" + protocol_signature(task, self.nli_train)

    def _match_control(
        self,
        est: Any,
        task: ProbingTask,
        fp: str,
        seed: int,
        probe: str = "logreg",
        baseline: Baseline | None = None,
    ) -> None:
        """Probe a control task with the configuration its task's probe chose (Hewitt & Liang
        compare task and control at the same hyperparameters; one configuration instead of a
        grid also makes controls cheap). Only when the task's unit with the same row (an
        encoder view with ``probe``, or a text ``baseline``) and seed is stored; the
        configuration then enters the control unit's key."""
        if not is_control(task.name):
            return
        real = next((t for t in self.tasks if t.name == controlled_name(task.name)), None)
        if real is None:
            return
        if baseline is not None:
            signature = self._text_signature(baseline.make(), real)
        else:
            signature = self._unit_signature(
                probe, make_probe(probe, _short_name(real), seed), real
            )
        record = self.store.get(unit_key(fp, real.content_hash(), signature, seed, real.name))
        if record is None:  # a task probe without a seed is stored under seed 0 only
            fixed = self.store.get(unit_key(fp, real.content_hash(), signature, 0, real.name))
            record = fixed if fixed is not None and fixed.extra.get("seeded") is False else None
        if record is not None and record.config and set(record.config) <= set(est.get_params()):
            est.set_params(**record.config)

    def _deterministic(self, key: str) -> bool:
        """The stored unit ``key`` said nothing in it depends on the seed."""
        record = self.store.get(key)
        return record is not None and record.extra.get("seeded") is False

    def _fold_unit(
        self,
        key: str,
        task: ProbingTask,
        make: Any,
        lookup: Any,
        signature: str,
        **fields: Any,
    ) -> None:
        """A unit of a task with folds: cross-validated, or zero-shot by a cached NLI head
        (see evaluation/folds.py); ``make()`` builds a fresh estimator, ``lookup`` maps
        sentences to its inputs."""
        start, seed = time.perf_counter(), int(fields["seed"])
        name = protocol(task, self.nli_train)
        if name == ZERO_SHOT and self.nli_train is not None:
            pairs = self.nli_train
            head_key = HeadCache.key(fields["encoder_fingerprint"], pairs, signature, seed)
            head, cached = self.heads.get(head_key, lambda: train_head(pairs, lookup, make(), seed))
            outcome = zero_shot(task, lookup, head, pairs)
            outcome.extra["head_cached"] = cached
        else:
            outcome = cross_validate(task, lookup, make, name or "folds")
        extra = {**fields.pop("extra", {}), **outcome.extra}
        seconds = time.perf_counter() - start
        self._record(
            key,
            task,
            outcome.predictions,
            probe_seconds=seconds,
            extra=extra,
            **fields,
            **outcome.fields(),
        )

    # -- text baselines ---------------------------------------------------------------------
    def run_text_baseline(self, baseline: Baseline) -> None:
        fingerprint = f"baseline:{baseline.label}:{baseline.version}"
        tasks = controls_after_their_tasks(self.tasks)
        total = sum(len(_unit_seeds(t, range(self.seeds))) for t in tasks)
        with self._bar(total, baseline.label) as bar:
            for task in tasks:
                seeds = _unit_seeds(task, range(self.seeds))
                for seed in seeds:
                    est = baseline.make()
                    self._match_control(est, task, fingerprint, seed, baseline=baseline)
                    signature = self._text_signature(est, task)
                    key = unit_key(fingerprint, task.content_hash(), signature, seed, task.name)
                    self.keys.append(key)
                    unit = {
                        "encoder": baseline.label,
                        "encoder_fingerprint": fingerprint,
                        "seed": seed,
                        "probe": type(est).__name__,
                    }
                    if protocol(task, self.nli_train) is not None and not self._done(key):
                        extra = {"seeded": uses_seed(est), "seeds": self.seeds}
                        self._fold_unit(
                            key, task, baseline.make, list, signature, extra=extra, **unit
                        )
                    elif not self._done(key):
                        # train and test are required (the loaders check), dev is optional
                        tr, te = task.splits["train"], task.splits["test"]
                        dv = task.splits.get("dev")
                        start = time.perf_counter()
                        est.fit(tr.sentences, tr.labels, *((dv.sentences, dv.labels) if dv else ()))
                        predictions = _predict(est, te.sentences, task)
                        self._record(
                            key,
                            task,
                            predictions,
                            constant=isinstance(est, MajorityProbe),
                            **unit,
                            selection=est.selection_,
                            config=est.best_params_,
                            dev_score=est.best_score_,
                            dim=0,
                            probe_seconds=time.perf_counter() - start,
                            extra={
                                "seeded": uses_seed(est),
                                "seeds": self.seeds,
                                "probe_version": probe_version(est),
                            },
                        )
                    bar.update()
                    if seed == 0 and self._deterministic(key):  # other seeds: the same result
                        bar.update(len(seeds) - 1)
                        break

    # -- encoders ---------------------------------------------------------------------------
    def run_encoder(
        self, encoder: Encoder, probe: str | None = None, seeds: int | None = None
    ) -> None:
        """Probe ``encoder`` on every task and seed; a seeded encoder (``uses_seed``) is drawn
        anew for each seed, a ``prepare_per_task`` one is prepared on each task's sentences.
        ``seeds``: this row's own number of seeds (a baseline's restarts), else the run's."""
        probe = probe or self.probe
        seed_list = list(range(seeds or self.seeds))
        draws = [(enc, [s]) for s in seed_list for enc in [encoder.with_seed(s)]]
        # each seed's draw has a fingerprint of its own; its results are seeds of one row
        row = encoder.fingerprint if encoder.uses_seed else None
        for enc, enc_seeds in draws if encoder.uses_seed else [(encoder, seed_list)]:
            if enc.prepare_per_task:
                for task in self.tasks:
                    enc.prepare_task(task.sentences())  # train + dev + test, as SentEval
                    self._run_units(enc, probe, [task], enc_seeds, row)
            else:
                self._run_units(enc, probe, self.tasks, enc_seeds, row)

    def _run_units(
        self,
        encoder: Encoder,
        row_probe: str | None,
        tasks: list[ProbingTask],
        seeds: list[int],
        row_fp: str | None = None,
    ) -> None:
        """``row_fp``: the fingerprint of the row a seeded draw belongs to (stored with each
        result as ``extra["row_fingerprint"]``, its view appended; evaluation/identity.py)."""
        controls = [t for t in tasks if is_control(t.name)]
        if controls and len(controls) < len(tasks):  # tasks first: controls use their choice
            rest = [t for t in tasks if not is_control(t.name)]
            self._run_units(encoder, row_probe, rest, seeds, row_fp)
            self._run_units(encoder, row_probe, controls, seeds, row_fp)
            return
        views: Sequence[str | None] = encoder.views or [None]
        pending: list[tuple[ProbingTask, int, str, int, str, Any]] = []
        for task in tasks:
            for v, view in enumerate(views):
                if self.only_views is not None and v not in self.only_views:
                    continue
                fp = encoder.fingerprint if view is None else f"{encoder.fingerprint}#{view}"
                for seed in _unit_seeds(task, seeds):
                    probe = row_probe or task.metadata.probe or "logreg"
                    est = self._make_probe(probe, _short_name(task), seed)
                    self._match_control(est, task, fp, seed, probe=probe)
                    signature = self._unit_signature(probe, est, task)
                    key = unit_key(fp, task.content_hash(), signature, seed, task.name)
                    if not self._done(key):
                        pending.append((task, v, fp, seed, key, est))
                        continue
                    self.keys.append(key)
                    if seed == 0 and not encoder.uses_seed and self._deterministic(key):
                        break
        if not pending:
            return

        todo = {id(p[0]): p[0] for p in pending}.values()
        checks = {id(t): _probe_checks(encoder, t) for t in todo}

        def row_of(v: int, task: ProbingTask) -> dict[str, Any]:
            if isinstance(encoder, ErasedEncoder):  # what was erased, the rank removed
                return {"erasure": encoder.erasure(v)}
            if hasattr(encoder, "unit_extra"):  # an intervention (evaluation/intervention.py)
                return cast("dict[str, Any]", encoder.unit_extra(v, task))
            if row_fp is None:
                return {}
            return {"row_fingerprint": row_fp if views[v] is None else f"{row_fp}#{views[v]}"}

        if self.stream and all(isinstance(p[5], RidgeProbe) for p in pending):
            self._stream_units(encoder, row_probe, pending, views, checks, row_of)
            return
        needed = list(dict.fromkeys(s for t in todo for s in t.sentences()))
        pairs = self.nli_train
        if pairs is not None and any(protocol(t, pairs) == ZERO_SHOT for t in todo):
            needed = list(dict.fromkeys([*needed, *pairs.premises, *pairs.hypotheses]))
        start = time.perf_counter()
        # A per-task encoder is already prepared on the whole task: the cache must not
        # re-prepare it on the uncached subset.
        source = _Prepared(encoder) if encoder.prepare_per_task else encoder
        # Read a view at a time from the memory-mapped cache: one layer in memory at once.
        vectors = self.cache.vectors(
            source, needed, progress=encoder.name if self.progress else False
        )
        per_sentence = (time.perf_counter() - start) / max(len(needed), 1)
        row = {s: i for i, s in enumerate(needed)}

        fixed: set[tuple[int, int]] = set()  # (task, view) found not to depend on the seed
        with self._bar(len(pending), f"probing {encoder.name}") as bar:
            for task, v, fp, seed, key, est in pending:
                if (id(task), v) in fixed:
                    bar.update()
                    continue
                probe = row_probe or task.metadata.probe or "logreg"
                if protocol(task, self.nli_train) is not None:
                    view = views[v]
                    self._fold_unit(
                        key,
                        task,
                        lambda p=probe, t=task, s=seed: self._make_probe(p, _short_name(t), s),
                        lambda sents, v=v: vectors.take(
                            np.fromiter((row[s] for s in sents), np.int64, len(sents)), v
                        ),
                        f"{probe}:{_signature(est)}:v{probe_version(est)}",  # the head's
                        encoder=encoder.name if view is None else f"{encoder.name}@{view}",
                        encoder_fingerprint=fp,
                        seed=seed,
                        probe=probe,
                        encode_seconds=per_sentence * len(task.sentences()),
                        extra={
                            "seeded": True,
                            "seeds": self.seeds,
                            "probe_version": probe_version(est),
                            **checks[id(task)],
                            **row_of(v, task),
                        },
                    )
                    self.keys.append(key)
                    bar.update()
                    continue
                X = {}
                for name, split in task.splits.items():
                    idx = np.fromiter((row[s] for s in split.sentences), dtype=np.int64)
                    X[name] = vectors.take(idx, v)
                tr, dv = task.splits["train"], task.splits.get("dev")
                t0 = time.perf_counter()
                est.fit(X["train"], tr.labels, *((X["dev"], dv.labels) if dv else ()))
                predictions = _predict(est, X["test"], task)
                view = views[v]
                label = encoder.name if view is None else f"{encoder.name}@{view}"
                seeded = encoder.uses_seed or uses_seed(est)
                self._record(
                    key,
                    task,
                    predictions,
                    encoder=label,
                    encoder_fingerprint=fp,
                    seed=seed,
                    probe=probe,
                    selection=est.selection_,
                    config=est.best_params_,
                    dev_score=est.best_score_,
                    dim=int(X["train"].shape[1]),
                    encode_seconds=per_sentence * len(task.sentences()),
                    probe_seconds=time.perf_counter() - t0,
                    extra={
                        "grid": [[c, s] for c, s in getattr(est, "grid_scores_", [])],
                        "n_iter": getattr(est, "n_iter_", None),
                        "seeded": seeded,
                        "seeds": self.seeds,
                        "probe_version": probe_version(est),
                        **getattr(est, "report_", {}),  # e.g. MDL's codelength
                        **checks[id(task)],
                        **row_of(v, task),
                    },
                )
                self.keys.append(key)
                if seed == 0 and not seeded:
                    fixed.add((id(task), v))
                bar.update()

    def _stream_units(
        self,
        encoder: Encoder,
        row_probe: str | None,
        pending: list[tuple[ProbingTask, int, str, int, str, Any]],
        views: Sequence[str | None],
        checks: dict[int, dict[str, Any]],
        row_of: Callable[[int, ProbingTask], dict[str, Any]],
    ) -> None:
        """``--stream``: each task's pending views probed by ridge from statistics summed
        while its sentences are encoded, no vector stored (evaluation/stream.py)."""
        by_task: dict[int, list[tuple[ProbingTask, int, str, int, str, Any]]] = {}
        for unit in pending:
            task, _, _, _, _, est = unit
            probe = row_probe or task.metadata.probe or "logreg"
            check_streamable(task, est, probe, protocol(task, self.nli_train))
            by_task.setdefault(id(task), []).append(unit)
        if not encoder.prepare_per_task:
            encoder.prepare(
                list(dict.fromkeys(s for t in by_task.values() for s in t[0][0].sentences()))
            )
        for units in by_task.values():
            task = units[0][0]
            solution, dev_codes, test_codes, seconds = stream_task(
                encoder, task, len(views), units[0][5], progress=self.progress
            )
            dv, te = task.splits["dev"], task.splits["test"]
            done: set[int] = set()
            for _, v, fp, seed, key, est in units:
                if v in done:
                    continue
                best = adopt_view(est, solution, v, dev_codes, dv.labels)
                predicted = solution.classes[test_codes[:, v, best]]
                predictions = Predictions.from_labels(
                    te.labels, predicted, task.labels,
                    getattr(te, "groups", None), getattr(te, "clusters", None),
                )  # fmt: skip
                view = views[v]
                seeded = encoder.uses_seed or uses_seed(est)
                self._record(
                    key,
                    task,
                    predictions,
                    encoder=encoder.name if view is None else f"{encoder.name}@{view}",
                    encoder_fingerprint=fp,
                    seed=seed,
                    probe=row_probe or task.metadata.probe or "logreg",
                    selection=est.selection_,
                    config=est.best_params_,
                    dev_score=est.best_score_,
                    dim=int(est.n_features_in_),
                    encode_seconds=seconds["encode"] / len(views),
                    probe_seconds=seconds["probe"] / len(views),
                    extra={
                        "grid": [[c, s] for c, s in est.grid_scores_],
                        "n_iter": est.n_iter_,
                        "seeded": seeded,
                        "seeds": self.seeds,
                        "probe_version": probe_version(est),
                        "streamed": True,
                        **checks[id(task)],
                        **row_of(v, task),
                    },
                )
                self.keys.append(key)
                if not seeded:
                    done.add(v)

    def run_row(
        self, row: Baseline | Encoder, probe: str | None = None, seeds: int | None = None
    ) -> None:
        """One row of the table on every task: a text baseline, or an encoder with its own
        probe and number of seeds (None: the run's)."""
        if isinstance(row, Baseline):
            self.run_text_baseline(row)
        else:
            self.run_encoder(row, probe=probe, seeds=seeds)

    def frame(self) -> pd.DataFrame:
        """The records of this run's units (older runs stay in the store)."""
        frame = self.store.to_frame()
        return frame[frame["key"].isin(set(self.keys))].reset_index(drop=True)


@dataclass
class RunPlan:
    """What a run computes, every input checked: the tasks (controls added), the rows of the
    table (a text baseline or an encoder, with its own probe and number of seeds), the run's
    probe (None: each task's own) and seeds, and the NLI training pairs."""

    tasks: list[ProbingTask]
    rows: list[tuple[Baseline | Encoder, str | None, int | None]]
    probe: str | None
    seeds: int
    nli_train: NLIPairs | None
    #: The tasks whose property is erased (``--erase``) from each encoder of ``erase_rows``,
    #: the splits the eraser is fit on and the number of random controls (seeds 0, 1, ...).
    erase: list[ProbingTask] = field(default_factory=list)
    erase_rows: list[Encoder] = field(default_factory=list)
    erase_fit: str = "train"
    erase_controls: int = CONTROL_SEEDS
    #: The tasks whose property is edited out inside the forward pass (``--intervene``) of
    #: each encoder of ``intervene_rows``, and the random controls per layer.
    intervene: list[ProbingTask] = field(default_factory=list)
    intervene_rows: list[Encoder] = field(default_factory=list)
    intervene_controls: int = INTERVENE_CONTROLS


def plan_run(
    encoders: EncoderSpecs,
    tasks: str | Sequence[str] | Sequence[ProbingTask],
    *,
    baselines: str | Sequence[str] | None = None,
    probe: str | None = None,
    seeds: int = 1,
    encoder_options: dict[str, Any] | None = None,
    controls: bool = False,
    nli_train: str | Path | None = None,
    allow_heuristic_labels: bool = False,
    keep_nli_overlap: bool = False,
    erase: Sequence[str] = (),
    erase_fit: str = "train",
    erase_controls: int = CONTROL_SEEDS,
    intervene: Sequence[str] = (),
    intervene_controls: int = INTERVENE_CONTROLS,
) -> RunPlan:
    """Load and check everything a run needs before it computes anything (see :func:`run`)."""
    if seeds < 1:
        raise SentprobeError("--seeds must be at least 1")
    if erase_controls < 1:
        raise SentprobeError("--erase-controls must be at least 1")
    task_list: list[ProbingTask]
    if tasks and not isinstance(tasks, str) and isinstance(tasks[0], ProbingTask):
        task_list = list(cast("Sequence[ProbingTask]", tasks))  # loaded tasks: the first decides
    else:
        task_list = resolve_tasks(cast("str | Sequence[str]", tasks))
    task_list = check_heuristic_labels(task_list, allow_heuristic_labels)
    erased = erased_tasks(erase, task_list, erase_fit)
    intervened = intervened_tasks(intervene, task_list)
    if intervene_controls < 1:
        raise SentprobeError("--intervene-controls must be at least 1")
    rows: list[tuple[Baseline | Encoder, str | None, int | None]] = []
    for name in expand_baselines(baselines, task_list):
        item = registry.baselines.get(name)
        made = item if item.kind == "text" else item.make()
        rows.append((made, item.probe, item.restarts))
    if isinstance(encoders, (str, Encoder)) or callable(encoders):
        encoders = [encoders]
    # a mapping gives each encoder its own options, on top of the common encoder_options
    named = encoders.items() if isinstance(encoders, Mapping) else ((s, {}) for s in encoders)
    n_baselines = len(rows)
    for spec, own in named:
        if isinstance(spec, Encoder):
            rows.append((spec, None, None))
            continue
        given = {**(encoder_options or {}), **own}
        if not isinstance(spec, str) and hasattr(spec, "encode"):  # a SentenceTransformer
            rows.append((get_encoder(spec, **given), None, None))
            continue
        if callable(spec):  # a function from sentences to vectors
            rows.append((CallableEncoder(spec), None, None))
            continue
        for one in expand(spec):  # 'runs/*@all' names every training run it matches
            rows.append((get_encoder(one, **given), None, None))
    for made, *_ in rows[n_baselines:]:  # a mistyped Hub name fails before any work
        check = getattr(made, "check_loadable", None)
        if check is not None:
            check()
    encoder_rows = [r[0] for r in rows[n_baselines:]] if erased else []
    for row in encoder_rows:
        check_erasable(cast("Encoder", row))
    intervene_rows = [r[0] for r in rows[n_baselines:]] if intervened else []
    for row in intervene_rows:
        check_intervenable(cast("Encoder", row))
    if controls:  # a control map per seed of the row with the most seeds (restarts included)
        maps = max([seeds, *(r[2] or 0 for r in rows)])
        task_list += [c for t in task_list for c in control_tasks(t, maps)]
    if probe is not None:
        make_probe(probe, "check")  # an unknown probe name fails before anything is written
    pairs = load_nli_pairs(nli_train) if nli_train is not None else None
    if pairs is not None and not keep_nli_overlap:
        pairs = without_evaluated_pairs(pairs, task_list)
    return RunPlan(
        task_list, rows, probe, seeds, pairs, erased, cast("list[Encoder]", encoder_rows),
        erase_fit, erase_controls, intervened, cast("list[Encoder]", intervene_rows),
        intervene_controls,
    )  # fmt: skip


def execute(
    units: RunPlan,
    store: ResultsStore | MemoryStore,
    cache: EmbeddingCache,
    *,
    progress: bool = True,
    executor: str = "local",
    shard: tuple[int, int] | None = None,
    keep_going: bool = False,
    keep_foreign: bool = False,
    probe_device: str | None = None,
    stream: bool = False,
) -> pd.DataFrame:
    """Compute ``units`` into ``store`` (units it holds already are skipped) and
    return their records; ``attrs["failures"]``: the pairs ``keep_going`` went past;
    ``keep_foreign``: reuse stored units made by other code or versions."""
    runner = Runner(
        units.tasks,
        probe=units.probe,
        seeds=units.seeds,
        store=store,
        cache=cache,
        progress=progress,
        nli_train=units.nli_train,
    )
    runner.keep_foreign = keep_foreign
    runner.probe_device = probe_device
    runner.stream = stream
    if executor == "local":
        options = [units.probe, units.seeds, units.nli_train and units.nli_train.sha]
        failures = _run_local(runner, units.rows, shard, keep_going, options)
    else:
        failures = run_ray(
            executor, runner, units.rows, cast("ResultsStore", store), keep_going=keep_going
        )
    if units.erase:
        runner.keys += _run_erasures(units, store, cache, progress)
    if units.intervene:
        runner.keys += _run_interventions(units, store, cache, progress)
    frame = runner.frame()
    frame.attrs["failures"] = failures
    return frame


def _run_erasures(
    units: RunPlan, store: ResultsStore | MemoryStore, cache: EmbeddingCache, progress: bool
) -> list[str]:
    """Each encoder of ``units.erase_rows`` probed again on every task with each erased
    task's property removed, and with each equal-rank random control; the erased task also
    by its held-out check (evaluation/erasure.py). The plain vectors come from ``cache`` once
    per encoder. Returns the units' keys."""
    keys: list[str] = []
    sentences = [s for t in units.tasks for s in t.sentences()]
    if units.nli_train is not None:
        sentences += [*units.nli_train.premises, *units.nli_train.hypotheses]
    sentences = list(dict.fromkeys(sentences))
    index = {s: i for i, s in enumerate(sentences)}
    for encoder in units.erase_rows:
        base = cache.vectors(encoder, sentences, progress=encoder.name if progress else False)
        for task in units.erase:
            leace = ErasedEncoder(encoder, task, "leace", base, index, fit=units.erase_fit)
            check = ErasedEncoder(encoder, task, "leace", base, index, leace=leace, check=True)
            jobs: list[tuple[ErasedEncoder, list[ProbingTask]]] = [(leace, units.tasks)]
            for seed in range(units.erase_controls):
                control = ErasedEncoder(encoder, task, "random", base, index, seed, leace)
                jobs.append((control, units.tasks))
            jobs.append((check, [heldout_task(task, units.erase_fit)]))
            for erased, tasks in jobs:
                runner = Runner(
                    tasks, probe=units.probe, seeds=units.seeds, store=store,
                    cache=ErasingCache(), progress=progress, nli_train=units.nli_train,
                )  # fmt: skip
                runner.run_encoder(erased)
                keys += runner.keys
    return keys


def _run_interventions(
    units: RunPlan, store: ResultsStore | MemoryStore, cache: EmbeddingCache, progress: bool
) -> list[str]:
    """Each encoder of ``units.intervene_rows`` with each intervened task's property edited
    out at each layer it reads, and each equal-rank random control, probed on every task
    (evaluation/intervention.py). The plain vectors (every layer) come from ``cache``, the
    intervened ones go to it under their own fingerprints. Returns the units' keys."""
    keys: list[str] = []
    sentences = list(dict.fromkeys(s for t in units.tasks for s in t.sentences()))
    index = {s: i for i, s in enumerate(sentences)}
    for encoder in units.intervene_rows:
        chosen = check_intervenable(encoder)
        plain = all_layers(chosen)
        base = cache.vectors(plain, sentences, progress=plain.name if progress else False)
        final = plain.n_layers

        def final_vectors(sents: list[str], base: Any = base, last: int = final) -> Any:
            return base.take(np.fromiter((index[s] for s in sents), np.int64, len(sents)), last)

        reader = Reader(
            lambda t: make_probe(units.probe or t.metadata.probe or "logreg", _short_name(t), 0),
            final_vectors,
        )
        # re-probed on items no edit was fit on: cross-fitted within each task's test split;
        # the intervened task on every layer from the edit on (its recovery), the others on
        # the last layer (whose results carry the output measures)
        held = [held_out(t) for t in units.tasks if "test" in t.splits and "train" in t.splits]
        for task in units.intervene:
            own = [h for h in held if h.original is task]  # type: ignore[attr-defined]
            rest = [h for h in held if h.original is not task]  # type: ignore[attr-defined]
            for made in interventions(
                plain, task, base, index, chosen.layers, units.intervene_controls, reader
            ):
                for tasks, views in ((own, None), (rest, {len(made.views) - 1})):
                    if not tasks:
                        continue
                    runner = Runner(
                        tasks, probe=units.probe, seeds=units.seeds, store=store, cache=cache,
                        progress=progress, nli_train=units.nli_train,
                    )  # fmt: skip
                    runner.only_views = views
                    runner.run_encoder(made)
                    keys += runner.keys
    return keys


def run(
    encoders: EncoderSpecs = ("minilm",),
    tasks: str | Sequence[str] | Sequence[ProbingTask] = "sample-en",
    *,
    baselines: str | Sequence[str] | None = None,
    probe: str | None = None,
    seeds: int = 1,
    results: str | Path = DEFAULT_RESULTS,
    cache_dir: str | Path | None = None,
    encoder_options: dict[str, Any] | None = None,
    progress: bool = True,
    controls: bool = False,
    nli_train: str | Path | None = None,
    allow_heuristic_labels: bool = False,
    keep_nli_overlap: bool = False,
    executor: str = "local",
    shard: tuple[int, int] | None = None,
    keep_going: bool = False,
    erase: Sequence[str] = (),
    erase_fit: str = "train",
    erase_controls: int = CONTROL_SEEDS,
    keep_foreign: bool = False,
    intervene: Sequence[str] = (),
    intervene_controls: int = INTERVENE_CONTROLS,
    probe_device: str | None = None,
    cache_dtype: str | None = None,
    stream: bool = False,
) -> pd.DataFrame:
    """Probe ``encoders`` (and ``baselines``) on ``tasks`` into the results store ``results``
    (resumable: finished units are skipped); returns one row per result.

    ``encoders``: names, ``Encoder`` objects, ``SentenceTransformer`` models in memory
    (fingerprinted by their current weights) or functions from a list of sentences to an
    (n, d) array (one, or a list), or a mapping from name to that encoder's own options
    (``{"minilm": {}, "hf:bert-base-uncased": {"layer": "all"}}``), which add to and override
    ``encoder_options``, the options every encoder is given. ``sentprobe.evaluate`` computes
    the same units in memory, without a store.

    Everything that can be checked is checked before anything is written: task files are
    loaded and validated, encoders built, baseline and probe names resolved. ``controls``
    adds each task's control tasks (``sentprobe.datasets.controls``) after the tasks, one map
    per seed: seed ``s`` probes the control drawn with seed ``s``.
    ``probe`` None: each task's own probe (Kim et al.'s 512-unit MLP for ``kim2019``), else
    logreg. ``nli_train``: an NLI training file for zero-shot NLI sets (evaluation/folds.py).
    ``allow_heuristic_labels``: score items whose labels are a generator's rule, not
    annotators' (refused otherwise; their cells are marked). ``keep_nli_overlap``: train the
    NLI head also on the pairs the probed NLI sets hold (left out by default).
    ``executor``: ``local``, or ``ray`` / ``ray:ADDRESS`` / ``ray://HOST:PORT`` to run the
    units on a Ray cluster (evaluation/executors.py); the results are the same.
    ``shard``: (I, N), compute only the I-th of N shares of the units (evaluation/shards.py);
    ``sentprobe merge`` joins the shards' stores. ``keep_going``: a failed (row, task) pair
    does not stop the run; the returned frame's ``attrs["failures"]`` lists one line each.
    ``erase``: task names (as ``tasks`` gives them, or short names) whose property is then
    erased from each encoder's vectors (LEACE, and random subspaces of equal rank as its
    controls; evaluation/erasure.py) before every task is probed again; ``erase_fit``: the
    splits the eraser is fit on (``train`` or ``train+dev``), ``erase_controls``: the number
    of random controls. ``intervene``: task names whose property is edited out inside the
    forward pass of each Hugging Face encoder at each layer it reads, with
    ``intervene_controls`` random controls per layer (evaluation/intervention.py).
    ``keep_foreign``: reuse stored results made by another sentprobe
    version or code, or another major.minor of a library that decides scores
    (evaluation/provenance.py); computed again by default. ``probe_device``: where the
    probes that take a device train (logreg, mlp, ridge: ``cpu``, ``cuda``, ``auto``; None:
    the CPU); results are the same units, whichever device computed them. ``cache_dtype``:
    what the embedding cache stores (float32, or float16 / bfloat16 in half the bytes;
    probes get float32). ``stream``: encoder rows probed by ``ridge`` are probed view by view
    as their vectors are produced, from statistics, and nothing is cached
    (evaluation/stream.py); needs ``probe="ridge"`` and tasks with a dev split.
    """
    check_executor(executor)
    if probe_device is not None:
        resolve_device(probe_device)  # cuda where there is none: refused before any work
    if stream and probe != "ridge":
        raise SentprobeError(
            "--stream fits the closed-form probe from statistics: use it with --probe ridge"
        )
    if shard is not None and executor != "local":
        raise SentprobeError("--shard splits a run without Ray; use it with --executor local")
    if erase and (shard is not None or executor != "local"):
        raise SentprobeError("--erase runs here, without --shard or --executor ray")
    if intervene and (shard is not None or executor != "local"):
        raise SentprobeError("--intervene runs here, without --shard or --executor ray")
    units = plan_run(
        encoders,
        tasks,
        baselines=baselines,
        probe=probe,
        seeds=seeds,
        encoder_options=encoder_options,
        controls=controls,
        nli_train=nli_train,
        allow_heuristic_labels=allow_heuristic_labels,
        keep_nli_overlap=keep_nli_overlap,
        erase=erase,
        erase_fit=erase_fit,
        erase_controls=erase_controls,
        intervene=intervene,
        intervene_controls=intervene_controls,
    )
    # Absolute here, on the driver: Ray workers start in other directories and homes.
    results = Path(results).expanduser().absolute()
    check_writable_dir(results.parent, "results store", "--results", results)  # before any work
    root = Path(cache_dir).expanduser().absolute() if cache_dir is not None else default_cache_dir()
    cache = EmbeddingCache(root, dtype=cache_dtype)
    cache.check_writable()
    with ResultsStore(results) as store:
        return execute(
            units, store, cache, progress=progress, executor=executor, shard=shard,
            keep_going=keep_going, keep_foreign=keep_foreign, probe_device=probe_device,
            stream=stream,
        )  # fmt: skip


def _run_local(
    runner: Runner,
    rows: list[tuple[Baseline | Encoder, str | None, int | None]],
    shard: tuple[int, int] | None,
    keep_going: bool,
    options: list[Any],
) -> list[str]:
    """Run ``rows`` here; with ``shard`` only its pairs, with ``keep_going`` a pair at a time,
    a failed one listed (returned) instead of stopping the run."""
    if shard is None and not keep_going:
        for row in rows:
            runner.run_row(*row)
        return []
    index, count = shard or (1, 1)
    tasks, store = runner.tasks, runner.store
    positioned: PositionedStore | None = None
    if shard is not None:
        pid = plan_id([r[0] for r in rows], tasks, count, options)
        results = cast("ResultsStore", store)  # run --shard: always a file
        results.set_meta(SHARD_META, json.dumps({"plan": pid, "index": index, "count": count}))
        positioned = PositionedStore(results, pid)
        runner.store = cast("ResultsStore", positioned)  # adds with a position, else the same
    failures: list[str] = []
    try:
        for pair in plan([r[0] for r in rows], tasks, count):
            if pair.shard != index:
                continue
            if positioned is not None:
                positioned.row, positioned.task = pair.row, pair.task
            runner.tasks = list(pair.tasks)
            try:
                runner.run_row(*rows[pair.row])
            except Exception as exc:
                if not keep_going:
                    raise
                what = rows[pair.row][0]
                name = what.label if isinstance(what, Baseline) else what.name
                job = f"{name} / {pair.tasks[-1].name}"
                failures.append(failure_line(job, exc))
                report_failure(exc)
    finally:
        runner.tasks, runner.store = tasks, store
    return failures
