"""User code as encoders: a plain function, or SentEval's ``prepare``/``batcher`` pair.

SentEval users can point sentprobe at their existing script (``sentprobe ... my_senteval.py``)
and keep their ``prepare(params, samples)`` and ``batcher(params, batch)`` unchanged.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import inspect
import json
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DataError, SentprobeError
from .base import Encoder
from .hf import sorted_batches


def as_matrix(out: Any, n: int, who: str) -> np.ndarray:
    """Check user output: ``n`` rows of finite numbers, returned as float32 (n, d)."""
    if hasattr(out, "detach"):  # torch tensor, possibly on GPU or requiring grad
        out = out.detach().cpu().float().numpy()
    try:
        arr = np.asarray(out, dtype=np.float32)
    except (TypeError, ValueError) as e:
        raise SentprobeError(f"{who} returned {type(out).__name__}, not numbers: {e}") from None
    if arr.ndim != 2:
        raise SentprobeError(
            f"{who} must return a 2-d array (sentences x dims), got shape {arr.shape}"
        )
    if arr.shape[0] != n:
        raise SentprobeError(f"{who} returned {arr.shape[0]} rows for {n} sentences")
    bad = ~np.isfinite(arr).all(axis=1)
    if bad.any():
        raise SentprobeError(
            f"{who} returned NaN or infinite values for {int(bad.sum())} of {n} sentences "
            f"(first: row {int(np.argmax(bad))})"
        )
    return arr


def source_fingerprint(*objs: Any) -> str:
    """Hash of the objects' qualified names, the source of the whole module each is defined in
    (a module constant or helper the function uses changes its vectors as much as its own
    body does), and a declared ``version`` attribute of the object or ``__version__`` of its
    module where there is one; the object's own source where the module's cannot be read.

    Cannot see weights loaded from files: pass an explicit ``fingerprint`` (e.g. a
    version string), or declare a ``version``, whenever the model behind the code changes.
    """
    h = hashlib.sha1()
    for obj in objs:
        if obj is None:
            continue
        target = obj if inspect.isfunction(obj) or inspect.ismethod(obj) else type(obj)
        h.update(f"{target.__module__}.{target.__qualname__}\0".encode())
        module = inspect.getmodule(target)
        declared = getattr(obj, "version", None) or getattr(module, "__version__", None)
        if declared is not None:
            h.update(f"version={declared}\0".encode())
        source = None
        for where in (module, target):  # the module's source, else the object's own
            with contextlib.suppress(OSError, TypeError):  # defined interactively or in C
                source = inspect.getsource(where) if where is not None else None
            if source:
                break
        if source:
            h.update(source.encode())
    return h.hexdigest()[:16]


def _callable_name(fn: Callable) -> str:
    return getattr(fn, "__name__", None) or type(fn).__name__


class CallableEncoder(Encoder):
    """Wrap ``fn(list[str]) -> (n, d) array-like`` (numpy, torch, lists)."""

    def __init__(
        self,
        fn: Callable[[list[str]], Any],
        name: str | None = None,
        fingerprint: str | None = None,
        batch_size: int = 64,
    ) -> None:
        if not callable(fn):
            raise SentprobeError(f"{fn!r} is not callable")
        self.fn = fn
        self.name = name or _callable_name(fn)
        self.batch_size = batch_size
        self._fingerprint = fingerprint or f"callable|{self.name}|{source_fingerprint(fn)}"

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    def encode(self, sentences: Sequence[str]) -> np.ndarray:
        sentences = list(sentences)
        return as_matrix(self.fn(sentences), len(sentences), f"encoder {self.name!r}")


class SentEvalParams(dict):
    """SentEval's ``dotdict``: item and attribute access; a missing attribute reads as None."""

    def __getattr__(self, key: str) -> Any:
        return self.get(key)

    def __setattr__(self, key: str, value: Any) -> None:
        self[key] = value

    def __delattr__(self, key: str) -> None:
        self.pop(key, None)


#: Defaults SentEval's engine fills in (senteval/engine.py).
SENTEVAL_DEFAULTS = {
    "task_path": "",
    "usepytorch": True,
    "seed": 1111,
    "batch_size": 128,
    "nhid": 0,
    "kfold": 5,
    "classifier": {"nhid": 0},
}


