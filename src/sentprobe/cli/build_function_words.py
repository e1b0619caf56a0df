"""``sentprobe build --family kim2019``: Kim et al. (2019)'s function-word sets from a text
corpus (acceptability) and/or a premise/hypothesis file (NLI), in the DNC release format."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from rich.table import Table

from sentprobe.cli.console import err, note, report_failures
from sentprobe.errors import SentprobeError

#: The default ``--sizes`` of the other families: read as "the family's default" here.
OTHER_FAMILIES_DEFAULT = "100000,10000,10000"
#: Items per set by default: about the size of the release's sets (89-591).
DEFAULT_SIZE = 500


def parse_size(text: str) -> int | None:
    """``"500"`` -> 500 items per set; ``"auto"`` -> None (as many as the input supports)."""
    if text == OTHER_FAMILIES_DEFAULT:
        return DEFAULT_SIZE
    if text.strip().lower() == "auto":
        return None
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        value = 0
    if value < 2:
        raise SentprobeError(
            f"--sizes for --family kim2019 is one number of items per set (e.g. 500) or "
            f"'auto'; got {text!r}"
        )
    return value


def set_names(text: str | None) -> list[str] | None:
    """Set names (``acceptability-whwords``) or their paper-style names (``wh-words``,
    ``Def-collocations``) of the sets sentprobe generates."""
    from sentprobe.datasets.loaders.dnc import DNC_SETS
    from sentprobe.generation.function_words import ALL_SETS

    if not text:
        return None
    by_paper = {DNC_SETS[stem].paper_name.lower(): stem for stem in ALL_SETS}
    out = []
    for name in (t.strip() for t in text.split(",") if t.strip()):
        stem = name if name in ALL_SETS else by_paper.get(name.lower())
        if stem is None:
            known = ", ".join(DNC_SETS[stem].paper_name for stem in ALL_SETS)
            hint = ""
            if name.lower() in ("def", "coord"):
                hint = (
                    f" ({name} swaps the word anywhere, where a swap often stays acceptable: "
                    "its labels need annotators, so it is not generated; "
                    f"{name.capitalize()}-collocations tests the collocations that select it)"
                )
            raise SentprobeError(
                f"--tasks: unknown function-word set {name!r}{hint}; known: {known}"
            )
        out.append(stem)
    return out


def _cast(value: str, default: object, item: str) -> object:
    """``value`` as the type of the parameter's default (int, float, bool, str; None-defaults
    take an int if it parses, else the string)."""
    try:
        if isinstance(default, bool):
            if value.lower() not in ("true", "false"):
                raise ValueError(value)
            return value.lower() == "true"
        if isinstance(default, (int, float)):
            return type(default)(value)
        if default is None:
            return int(value) if value.lstrip("-").isdigit() else value
        return value
    except ValueError:
        raise SentprobeError(f"--set {item!r}: expected a value like {default!r}") from None


def set_params(items: list[str] | None) -> dict[str, dict]:
    """``--set acceptability-eos.sigma=2`` -> generator fields per set."""
    import dataclasses

    from sentprobe.generation.function_words import ACCEPTABILITY_SETS, NLI_SETS

    generators: dict[str, Any] = {**ACCEPTABILITY_SETS, **NLI_SETS}
    out: dict[str, dict] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        name, dot, param = key.strip().rpartition(".")
        if not sep or not dot or name not in generators:
            raise SentprobeError(
                f"--set expects SET.PARAM=VALUE with SET one of {', '.join(generators)}; "
                f"got {item!r}"
            )
        fields = {f.name: f for f in dataclasses.fields(generators[name])}
        if param not in fields:
            raise SentprobeError(f"--set {item!r}: {name} has no parameter {param!r}")
        out.setdefault(name, {})[param] = _cast(value.strip(), fields[param].default, item)
    return out


def build_kim2019(
    corpus: list[Path],
    out: Path,
    *,
    tasks: str | None,
    sizes: str,
    seed: int,
    running: bool,
    lang: str,
    annotator: str | None,
    settings: list[str] | None,
    skip_failed: bool,
) -> None:
    """Build, write QUALITY.md, print one row per set; nothing written if a set fails."""
    from sentprobe.analysis.quality import write_function_word_quality
    from sentprobe.generation.function_words import build_function_words

    layout: Literal["lines", "running"] = "running" if running else "lines"
    result = build_function_words(
        corpus,
        out,
        sets=set_names(tasks),
        size=parse_size(sizes),
        seed=seed,
        layout=layout,
        lang=lang,
        annotator=annotator,
        params=set_params(settings),
        skip_failed=skip_failed,
        finish=write_function_word_quality,
    )
    table = Table(title=str(out) if result.written else "nothing written")
    for col in ("set", "items", "per label", "most frequent rules"):
        table.add_column(col)
    for fw in result.sets:
        rules = sorted(
            (
                (k, v)
                for k, v in fw.stats.items()
                if k.startswith(("items:", "swapped", "sub-type"))
            ),
            key=lambda kv: -kv[1],
        )[:3]
        table.add_row(
            fw.name,
            str(len(fw.items)),
            ", ".join(f"{k} {v}" for k, v in fw.counts().items()),
            ", ".join(f"{k}: {v}" for k, v in rules),
        )
    err.print(table)
    report_failures(
        [m if m.startswith(name) else f"{name}: {m}" for name, m in result.failures.items()],
        skip_failed,
        f"{len(result.failures)} set(s) could not be built; nothing was written. Use a "
        "smaller --sizes (or --sizes auto), a larger corpus, or --skip-failed.",
    )
    if result.written:
        note(f"wrote {out} (DNC format, manifest.json, QUALITY.md)")
