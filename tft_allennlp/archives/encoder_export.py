"""
The encoder of a trained model archive written as a standard Hugging Face checkpoint, so that
GLUE fine-tuning (or any other library) can start from the injected encoder. Only the archive is
read: it holds the base's config, tokenizer and pooler (`tft_allennlp.common.transformer_source`).

A model trained with adapters (`tft_allennlp.modules.adapters`) is not merged unless asked (LoRA
only): the checkpoint is the encoder as it was (frozen), and the adapters are written beside it
(`adapters.json` and their weights; LoRA's as peft's adapter folder), loaded back with
`{"type": "tft_exported", "directory": OUT_DIR}`.
"""

import contextlib
import copy
import logging
from typing import TYPE_CHECKING, Any, Iterator, Optional

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data.tokenizers import PretrainedTransformerTokenizer

from tft_allennlp.archives.loading import (
    archive_embedder,
    archive_tokenizer,
    check_export_paths,
    opened_archive,
)
from tft_allennlp.archives.model_card import write_model_card
from tft_allennlp.archives.sentence_transformers_files import write_sentence_transformers_files
from tft_allennlp.common.output_paths import check_not_reading, output_directory
from tft_allennlp.modules.adapters.transformer_adapters import TransformerAdapters

if TYPE_CHECKING:  # transformers' model code: imported where a model is made (start-up)
    from transformers import PreTrainedModel

logger = logging.getLogger(__name__)


def export_encoder(
    archive_file: str,
    output_dir: str,
    weights_file: Optional[str] = None,
    sentence_transformers: bool = False,
    force: bool = False,
    card: bool = True,
    merge_adapters: bool = False,
) -> str:
    """
    Saves the archive's `PretrainedTransformerEmbedder` model and its reader's tokenizer to
    `output_dir` with `save_pretrained` (and, with `sentence_transformers`, the
    sentence-transformers files: the base's own modules when the base is a sentence-transformers
    model, else mean pooling) and, with `card`, a `README.md` model card (`model_card`), and
    returns `output_dir`. Nothing is read but the archive (and, for
    an archive made before archives held the checkpoint's files, the base checkpoint).
    `output_dir` must be new or empty unless `force` is given; the files appear there together,
    once all are written (`output_directory`). A model with adapters is written as the encoder
    it was trained from with the adapters beside it, or, with `merge_adapters` (LoRA), as one
    encoder with the adapters folded into its weights.
    """
    check_export_paths(archive_file, weights_file, output_dir)
    with opened_archive(archive_file, weights_file) as archive:
        embedder = archive_embedder(archive, archive_file)
        tokenizer = archive_tokenizer(archive, archive_file)
        adapters = embedder_adapters(embedder, archive_file, merge_adapters)
        beside = adapters is not None and not merge_adapters  # adapters written beside it
        if beside and sentence_transformers:
            raise ConfigurationError(
                f"{archive_file}: the model has adapters, which a sentence-transformers model "
                "would not run; export it without --sentence-transformers (or, for LoRA, "
                "with --merge-adapters)."
            )
        # The base the encoder was trained from is a user's checkpoint: never written over.
        base = getattr(embedder, "model_name", None)
        check_not_reading(output_dir, [base], "the base checkpoint the model was trained from")
        reads = [archive_file, weights_file]
        with output_directory(output_dir, force, reads) as target:
            transformer = embedder.transformer_model
            if adapters is not None:
                transformer = adapters.unloaded(transformer, merge_adapters)
            name_after_the_base(transformer, embedder)
            with _pooler_written_back(transformer, embedder):
                transformer.save_pretrained(target, safe_serialization=True)
            save_tokenizer(tokenizer, target)
            if adapters is not None and beside:
                adapters.export(target)
            if sentence_transformers:
                write_sentence_transformers_files(
                    target,
                    transformer.config.hidden_size,
                    archive.dataset_reader.encoder.max_length,  # type: ignore[attr-defined]
                    base=getattr(embedder, "source", None),
                )
            if card:
                kind = "sentence-transformers" if sentence_transformers else "transformers"
                write_model_card(
                    target,
                    kind,
                    archive,
                    archive_file,
                    base,
                    weights_file,
                    output_dir,
                    None if adapters is None else adapters_paragraph(adapters, merge_adapters),
                )
        if beside:
            logger.warning(
                "%s has adapters: wrote them beside the encoder (adapters.json and weights). The "
                "encoder alone is not the trained model; load both with the embedder's "
                '`adapters: {"type": "tft_exported", "directory": "%s"}`.',
                archive_file,
                output_dir,
            )
    logger.info("Wrote the encoder of %s to %s", archive_file, output_dir)
    return output_dir