class SentEvalEncoder(Encoder):
    """SentEval's pair: ``prepare(params, samples)`` per task, then ``batcher(params, batch)``.

    As in SentEval, both receive sentences as token lists (``sentence.split()``), ``prepare``
    sees every sentence of the task being probed (train + dev + test, in that order, with
    repeats: ``sentprobe run`` calls :meth:`prepare_task` before each task), and batches of
    ``params.batch_size`` arrive sorted by length (results are put back in the original order).
    The user's ``prepare`` runs lazily, before the first batch of a task, so a task whose
    vectors are all cached never calls it. With a ``prepare`` the fingerprint ends in a hash of
    the samples it saw: a vocabulary built on one task never labels vectors of another.
    """

    def __init__(
        self,
        prepare: Callable[[Any, list[list[str]]], Any] | None,
        batcher: Callable[[Any, list[list[str]]], Any],
        params: dict | None = None,
        name: str | None = None,
        fingerprint: str | None = None,
    ) -> None:
        if not callable(batcher):
            raise SentprobeError(f"batcher {batcher!r} is not callable")
        self.batcher = batcher
        self.prepare_fn = prepare
        self.prepare_per_task = prepare is not None
        self.params = SentEvalParams({**SENTEVAL_DEFAULTS, **(params or {})})
        self.batch_size = int(self.params.batch_size)
        self.name = name or getattr(batcher, "__module__", None) or "senteval"
        if fingerprint is None:
            user = json.dumps(params or {}, sort_keys=True, default=repr)
            fingerprint = f"senteval|{source_fingerprint(prepare, batcher)}|{user}"
        self._base_fingerprint = fingerprint
        self._samples: list[str] | None = None
        self._sample_set: set[str] = set()
        self._samples_digest: str | None = None
        self._prepared = False  # the user's prepare has run on self._samples

    @property
    def fingerprint(self) -> str:
        if self.prepare_fn is None:
            return self._base_fingerprint
        if self._samples_digest is None:
            raise SentprobeError(
                f"encoder {self.name!r}: its vectors depend on the sentences its prepare saw; "
                "call prepare_task(sentences) first (sentprobe run does, once per task)"
            )
        return f"{self._base_fingerprint}|samples={self._samples_digest}"

    def prepare_task(self, sentences: Sequence[str]) -> None:
        """Take ``sentences`` as the samples of the next task (the user's prepare runs lazily)."""
        samples = list(sentences)
        digest = hashlib.sha1(json.dumps(samples, ensure_ascii=False).encode()).hexdigest()[:16]
        if digest != self._samples_digest:
            self._samples, self._sample_set = samples, set(samples)
            self._samples_digest, self._prepared = digest, False

    def prepare(self, sentences: Sequence[str]) -> None:
        """The embedding cache's call with the sentences it will encode: a subset of the
        task's samples keeps the task's state; anything else starts a new one."""
        sentences = list(sentences)
        if self._samples is None or not self._sample_set.issuperset(sentences):
            self.prepare_task(sentences)

    def _ensure_prepared(self) -> None:
        if not self._prepared and self.prepare_fn is not None and self._samples is not None:
            self.prepare_fn(self.params, [s.split() for s in self._samples])
        self._prepared = True

    def encode(self, sentences: Sequence[str]) -> np.ndarray:
        if self.prepare_fn is not None:
            self.prepare(sentences)  # no-op when they belong to the prepared samples
        self._ensure_prepared()
        tokens = [s.split() for s in sentences]
        bs = int(self.params.batch_size)
        out: np.ndarray | None = None
        for idx in sorted_batches([len(t) for t in tokens], bs):
            batch = [tokens[i] for i in idx]
            emb = as_matrix(self.batcher(self.params, batch), len(batch), f"{self.name} batcher")
            if out is None:
                out = np.empty((len(tokens), emb.shape[1]), dtype=np.float32)
            elif emb.shape[1] != out.shape[1]:
                raise SentprobeError(
                    f"{self.name} batcher returned {emb.shape[1]} dims, earlier {out.shape[1]}"
                )
            out[idx] = emb
        return out if out is not None else np.empty((0, 0), dtype=np.float32)


