"""
What an injection model makes of the shown pairs: the `tft_phrase_pairs` predictor of an
injection archive (`tft_paraphrase_injector`) run on them in batches, as `allennlp predict`
runs it, with a progress bar.
"""

import os
from typing import Any, Dict, List, Sequence

from allennlp.common.checks import ConfigurationError
from allennlp.common.tqdm import Tqdm
from allennlp.common.util import JsonDict
from allennlp.models.archival import Archive
from allennlp.predictors import Predictor

from tft_allennlp.archives.loading import is_hugging_face_folder, load_model_archive
from tft_allennlp.common.aligned_corpus import PhrasePair
from tft_allennlp.models.paraphrase_injector import ParaphraseInjector

PREDICTOR = "tft_phrase_pairs"


def load_injection_archive(archive_file: str) -> Archive:
    """
    The injection archive `archive_file`, loaded on the CPU; a `ConfigurationError` naming it
    when it is missing, no model archive, or the archive of another model.
    """
    if not os.path.exists(archive_file):
        raise ConfigurationError(f"{archive_file}: no such file or directory")
    if is_hugging_face_folder(archive_file):
        raise ConfigurationError(
            f"{archive_file}: a Hugging Face model folder, not an injection archive (the "
            "model.tar.gz of training_configs/injection/)"
        )
    archive = load_model_archive(archive_file)
    if not isinstance(archive.model, ParaphraseInjector):
        kind = archive.config.as_dict(quiet=True).get("model", {}).get("type")
        raise ConfigurationError(
            f"{archive_file}: not an injection archive (its model is {kind}); give the "
            "model.tar.gz of an injection run (training_configs/injection/)"
        )
    return archive


def reader_parameters(archive: Archive) -> Dict[str, Any]:
    """The parameters of the archive's training reader (`tft_aligned_paraphrases`)."""
    return archive.config.as_dict(quiet=True).get("dataset_reader", {})


def phrase_pair_request(
    source: List[str], target: List[str], phrase_pairs: Sequence[PhrasePair]
) -> JsonDict:
    """The `tft_phrase_pairs` predictor's input for two word lists and their phrase pairs."""
    return {
        "source": source,
        "target": target,
        "phrase_pairs": [[list(s), list(t)] for s, t in phrase_pairs],
    }


def predict(archive: Archive, requests: Sequence[JsonDict], batch_size: int = 32) -> List[JsonDict]:
    """
    The `tft_phrase_pairs` predictor's output for each of `requests`, in order, predicted
    `batch_size` requests at a time (`predict_batch_json`, as `allennlp predict --batch-size`).
    """
    predictor = Predictor.from_archive(archive, PREDICTOR)
    outputs: List[JsonDict] = []
    with Tqdm.tqdm(total=len(requests), desc="scoring", unit=" pairs") as progress:
        for start in range(0, len(requests), batch_size):
            batch = list(requests[start : start + batch_size])
            outputs.extend(predictor.predict_batch_json(batch))
            progress.update(len(batch))
    return outputs
