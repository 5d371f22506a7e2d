import json
import os
import subprocess
import sys

import torch
from allennlp.commands.train import train_model_from_file
from sentence_transformers import SentenceTransformer
from transformers import AutoModel, AutoTokenizer

from tests import CONFIGS_ROOT, PROJECT_ROOT

SPLIT = {
    "dataset_reader.validation_fraction": 0.25,
    "validation_dataset_reader.validation_fraction": 0.25,
}
SENTENCES = ["A man plays the flute.", "Two dogs run through the park.", "the cat sat"]


def test_sentence_transformers_loads_the_export_with_mean_pooling(tmp_path):
    train_model_from_file(
        CONFIGS_ROOT / "injection/tft.jsonnet",
        tmp_path / "injection",
        overrides=json.dumps({"trainer.num_epochs": 1, **SPLIT}),
    )
    exported = tmp_path / "encoder"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "allennlp",
            "tft-export",
            str(tmp_path / "injection/model.tar.gz"),
            str(exported),
            "--sentence-transformers",
        ],
        cwd=PROJECT_ROOT,
        check=True,
        env=dict(os.environ),
        capture_output=True,
    )
    model = SentenceTransformer(str(exported), device="cpu")
    assert model.max_seq_length == 128
    embeddings = model.encode(SENTENCES, convert_to_tensor=True)
    # The encoder's own mean over its unpadded token vectors.
    tokenizer, encoder = (
        AutoTokenizer.from_pretrained(exported),
        AutoModel.from_pretrained(exported).eval(),
    )
    inputs = tokenizer(SENTENCES, padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = encoder(**inputs).last_hidden_state
    mask = inputs["attention_mask"].unsqueeze(-1).float()
    expected = (hidden * mask).sum(1) / mask.sum(1)
    assert embeddings.shape == (3, hidden.size(-1))
    assert torch.allclose(embeddings, expected, atol=1e-5)
