"""``--config FILE.toml`` and ``--save-config FILE.toml`` for ``run``, ``build``, ``train`` and
``map-encoder``, with click's own mechanism: the file fills the command's ``default_map``, so
every option can be set there and an option on the command line still wins.

Keys are option names without the dashes (``batch-size`` or ``batch_size``; ``format`` for
``--format``); an unknown key is a one-line error naming it. ``--save-config`` writes the
resolved settings (command line, then file, then defaults; unset options left out) and the
command then runs as usual. The resolved settings of a run are also put in
:data:`sentprobe.evaluation.store.RUN_CONFIG`, so every result it stores records them
(``report --provenance`` shows them).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from sentprobe.errors import SentprobeError
from sentprobe.io import atomic_write_text, printable

#: The commands that take ``--config`` / ``--save-config``.
CONFIG_COMMANDS = ("run", "build", "train", "map-encoder")
_OWN = ("config", "save_config")


def _read_toml(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise SentprobeError(f"{path}: no such config file") from None
    except tomllib.TOMLDecodeError as e:
        raise SentprobeError(f"{path}: not valid TOML: {e}") from None
    except OSError as e:
        raise SentprobeError(f"{path}: cannot read: {e.strerror or e}") from None


def _keys(command: Any) -> dict[str, str]:
    """Every spelling a config file may use for each option -> the parameter's name."""
    names: dict[str, str] = {}
    for param in command.params:
        if param.name in _OWN or not param.expose_value:
            continue
        names[param.name] = param.name
        for opt in param.opts:
            if opt.startswith("--"):
                names[opt[2:]] = param.name
                names[opt[2:].replace("-", "_")] = param.name
    return names


def _option_names(command: Any) -> dict[str, str]:
    """Parameter name -> the key ``--save-config`` writes (the long option without dashes)."""
    return {
        p.name: next((o[2:] for o in p.opts if o.startswith("--")), p.name) for p in command.params
    }


def _load(ctx: typer.Context, value: Path | None) -> None:
    """``--config``: the file's settings become the command's defaults."""
    if value is None:
        return
    known = _keys(ctx.command)
    settings = {}
    for key, setting in _read_toml(value).items():
        if key not in known:
            spelled = ", ".join(sorted(_option_names(ctx.command)[n] for n in set(known.values())))
            raise SentprobeError(
                f"{value}: unknown key {key!r} for sentprobe {ctx.info_name} (known: {spelled})"
            )
        param = next(p for p in ctx.command.params if p.name == known[key])
        setting = _as_option_value(param, setting)
        try:  # converted here too, so that a wrong value names the file it is in
            param.process_value(ctx, setting)
        except (typer.BadParameter, TypeError, ValueError) as e:
            problem = e.format_message() if isinstance(e, typer.BadParameter) else str(e)
            raise SentprobeError(f"{value}: {key} = {setting!r}: {problem}") from None
        settings[known[key]] = setting
    ctx.default_map = {**(ctx.default_map or {}), **settings}


def _as_option_value(param: Any, setting: Any) -> Any:
    """A TOML value in the shape the option takes: a single string for a repeatable option
    (``encoder = "bov-glove"``) becomes a one-item list, and a list for a comma-separated
    one (``tasks = ["mock/Mock", "sample-en/Tense"]``) is joined with commas."""
    if getattr(param, "multiple", False) and isinstance(setting, str):
        return [setting]
    if (
        not getattr(param, "multiple", False)
        and getattr(param, "nargs", 1) == 1
        and isinstance(setting, list)
        and all(isinstance(v, str) for v in setting)
        and _annotation(param) is str
    ):
        return ",".join(setting)
    return setting


def _annotation(param: Any) -> Any:
    """The Python type an option was declared with (typer's descriptor, else click's type)."""
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is not None:
        return getattr(descriptor, "annotation", None)
    return str if getattr(getattr(param, "type", None), "name", "") == "text" else None


def _remember(ctx: typer.Context, value: Path | None) -> None:
    if value is not None:
        ctx.meta["sentprobe.save_config"] = value


