"""Built-in encoders, their registry names, and ``get_encoder`` for what a CLI user types.

Everything heavy (torch, transformers) is imported only when an encoder is built, so that
``import sentprobe.encoders`` and ``sentprobe --help`` stay fast.
"""

from __future__ import annotations

import difflib
import functools
import glob
import importlib
import inspect
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import SentprobeError
from ..registry import encoders
from .base import Encoder

__all__ = [
    "DEFAULT_ENCODER",
    "Encoder",
    "LazyFactory",
    "accepted_options",
    "expand_encoder_spec",
    "get_encoder",
    "is_training_run",
]

DEFAULT_ENCODER = "minilm"


class LazyFactory:
    """A registry entry that imports its target only when called (or inspected)."""

    def __init__(self, target: str, **fixed: Any) -> None:
        self.target, self.fixed = target, fixed

    def load(self) -> Callable[..., Encoder]:
        module, attr = self.target.split(":")
        return getattr(importlib.import_module(module, __name__), attr)

    def __call__(self, **options: Any) -> Encoder:
        return self.load()(**self.fixed, **options)

    @property
    def __signature__(self) -> inspect.Signature:
        sig = inspect.signature(self.load())
        return sig.replace(parameters=[p for n, p in sig.parameters.items() if n not in self.fixed])

    def __repr__(self) -> str:
        fixed = "".join(f", {k}={v!r}" for k, v in self.fixed.items())
        return f"LazyFactory({self.target!r}{fixed})"


_BUILTINS = {
    "minilm": LazyFactory(".sbert:minilm"),
    "hf": LazyFactory(".hf:HFEncoder"),
    "sbert": LazyFactory(".sbert:SentenceTransformerEncoder"),
    "bov-glove": LazyFactory(".static:BoVEncoder"),
    "bilstm-last-untrained": LazyFactory(".untrained:BiLSTMEncoder", pooling="last"),
    "bilstm-max-untrained": LazyFactory(".untrained:BiLSTMEncoder", pooling="max"),
    "gatedconv-untrained": LazyFactory(".untrained:GatedConvEncoder"),
    "precomputed": LazyFactory(".precomputed:PrecomputedEncoder"),
}
for _name, _factory in _BUILTINS.items():
    encoders.register(_name, _factory)


def accepted_options(factory: Callable[..., Any]) -> list[str] | None:
    """Keyword options ``factory`` takes; None if it takes any (``**kwargs``)."""
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def _build(label: str, factory: Callable[..., Any], options: dict[str, Any]) -> Encoder:
    accepted = accepted_options(factory)
    if accepted is not None:
        unknown = sorted(set(options) - set(accepted))
        if unknown:
            raise SentprobeError(
                f"encoder {label!r} does not take option(s) {', '.join(unknown)}; "
                f"it takes: {', '.join(accepted) or '(none)'}"
            )
    try:
        encoder = factory(**options)
    except TypeError as e:  # e.g. a required argument missing
        raise SentprobeError(f"encoder {label!r}: {e}") from e
    if not isinstance(encoder, Encoder):
        raise SentprobeError(f"encoder {label!r} built a {type(encoder).__name__}, not an Encoder")
    return encoder


def _split_precomputed(rest: str) -> tuple[str, str]:
    """``matrix:sentences``; paths may contain ':' (Windows drives), so try each split."""
    cuts = [m.start() for m in re.finditer(":", rest)]
    for cut in cuts:
        left, right = rest[:cut], rest[cut + 1 :]
        if Path(left).is_file() and Path(right).is_file():
            return left, right
    if len(cuts) == 1:
        return rest[: cuts[0]], rest[cuts[0] + 1 :]  # let the encoder name the missing file
    raise SentprobeError(f"expected precomputed:<matrix file>:<sentences file>, got {rest!r}")


#: The manifest file that makes a directory a training run (``sentprobe train``'s output).
TRAINING_RUN_MANIFEST = "run.json"
_GLOB = re.compile(r"[*?\[]")


def is_training_run(spec: str) -> bool:
    """``spec`` names a ``sentprobe train`` run: ``DIR``, ``DIR@epoch-K|best|all|last``."""
    path = spec.rpartition("@")[0] if "@" in spec else spec
    return any((Path(p).expanduser() / TRAINING_RUN_MANIFEST).is_file() for p in {spec, path} if p)


def _training_run_factory() -> Callable[..., Encoder]:
    """The ``run`` encoder (``sentprobe.training``, a later stage: found by entry point)."""
    if "run" not in encoders:
        raise SentprobeError(
            "trained runs need the 'run' encoder entry point: reinstall sentprobe "
            "(pip install -e .)"
        )
    return encoders.get("run")


def expand_encoder_spec(spec: str) -> list[str]:
    """A glob over training runs (``'runs/*@all'``) -> one spec per run, sorted, and a run's
    ``@all`` -> one ``@epoch-K`` spec per finished epoch, so that each epoch is a row of its
    own whose fingerprint is that checkpoint's alone: training a run further adds rows and
    leaves the earlier epochs' rows (and cached vectors) as they were. Any other spec, or a
    glob matching no run, as it is."""
    path, at, selector = spec.rpartition("@") if "@" in spec else (spec, "", "")
    if not _GLOB.search(path):
        runs = [spec]
    else:
        matches = glob.glob(os.path.expanduser(path))
        found = sorted(p for p in matches if (Path(p) / TRAINING_RUN_MANIFEST).is_file())
        runs = [f"{r}{at}{selector}" for r in found] or [spec]
    return [one for run in runs for one in _epochs_of(run)]


