"""Options and choices shared by several commands, declared once.

Each alias is a typer ``Annotated`` type: a command writes ``results: Results = DEFAULT_RESULTS``
and gets the same flag, help and checking as every other command that takes it. Choices are
enums, so click checks them and reports a bad value itself (usage line, exit 2).
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

#: Where ``run`` writes and ``report``/``crosslang`` read unless told otherwise.
DEFAULT_RESULTS = Path("sentprobe-results/results.sqlite")


class Format(str, Enum):
    """Output format of a results table."""

    markdown = "markdown"
    csv = "csv"
    latex = "latex"
    json = "json"


class ReportFormat(str, Enum):
    """``report``'s formats: a table, MTEB's results folder (``-o DIR``), or a model card's
    ``model-index`` block."""

    markdown = "markdown"
    csv = "csv"
    latex = "latex"
    json = "json"
    mteb = "mteb"
    model_index = "model-index"


class Metric(str, Enum):
    test_score = "test_score"
    dev_score = "dev_score"


class DType(str, Enum):
    float32 = "float32"
    bfloat16 = "bfloat16"
    float16 = "float16"


class By(str, Enum):
    """``report --by``: a breakdown instead of the table."""

    subtype = "subtype"


class Mode(str, Enum):
    gain = "gain"
    diff = "diff"
    ratio = "ratio"


class AuditFormat(str, Enum):
    text = "text"
    json = "json"


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    never = "never"


class Show(str, Enum):
    info = "info"
    warning = "warning"
    error = "error"


class Layout(str, Enum):
    senteval = "senteval"
    xprobe = "xprobe"


class Bands(str, Enum):
    auto = "auto"
    profile = "profile"


class Profile(str, Enum):
    paper = "paper"
    xprobe = "xprobe"


def parse_layer(value: str | None) -> int | str | None:
    """``--layer``: an integer, 'last' or 'all'; anything else is a usage error (exit 2)."""
    if value is None or value in ("all", "last"):
        return value
    try:
        return int(value)
    except ValueError:
        raise typer.BadParameter(f"expected an integer, 'last' or 'all', got {value!r}") from None


def parse_pooling(value: str | None) -> str | None:
    """``--pooling``: one pooling or several, comma-separated; a bad one is a usage error."""
    if value is None:
        return None
    from sentprobe.encoders.pooling import parse_poolings
    from sentprobe.errors import SentprobeError

    try:
        return ",".join(parse_poolings(value))
    except SentprobeError as e:
        raise typer.BadParameter(str(e)) from None


# -- results store and output ----------------------------------------------------------------
Results = Annotated[Path, typer.Option(help="SQLite results store.")]
RunResults = Annotated[Path, typer.Option(help="SQLite results store; runs accumulate.")]
TableFormat = Annotated[Format, typer.Option("--format", "-f", help="Table format.")]
TableOutput = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="Write the table here."),  # noqa: UP007
]
ProbeFilter = Annotated[str | None, typer.Option(help="Only results of this probe.")]  # noqa: UP007
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")]
RunName = Annotated[
    str | None,
    typer.Option(  # noqa: UP007
        help="The run's row name in results tables, set when the run starts [train: the "
        "folder's name; map-encoder: TEACHER->LANG/ARCH/FOLDER]: runs probed into one store "
        "need names of their own."
    ),
]

# -- encoders ------------------------------------------------------------------------------
Layer = Annotated[
    str | None,
    typer.Option(  # noqa: UP007
        help="Hugging Face models: the layer to pool: 0 the embeddings, 1..L the transformer "
        "layers, negative from the last (-2: the one before it), 'last' or 'all' (one row per "
        "layer) [default: last].",
        callback=parse_layer,
    ),
]
PoolingOption = Annotated[
    str | None,
    typer.Option(  # noqa: UP007
        help="Hugging Face models: mean, max, cls (first token), last, pos:K (the K-th token; "
        "-1 is the last) or marker:TEXT (the token ending TEXT in --prompt); several, "
        "comma-separated, are read from one forward pass (one row per layer and pooling) "
        "[default: mean].",
        callback=parse_pooling,
    ),
]
PromptOption = Annotated[
    str | None,
    typer.Option(  # noqa: UP007
        help="Hugging Face models: a template with one {} where each sentence goes, e.g. "
        '\'This sentence: "{}" means in one word:"\'. Part of the cache key.',
    ),
]
DeviceOption = Annotated[
    str | None,
    typer.Option(  # noqa: UP007
        help="Hugging Face models: cuda, cuda:N or cpu [default: cuda when there is one]."
    ),
]
DeviceMapOption = Annotated[
    str | None,
    typer.Option(  # noqa: UP007
        "--device-map",
        help="Hugging Face models too large for one device: auto, balanced or sequential "
        "spreads the layers over the GPUs and the CPU, each layer's weights brought to the "
        "GPU for its part of the forward pass (pip install 'sentprobe[offload]').",
    ),
]
BatchSize = Annotated[
    int | None,
    typer.Option(  # noqa: UP007
        help="Sentences per encoder batch [default: the encoder's; Hugging Face models on CUDA: "
        "as many as half the free GPU memory holds]."
    ),
]
DTypeOption = Annotated[
    DType | None,
    typer.Option(  # noqa: UP007
        "--dtype",
        help="Hugging Face / sentence-transformers models: float32 [default], bfloat16 (CPU or "
        "GPU) or float16 (CUDA only). Part of the cache key.",
    ),
]
Executor = Annotated[
    str,
    typer.Option(
        help="local, or ray (a local Ray instance, or the cluster $RAY_ADDRESS names), "
        "ray:ADDRESS or ray://HOST:PORT: run the units on a Ray cluster (docs/scaling.md)."
    ),
]
CacheDir = Annotated[
    Path | None,
    typer.Option(  # noqa: UP007
        help="Embedding cache [default: $SENTPROBE_CACHE or ~/.cache/sentprobe/embeddings]."
    ),
]