def embedder_adapters(
    embedder: Any, archive_file: str, merge_adapters: bool
) -> Optional[TransformerAdapters]:
    """
    The adapters the archive's `embedder` was trained with, or none; a `ConfigurationError` when
    `merge_adapters` asks to merge adapters the model does not have.
    """
    adapters = getattr(embedder, "adapters", None)
    if adapters is None and merge_adapters:
        raise ConfigurationError(f"{archive_file}: the model has no adapters to merge.")
    return adapters


def adapters_paragraph(adapters: TransformerAdapters, merged: bool) -> str:
    """The model card's paragraph on the adapters of an export."""
    kind = adapters.export_config().get("type")
    if merged:
        return (
            f"Trained with `{kind}` adapters on a frozen encoder, merged into these weights: this "
            "checkpoint is the trained encoder."
        )
    return (
        f"Trained with `{kind}` adapters on a frozen encoder. This checkpoint is the encoder as it "
        "was before training; the trained adapters are beside it (`adapters.json` and their "
        "weights; LoRA's also as peft's adapter folder, `peft_adapter/`). Without them it is not "
        'the trained model: load both with the embedder\'s `"adapters": {"type": '
        '"tft_exported", "directory": ...}` (LoRA: also `PeftModel.from_pretrained(model, '
        '".../peft_adapter")`).'
    )


def save_tokenizer(
    tokenizer: PretrainedTransformerTokenizer, output_dir: str, max_length: Optional[int] = None
) -> None:
    """The Hugging Face tokenizer inside `tokenizer`, saved to `output_dir` (with
    `model_max_length` set to `max_length`, when given)."""
    # AllenNLP loads tokenizers with an `add_special_tokens` init argument, which
    # `save_pretrained` would try to write out as the method of that name; leave it out.
    hf_tokenizer = copy.deepcopy(tokenizer.tokenizer)
    hf_tokenizer.init_kwargs.pop("add_special_tokens", None)
    if max_length is not None:
        hf_tokenizer.model_max_length = max_length
    hf_tokenizer.save_pretrained(output_dir)


def name_after_the_base(transformer: "PreTrainedModel", embedder: torch.nn.Module) -> None:
    """The config's `_name_or_path` as the model name the encoder was trained from, not the
    temporary folder of the archive's copy that it was loaded from."""
    if getattr(embedder, "source", None) != getattr(embedder, "model_name", None):
        transformer.config._name_or_path = embedder.model_name


@contextlib.contextmanager
def _pooler_written_back(
    transformer: "PreTrainedModel", embedder: torch.nn.Module
) -> Iterator[None]:
    """
    While open, the transformer has the checkpoint's pooler that the embedder dropped (training
    never used it), so that the export loads as a whole model with nothing re-initialised.
    """
    if getattr(transformer, "pooler", False) is not None:
        yield  # no pooler in this architecture, or one kept in the model
        return
    pooler = getattr(embedder, "dropped_pooler", None)
    if pooler is None:
        # An archive made before archives kept the pooler: read it from the base, if at hand.
        from transformers import AutoModel

        base_name = transformer.config._name_or_path
        try:
            pooler = getattr(AutoModel.from_pretrained(base_name), "pooler", None)
        except OSError as error:
            logger.warning(
                "No pooler written: the base checkpoint %s is not at hand (%s); "
                "AutoModel will initialise one at random.",
                base_name,
                error,
            )
    setattr(transformer, "pooler", pooler)
    try:
        yield
    finally:
        setattr(transformer, "pooler", None)
