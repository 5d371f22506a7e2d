"""
Self-contained archives: the `model.tar.gz` of every config family predicts and evaluates the
same after its base checkpoint is deleted and the archive is moved to another directory tree;
an injection archive given as `TFT_MODEL` fine-tunes exactly as its export does, into an archive
that needs neither.
"""

import json
import os
import pathlib
import shutil
import tarfile

import torch

from tests import CONFIGS_ROOT, FIXTURES_ROOT
from tests.allennlp_cli import forked_allennlp, write_config
from tft_allennlp.common.transformer_source import ARCHIVED_TRANSFORMERS, POOLER_FILE

GLUE = FIXTURES_ROOT / "glue"
CORPUS = FIXTURES_ROOT / "paraphrase/aligned.jsonl"
PAIRS = FIXTURES_ROOT / "predict/pairs.jsonl"
SPLIT = {
    "dataset_reader.validation_fraction": 0.25,
    "validation_dataset_reader.validation_fraction": 0.25,
}
PHRASES = {
    "source": ["A", "man", "is", "playing", "a", "flute", "."],
    "target": ["A", "man", "plays", "the", "flute", "."],
    "phrase_pairs": [[[3, 5], [2, 4]], [[0, 1], [0, 1]]],
}
MULTITASK_PAIRS = [
    {"task": "mrpc", "sentence1": "The cat sat.", "sentence2": "A cat was sitting."},
    {"task": "stsb", "sentence1": "A man plays.", "sentence2": "A man is playing."},
    {"task": "sst2", "sentence": "A wonderful film."},
]
MULTITASK_DEV = {
    "mrpc": str(GLUE / "MRPC/dev.tsv"),
    "sst2": str(GLUE / "SST-2/dev.tsv"),
    "stsb": str(GLUE / "STS-B/dev.tsv"),
}
# config, extra overrides, predict input, evaluate input
FAMILIES = {
    "glue": ("glue/mrpc.jsonnet", {}, "pairs", str(GLUE / "MRPC/dev.tsv")),
    "siamese": ("siamese/mrpc_softmax.jsonnet", {}, "pairs", str(GLUE / "MRPC/dev.tsv")),
    "adapters": ("adapters/mrpc_houlsby.jsonnet", {}, "pairs", str(GLUE / "MRPC/dev.tsv")),
    "smart": ("smart/stsb.jsonnet", {}, "pairs", str(GLUE / "STS-B/dev.tsv")),
    "multitask": ("multitask/sst2_mrpc_stsb.jsonnet", {}, "multitask", json.dumps(MULTITASK_DEV)),
    "injection": ("injection/tft.jsonnet", SPLIT, "phrases", str(CORPUS)),
}


def _inputs(directory: pathlib.Path) -> dict:
    inputs = {"pairs": str(PAIRS)}
    for name, lines in (("phrases", [PHRASES]), ("multitask", MULTITASK_PAIRS)):
        path = directory / f"{name}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        inputs[name] = str(path)
    return inputs


def _predict_and_evaluate(models: dict, inputs: dict, out: pathlib.Path) -> dict:
    """`allennlp predict` and `allennlp evaluate` of each: {family: (predictions, metrics)}."""
    out.mkdir()
    commands = []
    for family, model in models.items():
        _, _, predict_input, evaluate_input = FAMILIES[family]
        predictions, metrics = out / f"{family}.jsonl", out / f"{family}.json"
        commands.append(
            ["predict", model, inputs[predict_input], "--silent", "--output-file", str(predictions)]
        )
        commands.append(["evaluate", model, evaluate_input, "--output-file", str(metrics)])
    for result in forked_allennlp(*commands):
        assert result.returncode == 0, result.stderr[-3000:]
    return {
        family: (
            (out / f"{family}.jsonl").read_text(),
            json.loads((out / f"{family}.json").read_text()),
        )
        for family in models
    }