def _template(
    config: Annotated[
        Path | None,  # noqa: UP007
        typer.Option(
            "--config",
            metavar="FILE.toml",
            is_eager=True,
            expose_value=False,
            callback=_load,
            help="Read options from this TOML file (keys: option names, e.g. batch-size = 64); "
            "options given on the command line win.",
        ),
    ] = None,
    save_config: Annotated[
        Path | None,  # noqa: UP007
        typer.Option(
            "--save-config",
            metavar="FILE.toml",
            expose_value=False,
            callback=_remember,
            help="Write the resolved settings to this TOML file (then run as usual).",
        ),
    ] = None,
) -> None:
    """Holds the two options, declared once with typer and copied onto each command."""


def _plain(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


def resolved_settings(params: Mapping[str, Any]) -> dict[str, Any]:
    """A command's parsed options as TOML-able values (unset ones left out)."""
    return {k: _plain(v) for k, v in params.items() if v is not None and k not in _OWN}


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)  # JSON string escapes are TOML's


def toml_text(settings: Mapping[str, Any], command: str) -> str:
    """``settings`` (keyed by option name) as a TOML file ``--config`` reads back."""
    lines = [f"# sentprobe {command}: resolved settings (sentprobe {command} --config FILE)"]
    lines += [f"{key} = {_toml_value(v)}" for key, v in settings.items()]
    return "\n".join(lines) + "\n"


def _invoke(original: Callable[[Any], Any], ctx: typer.Context) -> Any:
    """Run the command with its resolved settings recorded (and saved if asked)."""
    from sentprobe.evaluation.store import RUN_CONFIG

    names = _option_names(ctx.command)
    settings = {names.get(k, k): v for k, v in resolved_settings(ctx.params).items()}
    target = ctx.meta.get("sentprobe.save_config")
    if target is not None:
        atomic_write_text(target, toml_text(settings, str(ctx.info_name)))
    token = RUN_CONFIG.set({"command": str(ctx.info_name), "settings": settings})
    try:
        return original(ctx)
    finally:
        RUN_CONFIG.reset(token)


def add_config_options(commands: Mapping[str, Any]) -> None:
    """Give each of :data:`CONFIG_COMMANDS` in ``commands`` (click commands) the two options."""
    template = typer.Typer(add_completion=False)
    template.command()(_template)
    for name in CONFIG_COMMANDS:
        command = commands.get(name)
        if command is None or any(p.name == "config" for p in command.params):
            continue
        command.params.extend(typer.main.get_command(template).params)
        original = command.invoke
        command.invoke = lambda ctx, original=original: _invoke(original, ctx)


def run_config_text(frame: Any) -> str:
    """``report --provenance``: each stored result's run settings and the package versions
    that computed it, grouped (markdown); a group made by another sentprobe version says so."""
    from sentprobe import __version__
    from sentprobe.evaluation.provenance import is_foreign, versions_line

    groups: dict[tuple[str, str, bool], list[str]] = {}
    for encoder, task, extra in zip(frame["encoder"], frame["task"], frame["extra"]):
        config = (extra or {}).get("run_config")
        text = (
            toml_text(config["settings"], config["command"]).strip()
            if config
            else "(not recorded: stored before sentprobe recorded run settings, or from Python)"
        )
        key = (text, versions_line(extra), is_foreign(extra))
        groups.setdefault(key, []).append(f"{printable(encoder)} / {printable(task)}")
    out = []
    for i, ((text, versions, foreign), cells) in enumerate(groups.items(), start=1):
        shown = ", ".join(cells[:6]) + (f", ... ({len(cells)} results)" if len(cells) > 6 else "")
        out += [f"## Settings {i}: {shown}", "", f"Computed by {versions}."]
        if foreign:
            out.append(
                f"**Made by another sentprobe version than this one ({__version__}):** "
                "`sentprobe run` with these settings computes these results again."
            )
        out += ["", "```toml", text, "```", ""]
    return "\n".join(out)
