"""Subword decoder targets: learned on the training split only, saved in the run folder and
its fingerprint, decoded back to text, and BLEU on detokenised text (sacrebleu's 13a)."""

from __future__ import annotations

import json

import pytest
from test_trainer import TINY, sentences

from sentprobe.errors import SentprobeError
from sentprobe.training.checkpoint import TrainedRunEncoder, read_manifest
from sentprobe.training.objectives import bleu
from sentprobe.training.subwords import SubwordTargets
from sentprobe.training.trainer import TrainConfig, _split, train


def _config(tmp_path, objective="autoencoder", **kw) -> TrainConfig:
    return TrainConfig(
        "bilstm-max",
        objective,
        [str(tmp_path / "corpus.txt")],
        str(tmp_path / "run"),
        epochs=1,
        preset="demo",
        vectors=None,
        threads=1,
        targets="bpe",
        overrides={**TINY, "target_vocab_size": 80},
        **kw,
    )


def test_bpe_targets_learn_from_the_training_split_only(tmp_path):
    """The validation sentences carry a word nowhere else: no subword of it is learned, and
    the tokenizer is the one learned on the training lines alone."""
    lines = sentences(40)
    valid, _ = _split(len(lines), 0.05, TINY["batch_size"], 1234)
    lines = [f"{s} zyzzyva zyzzyva" if i in valid else s for i, s in enumerate(lines)]
    (tmp_path / "corpus.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = train(_config(tmp_path), progress=False)
    manifest = read_manifest(run)
    assert manifest["target_vocab"]["kind"] == "bpe" and manifest["target_vocab"]["size"] == 80
    assert "bleu" in manifest["epochs"][0]["valid"]
    saved = SubwordTargets.load(run / "target-bpe.json")
    alone = SubwordTargets.train([s for i, s in enumerate(lines) if i not in valid], 80)
    assert saved.tokenizer.to_str() == alone.tokenizer.to_str()
    assert not any("zy" in piece for piece in saved.tokenizer.get_vocab())
    assert saved.text(saved.ids(lines[0])) == lines[0]  # decoding gives the text back
    before = TrainedRunEncoder(str(run)).fingerprint
    doc = json.loads((run / "target-bpe.json").read_text(encoding="utf-8"))
    doc["added_tokens"][0]["content"] = "<blank>"
    (run / "target-bpe.json").write_text(json.dumps(doc), encoding="utf-8")
    assert TrainedRunEncoder(str(run)).fingerprint != before


def test_bpe_needs_a_text_decoder(tmp_path):
    (tmp_path / "corpus.txt").write_text("a\tb\tentailment\n", encoding="utf-8")
    with pytest.raises(SentprobeError, match="--targets bpe: nli has no text decoder"):
        train(_config(tmp_path, "nli"), progress=False)


def test_subword_bleu_is_on_detokenised_text():
    """Moses tokens against plain text: 100 once both are detokenised and 13a-tokenised,
    not 100 when compared token for token."""
    hypotheses, references = ["It 's a test , isn 't it ?"], ["It's a test, isn't it?"]
    assert bleu(hypotheses, references, detokenize=True) == pytest.approx(100.0)
    assert bleu(hypotheses, references) < 50
