"""
The files that make an exported Hugging Face checkpoint directory load as
`SentenceTransformer(OUT_DIR)` as well: the base's own modules when the base was a
sentence-transformers model, else mean pooling. Written as plain JSON; sentence-transformers is
needed only to load the result.
"""

import json
import os
import shutil
from typing import List, Optional

from allennlp.common.checks import ConfigurationError

from tft_allennlp.common.transformer_source import sentence_transformers_modules


def write_sentence_transformers_files(
    directory: str, hidden_size: int, max_seq_length: int, base: Optional[str] = None
) -> None:
    """
    The files that make a Hugging Face checkpoint directory a sentence-transformers model, the
    checkpoint being its `Transformer` module. When `base` (the directory the encoder was
    trained from, or its copy in the archive) is a sentence-transformers model, its modules
    after the transformer (pooling, `Normalize`, dense layers) and its transformer settings
    (`max_seq_length`) are kept, so the export encodes as the base does. Otherwise `Pooling`
    with the mean of the token vectors (padding excluded), as Sentence-BERT pools, and
    `max_seq_length` as the reader's.
    """
    modules = sentence_transformers_modules(base) if base and os.path.isdir(base) else None
    if base is not None and modules is not None:
        _copy_sentence_transformers_modules(base, modules, directory)
        return
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {
            "idx": 1,
            "name": "1",
            "path": "1_Pooling",
            "type": "sentence_transformers.models.Pooling",
        },
    ]
    pooling = {
        "word_embedding_dimension": hidden_size,
        "pooling_mode_cls_token": False,
        "pooling_mode_mean_tokens": True,
        "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False,
        "pooling_mode_weightedmean_tokens": False,
        "pooling_mode_lasttoken": False,
        "include_prompt": True,
    }
    files = {
        "modules.json": modules,
        "sentence_bert_config.json": {"max_seq_length": max_seq_length, "do_lower_case": False},
        os.path.join("1_Pooling", "config.json"): pooling,
        "config_sentence_transformers.json": {
            "prompts": {},
            "default_prompt_name": None,
            "similarity_fn_name": "cosine",
        },
    }
    for name, content in files.items():
        path = os.path.join(directory, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as handle:
            json.dump(content, handle, indent=2)


def _copy_sentence_transformers_modules(base: str, modules: List[dict], directory: str) -> None:
    """The base's sentence-transformers files around the exported transformer."""
    transformers_ = [module for module in modules if module["type"].endswith(".Transformer")]
    if len(transformers_) != 1 or transformers_[0].get("path", "") != "":
        raise ConfigurationError(
            f"{base}: modules.json must hold one Transformer module, at the top of the model "
            "directory, to export the encoder in its place."
        )
    for module in modules:
        if module is not transformers_[0] and module.get("path"):
            source = os.path.join(base, module["path"])
            # Modules without parameters or settings (Normalize) may have no folder at all.
            if os.path.isdir(source):
                shutil.copytree(source, os.path.join(directory, module["path"]))
    for name in ("modules.json", "sentence_bert_config.json", "config_sentence_transformers.json"):
        if os.path.isfile(os.path.join(base, name)):
            shutil.copyfile(os.path.join(base, name), os.path.join(directory, name))
