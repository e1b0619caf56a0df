"""Name -> factory registries, so third parties can add encoders, tasks, suites, probes,
annotators, generators and baselines.

Modelled on spaCy's registries: a built-in registers itself with a decorator, and an
installed package can contribute entries through the entry-point group
``sentprobe.<kind>`` (e.g. ``sentprobe.encoders``) without sentprobe importing it first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from importlib.metadata import entry_points
from typing import Any, Generic, Literal, TypeVar

from sentprobe.errors import SentprobeError

T = TypeVar("T")


class RegistryError(SentprobeError, KeyError):
    """An unknown name was asked for; the message lists what is available."""

    def __str__(self) -> str:  # KeyError quotes its message; we want plain text
        return str(self.args[0])


class Registry(Generic[T]):
    """A mapping from names to objects (usually factories) of one kind."""

    def __init__(self, kind: str, builtin: str | None = None) -> None:
        """``builtin``: the module whose import registers the built-in entries, imported on
        the first lookup (as entry points are), so an earlier stage can look them up."""
        self.kind = kind
        self._entries: dict[str, T] = {}
        self._entry_points_loaded = False
        self._builtin = builtin

    def register(self, name: str, obj: T | None = None, *, overwrite: bool = False):
        """Register ``obj`` under ``name``; without ``obj``, return a decorator."""

        def add(o: T) -> T:
            if name in self._entries and not overwrite and self._entries[name] is not o:
                raise ValueError(f"{self.kind} {name!r} is already registered")
            self._entries[name] = o
            return o

        return add(obj) if obj is not None else add

    def _load_entry_points(self) -> None:
        if self._entry_points_loaded:
            return
        self._entry_points_loaded = True
        if self._builtin is not None:
            import_module(self._builtin)
        for ep in entry_points(group=f"sentprobe.{self.kind}"):
            if ep.name not in self._entries:
                self._entries[ep.name] = ep.load()

    def get(self, name: str) -> T:
        if name not in self._entries:
            self._load_entry_points()
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "(none)"
            raise RegistryError(f"unknown {self.kind[:-1]} {name!r}; known: {known}") from None

    def __contains__(self, name: str) -> bool:
        self._load_entry_points()
        return name in self._entries

    def names(self) -> list[str]:
        self._load_entry_points()
        return sorted(self._entries)

    def items(self) -> list[tuple[str, T]]:
        self._load_entry_points()
        return sorted(self._entries.items())


@dataclass(frozen=True)
class Baseline:
    """A ``--baselines`` row: how to build it and how tables show it.

    ``make()`` returns a text probe (``fit(sentences, labels, dev_sentences, dev_labels)``)
    when ``kind`` is "text", else an ``Encoder`` whose vectors go to the probe ``probe``
    (None: the run's probe). ``order`` sorts the rows of ``--baselines all`` and, for the
    ``paper`` baselines, the first rows of a results table; ``label`` is the row name.
    """

    label: str
    make: Callable[[], Any]
    kind: Literal["text", "encoder"]
    order: int
    version: str = "v1"
    probe: str | None = None
    default: bool = False
    paper: bool = False
    #: an encoder row drawn this many times (seeds 0..n-1) whatever the run's ``--seeds``:
    #: a random encoder's restarts (Kim et al. 2019 report five); None: the run's seeds
    restarts: int | None = None


# The factories return ``Any``: this module comes before the stages whose types it holds
# (it may not import them), and ``object`` would force a cast at every call site.
#: ``encoders.get(name)(**options) -> Encoder`` (keyword options only, e.g. ``layer=``).
encoders: Registry[Callable[..., Any]] = Registry("encoders")
#: ``tasks.get(name)() -> ProbingTask`` (entries also carry ``.metadata``, a TaskMetadata).
tasks: Registry[Callable[[], Any]] = Registry("tasks")
#: ``suites.get(name) -> list[str]``: the task names of the suite.
suites: Registry[list[str]] = Registry("suites")
#: ``probes.get(name)(task, seed=0) -> estimator`` with ``fit(X, y, X_dev, y_dev)``; ``task``
#: is the task's (paper) name, so a probe may differ per task (``paper``: logreg for WC).
probes: Registry[Callable[..., Any]] = Registry("probes", builtin="sentprobe.probes")
#: ``annotators.get(backend)(argument, **options) -> Annotator``; ``argument`` is what follows
#: the colon of a spec (``spacy:<model>``), or None.
annotators: Registry[Callable[..., Any]] = Registry("annotators")
#: ``generators.get(task)(**params)``: task name -> generator class (a dataclass whose fields
#: are its parameters, with ``name`` and ``generate``; see ``generation.suite``).
generators: Registry[Callable[..., Any]] = Registry("generators")
#: ``baselines.get(name) -> Baseline``: the ``--baselines`` rows (majority, length, ...).
baselines: Registry[Baseline] = Registry("baselines")
