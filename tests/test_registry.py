"""Every kind of plug-in (encoders, tasks, suites, probes, annotators, generators, baselines)
comes in through ``sentprobe.registry`` and the entry-point group ``sentprobe.<kind>``."""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import EntryPoint

import pytest

import sentprobe.annotation  # noqa: F401  (registers the built-in annotators)
import sentprobe.datasets  # noqa: F401
import sentprobe.encoders  # noqa: F401
import sentprobe.generation  # noqa: F401
import sentprobe.probes  # noqa: F401
from sentprobe import registry
from sentprobe.evaluation.baselines import baseline_names
from sentprobe.evaluation.runner import expand_baselines
from sentprobe.generation.suite import generator_for


@dataclass
class PluginGenerator:
    """A third party's task generator."""

    name: str = "Plugin"
    n_targets: int = 3


PLUGIN_BASELINE = registry.Baseline("Plugin", lambda: None, "text", 99)
#: kind -> the object a third-party package exposes under the entry point "plugin"
PLUGINS = {
    "encoders": lambda **options: "encoder",
    "tasks": lambda: "task",
    "suites": ["plugin"],
    "probes": lambda task, seed=0: "probe",
    "annotators": lambda argument, **options: "annotator",
    "generators": PluginGenerator,
    "baselines": PLUGIN_BASELINE,
}
KINDS = ["encoders", "tasks", "suites", "probes", "annotators", "generators", "baselines"]


@pytest.fixture
def installed(monkeypatch):
    """A package declaring entry point "plugin" in every ``sentprobe.<kind>`` group."""
    loaded = {f"sentprobe.{kind}": obj for kind, obj in PLUGINS.items()}

    def entry_points(group: str):
        if group not in loaded:
            return []
        ep = EntryPoint("plugin", f"plugin_pkg:{group.split('.')[1]}", group)
        monkeypatch.setattr(EntryPoint, "load", lambda self: loaded[self.group])
        return [ep]

    monkeypatch.setattr(registry, "entry_points", entry_points)
    for kind in KINDS:
        reg = getattr(registry, kind)
        monkeypatch.setattr(reg, "_entries", dict(reg._entries))  # built-ins stay registered
        monkeypatch.setattr(reg, "_entry_points_loaded", False)


def test_every_kind_is_a_registry():
    assert {k for k, v in vars(registry).items() if isinstance(v, registry.Registry)} == set(KINDS)


@pytest.mark.parametrize("kind", KINDS)
def test_an_entry_point_adds_one_of_each_kind(installed, kind):
    reg = getattr(registry, kind)
    assert "plugin" in reg.names()
    assert reg.get("plugin") is PLUGINS[kind]


def test_plugin_generators_and_baselines_are_used(installed):
    assert generator_for("plugin", "en", n_targets=5) == PluginGenerator(n_targets=5)
    assert expand_baselines("majority,plugin") == ["majority", "plugin"]
    assert baseline_names()[-1] == "plugin"  # ordered by Baseline.order


def test_unknown_names_list_what_is_known():
    with pytest.raises(registry.RegistryError, match="unknown baseline 'nope'; known: .*majority"):
        registry.baselines.get("nope")


def test_built_ins_are_registered_on_the_first_lookup(tmp_path, monkeypatch):
    """An earlier stage (the MTEB tasks in ``datasets``) looks probes up by name: the
    registry imports the module that registers the built-ins on the first lookup."""
    from sentprobe import registry
    from sentprobe.registry import Registry

    assert registry.probes._builtin == "sentprobe.probes"
    things: Registry[int] = Registry("things", builtin="planted_builtins")
    (tmp_path / "planted_builtins.py").write_text(
        "from tests_things import things\nthings.register('one', 1)\n"
    )
    (tmp_path / "tests_things.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    import tests_things

    monkeypatch.setattr(tests_things, "things", things, raising=False)
    assert things.get("one") == 1