def _epochs_of(spec: str) -> list[str]:
    """``RUN@all`` -> ``RUN@epoch-K`` per finished epoch (the manifest's ``epochs``)."""
    path, at, selector = spec.rpartition("@")
    manifest = Path(path).expanduser() / TRAINING_RUN_MANIFEST
    if selector != "all" or not manifest.is_file():
        return [spec]
    try:
        epochs = json.loads(manifest.read_text(encoding="utf-8")).get("epochs", [])
        numbers = [int(e["epoch"]) for e in epochs]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return [spec]  # the run encoder reports a damaged manifest itself
    return [f"{path}@epoch-{k}" for k in numbers] or [spec]


_USER_CODE = re.compile(r"^(.+\.py(:[A-Za-z_][\w.]*)?|[A-Za-z_][\w.]*:[A-Za-z_][\w.]*)$")


def _in_memory(model: Any, options: dict[str, Any]) -> Encoder:
    """A ``SentenceTransformer`` object as an encoder (its current weights fingerprint it)."""
    from sentence_transformers import SentenceTransformer

    if not isinstance(model, SentenceTransformer):
        raise SentprobeError(
            f"{type(model).__name__} is not an encoder: give a name (minilm, hf:MODEL...), an "
            "Encoder, or a SentenceTransformer model"
        )
    return _build(
        type(model).__name__, LazyFactory(".sbert:SentenceTransformerEncoder", model=model), options
    )


def get_encoder(spec: str | Any = DEFAULT_ENCODER, **options: Any) -> Encoder:
    """Build the encoder a user named on the command line (or, from Python, wrap a
    ``SentenceTransformer`` model in memory; an ``Encoder`` is returned as it is).

    ``spec`` is one of: a registered name (``minilm``, ``bov-glove``...); ``hf:<model>``;
    ``st:<model>``; ``mteb:<MTEB model name>[@local weights]``;
    ``precomputed:<matrix>:<sentences>``; user code ``file.py[:obj]`` or
    ``package.module:obj``; a training run (``runs/NAME[@epoch-K|@best|@all]``); or a local model
    directory (HFEncoder when ``layer`` or ``pooling`` is given or it has no
    ``modules.json``, else sentence-transformers).
    Options set to None are ignored; an option the encoder does not take is an error.
    """
    options = {k: v for k, v in options.items() if v is not None}
    if isinstance(spec, Encoder):
        return spec
    if not isinstance(spec, str):
        return _in_memory(spec, options)
    if spec in encoders:
        return _build(spec, encoders.get(spec), options)
    prefix, _, rest = spec.partition(":")
    if prefix == "hf" and rest:
        return _build(spec, LazyFactory(".hf:HFEncoder", model=rest), options)
    if prefix == "st" and rest:
        return _build(spec, LazyFactory(".sbert:SentenceTransformerEncoder", model=rest), options)
    if prefix == "mteb" and rest:
        return _build(spec, LazyFactory(".mteb:MTEBEncoder", model=rest), options)
    if prefix == "precomputed" and rest:
        matrix, sentences = _split_precomputed(rest)
        factory = LazyFactory(
            ".precomputed:PrecomputedEncoder", matrix_path=matrix, sentences_path=sentences
        )
        return _build(spec, factory, options)
    if is_training_run(spec):
        return _build(spec, functools.partial(_training_run_factory(), spec), options)
    path = Path(spec).expanduser()
    if path.is_dir() and (path / "config.json").is_file():
        model = str(path.absolute())  # a Ray worker starts elsewhere: the driver's directory
        if "layer" in options or "pooling" in options or not (path / "modules.json").is_file():
            return _build(spec, LazyFactory(".hf:HFEncoder", model=model), options)
        factory = LazyFactory(".sbert:SentenceTransformerEncoder", model=model)
        return _build(spec, factory, options)
    if _USER_CODE.match(spec) or path.is_file():
        from .custom import load_user_encoder

        return _build(spec, lambda batch_size=None: load_user_encoder(spec, batch_size), options)
    if path.is_dir():  # a model directory without its config: say so, not "unknown encoder"
        raise SentprobeError(
            f"{path}: no config.json in {path} (a Hugging Face model directory holds "
            "config.json beside its weights)"
        )
    if "," in spec and not path.exists():  # -e a,b: one encoder per -e
        flags = " ".join(f"-e {part.strip()}" for part in spec.split(",") if part.strip())
        raise SentprobeError(
            f"unknown encoder {spec!r}: -e takes one encoder and repeats ({flags})"
        )
    close = difflib.get_close_matches(spec, encoders.names(), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise SentprobeError(
        f"unknown encoder {spec!r}{hint}. Use a registered name ({', '.join(encoders.names())}), "
        "hf:<model>, st:<model>, mteb:<model>, precomputed:<matrix>:<sentences>, a local model "
        "directory, file.py[:object] or package.module:object"
    )