def test_every_archive_predicts_and_evaluates_the_same_without_its_base(tmp_path, monkeypatch):
    base = tmp_path / "base"
    shutil.copytree(os.environ["TFT_MODEL"], base)
    monkeypatch.setenv("TFT_MODEL", str(base))
    runs = tmp_path / "runs"
    training = [
        [
            "train",
            str(
                write_config(
                    tmp_path / f"{family}.json",
                    CONFIGS_ROOT / config,
                    {"trainer.num_epochs": 1, **extra},
                )
            ),
            "-s",
            str(runs / family),
        ]
        for family, (config, extra, _, _) in FAMILIES.items()
    ]
    for result in forked_allennlp(*training):
        assert result.returncode == 0, result.stderr[-3000:]
    inputs = _inputs(tmp_path)
    # Before: each serialization directory, which AllenNLP loads with the base checkpoint.
    before = _predict_and_evaluate(
        {family: str(runs / family) for family in FAMILIES}, inputs, tmp_path / "before"
    )

    elsewhere = tmp_path / "elsewhere/deeper"
    for family in FAMILIES:
        archive = runs / family / "model.tar.gz"
        with tarfile.open(archive) as tar:
            names = tar.getnames()
        copies = [name for name in names if name.startswith(ARCHIVED_TRANSFORMERS + "/")]
        # The base's config, tokenizer and pooler travel in the archive, its weights do not.
        for file in ("config.json", "vocab.txt", "tokenizer_config.json", POOLER_FILE):
            assert any(name.endswith("/" + file) for name in copies), (family, file)
        assert not any(name.endswith("model.safetensors") for name in names), family
        (elsewhere / family).mkdir(parents=True)
        shutil.copy(archive, elsewhere / family / "model.tar.gz")
    shutil.rmtree(base)
    shutil.rmtree(runs)
    after = _predict_and_evaluate(
        {family: str(elsewhere / family / "model.tar.gz") for family in FAMILIES},
        inputs,
        tmp_path / "after",
    )
    for family in FAMILIES:
        predictions, metrics = after[family]
        lines = len(MULTITASK_PAIRS) if family == "multitask" else 1 if family == "injection" else 4
        assert len(predictions.splitlines()) == lines, family
        assert predictions == before[family][0], family
        assert metrics == before[family][1], family
    # The loss is among the metrics of every family: the dev sets were really scored.
    assert all("loss" in after[family][1] for family in FAMILIES)


def test_an_injection_archive_fine_tunes_as_its_export(tmp_path, monkeypatch):
    """`TFT_MODEL=injection/model.tar.gz` is `tft-export` then `TFT_MODEL=export`, bit for bit;
    the fine-tuned archive then needs neither the injection nor the export."""
    monkeypatch.setenv("TFT_CACHE", str(tmp_path / "cache"))
    injection = write_config(
        tmp_path / "injection.json",
        CONFIGS_ROOT / "injection/tft.jsonnet",
        {"trainer.num_epochs": 1, **SPLIT},
    )
    (trained,) = forked_allennlp(["train", str(injection), "-s", str(tmp_path / "injection")])
    assert trained.returncode == 0, trained.stderr[-3000:]
    archive = str(tmp_path / "injection/model.tar.gz")
    (exported,) = forked_allennlp(["tft-export", archive, str(tmp_path / "encoder")])
    assert exported.returncode == 0, exported.stderr[-3000:]

    configs = {}
    for route, model in (("export", str(tmp_path / "encoder")), ("archive", archive)):
        monkeypatch.setenv("TFT_MODEL", model)
        configs[route] = write_config(
            tmp_path / f"{route}.json",
            CONFIGS_ROOT / "glue/mrpc.jsonnet",
            {"trainer.num_epochs": 1},
        )
    results = forked_allennlp(
        *[["train", str(config), "-s", str(tmp_path / route)] for route, config in configs.items()]
    )
    for result in results:
        assert result.returncode == 0, result.stderr[-3000:]
    from_export = torch.load(tmp_path / "export/best.th")
    from_archive = torch.load(tmp_path / "archive/best.th")
    assert from_export.keys() == from_archive.keys()
    for name, tensor in from_export.items():
        assert torch.equal(tensor, from_archive[name]), name
    (cached,) = os.listdir(tmp_path / "cache/encoders")
    for file in ("model.safetensors", "config.json", "tokenizer.json"):
        assert (tmp_path / "cache/encoders" / cached / file).read_bytes() == (
            tmp_path / "encoder" / file
        ).read_bytes(), file

    predictions = {}
    for route in ("export", "archive"):
        shutil.copy(tmp_path / route / "model.tar.gz", tmp_path / f"{route}.tar.gz")
    for path in ("injection", "encoder", "cache", "export", "archive"):
        shutil.rmtree(tmp_path / path)
    commands = [
        [
            "predict",
            str(tmp_path / f"{route}.tar.gz"),
            str(PAIRS),
            "--silent",
            "--output-file",
            str(tmp_path / f"{route}.jsonl"),
        ]
        for route in ("export", "archive")
    ]
    for result in forked_allennlp(*commands):
        assert result.returncode == 0, result.stderr[-3000:]
    for route in ("export", "archive"):
        predictions[route] = (tmp_path / f"{route}.jsonl").read_text()
    assert len(predictions["archive"].splitlines()) == 4
    assert predictions["archive"] == predictions["export"]
