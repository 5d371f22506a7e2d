"""
The README's "Your own task" config, as a user would run it: copied from the README into a folder
of its own beside its data, trained for one epoch on the tiny model, predicted.
"""

import json
import re

from allennlp.commands.train import train_model_from_file
from allennlp.predictors import Predictor

from tests import PROJECT_ROOT


def test_the_readme_config_for_your_own_task_trains_and_predicts_its_labels(tmp_path, monkeypatch):
    readme = (PROJECT_ROOT / "README.md").read_text()
    section = readme.split("## Your own task", 1)[1].split("\n## ", 1)[0]
    (config,) = re.findall(r"```jsonnet\n(.*?)```", section, re.DOTALL)
    rows = ["id\tfirst\tsecond\tverdict"] + [
        f"{i}\t{a}\t{b}\t{label}"
        for i, (a, b, label) in enumerate(
            [
                ("the cat sat .", "a cat sat .", "same"),
                ("the dog ran .", "it rained .", "different"),
            ]
            * 2
        )
    ]
    for name in ("train.tsv", "dev.tsv"):
        (tmp_path / name).write_text("\n".join(rows) + "\n")
    (tmp_path / "paraphrase.jsonnet").write_text(config)
    monkeypatch.chdir(tmp_path)
    train_model_from_file(
        "paraphrase.jsonnet", "runs/paraphrase", overrides=json.dumps({"trainer.num_epochs": 1})
    )
    predictor = Predictor.from_path("runs/paraphrase/model.tar.gz")
    output = predictor.predict_json({"sentence1": "the cat sat .", "sentence2": "a cat sat ."})
    assert output["label"] in ("same", "different")
    metrics = json.loads((tmp_path / "runs/paraphrase/metrics.json").read_text())
    assert {"validation_accuracy", "validation_f1", "validation_combined_score"} <= metrics.keys()
