"""The plugin's two readers as tests build them: on the tiny BERT's tokenizer, options as given."""

import copy
import os

from allennlp.common import Params
from allennlp.data import DatasetReader


def build_reader(reader_type: str, **options) -> DatasetReader:
    tokenizer = {
        "type": "pretrained_transformer",
        "model_name": os.environ["TFT_MODEL"],
        "add_special_tokens": False,
    }
    return DatasetReader.from_params(
        # Params consumes what it reads: a copy leaves the caller's options as they were.
        Params(copy.deepcopy({"type": reader_type, "tokenizer": tokenizer, **options}))
    )


def glue_reader(task: str, **options) -> DatasetReader:
    return build_reader("tft_glue", task=task, **options)


def corpus_reader(**options) -> DatasetReader:
    return build_reader("tft_aligned_paraphrases", **options)