# -- loading user code from the command line ------------------------------------------------

_SPEC = re.compile(r"^(?P<target>.+?)(?::(?P<obj>[A-Za-z_][\w.]*))?$")


def _import_file(path: Path):
    if not path.is_file():
        raise SentprobeError(f"{path}: no such file")
    name = f"sentprobe_user_{hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:10]}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:  # e.g. a ``.txt`` file: no loader for it
        raise SentprobeError(f"{path}: not a Python source file (expected a .py file)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look modules up here
    sys.path.insert(0, str(path.parent))  # let the file import its neighbours
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        del sys.modules[name]
        raise DataError(path, e.lineno, f"syntax error: {e.msg}") from None
    except Exception as e:
        del sys.modules[name]
        raise SentprobeError(f"{path}: running the file failed: {type(e).__name__}: {e}") from e
    finally:
        sys.path.remove(str(path.parent))
    return module


def _import_module(name: str):
    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise SentprobeError(f"cannot import module {name!r}: {e}") from e


def _takes_no_arguments(obj: Callable) -> bool:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return False
    return all(
        p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        for p in sig.parameters.values()
    )


def load_user_encoder(spec: str, batch_size: int | None = None) -> Encoder:
    """Resolve ``file.py:obj``, ``package.module:obj`` or a SentEval-style ``file.py``.

    ``obj`` may be an Encoder, an Encoder subclass or factory (called without arguments),
    or a function ``list[str] -> array`` (wrapped in :class:`CallableEncoder`). A file given
    alone must define SentEval's ``batcher`` (and optionally ``prepare`` and a
    ``params_senteval`` dict).
    """
    m = _SPEC.match(spec)
    if m is None:
        raise SentprobeError("empty encoder spec; expected file.py[:obj] or package.module:obj")
    target, obj_name = m["target"], m["obj"]
    is_file = target.endswith(".py") or Path(target).is_file()
    module = _import_file(Path(target)) if is_file else _import_module(target)
    where = target if is_file else f"module {target}"

    if obj_name is None:
        if not is_file:
            raise SentprobeError(f"{spec!r}: name the object to use, e.g. {target}:my_encoder")
        batcher = getattr(module, "batcher", None)
        if not callable(batcher):
            raise SentprobeError(
                f"{target} defines no batcher(params, batch) function. Define SentEval's "
                f"prepare/batcher in it, or name an encoder object: {target}:<name>"
            )
        params = getattr(module, "params_senteval", None) or getattr(module, "params", None)
        if batch_size is not None:
            params = {**(params or {}), "batch_size": batch_size}
        return SentEvalEncoder(
            getattr(module, "prepare", None), batcher, params, name=Path(target).stem
        )

    obj: Any = module
    for part in obj_name.split("."):
        if not hasattr(obj, part):
            public = sorted(n for n in vars(module) if not n.startswith("_"))
            raise SentprobeError(
                f"{where} has no {obj_name!r}; it defines: {', '.join(public) or '(nothing)'}"
            )
        obj = getattr(obj, part)

    if inspect.isclass(obj) and not issubclass(obj, Encoder):
        raise SentprobeError(f"{where}:{obj_name} is a class but not a sentprobe Encoder")
    if not isinstance(obj, Encoder) and callable(obj) and _takes_no_arguments(obj):
        obj = obj()  # an Encoder subclass or a factory
        if not isinstance(obj, Encoder):
            raise SentprobeError(
                f"{where}:{obj_name}() returned {type(obj).__name__}, not a sentprobe Encoder"
            )
    if isinstance(obj, Encoder):
        if batch_size is not None:
            obj.batch_size = batch_size
        return obj
    if callable(obj):
        return CallableEncoder(obj, name=obj_name, batch_size=batch_size or 64)
    raise SentprobeError(
        f"{where}:{obj_name} is a {type(obj).__name__}; expected an Encoder, an Encoder "
        "class/factory, or a function list[str] -> array"
    )
