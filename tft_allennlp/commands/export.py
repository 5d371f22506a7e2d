"""
`allennlp tft-export MODEL_ARCHIVE OUT_DIR`: writes the encoder of a trained model as a
standard Hugging Face checkpoint, so that GLUE fine-tuning (or any other library) can start
from the injected encoder: `TFT_MODEL=OUT_DIR allennlp train training_configs/glue/mrpc.jsonnet`.
With `--sentence-transformers` the directory also loads as `SentenceTransformer(OUT_DIR)`, with
mean pooling. A model trained with adapters (`tft_allennlp.modules.adapters`) is not merged: the
checkpoint is the encoder as it was (frozen), and the adapters are written beside it
(`adapters.json`, `adapters.th`), loaded back with `{"type": "tft_exported", "directory": OUT_DIR}`.
"""

import argparse
import copy
import gzip
import json
import logging
import os
import sys
import tarfile
import zlib
from typing import Optional

from allennlp.commands.subcommand import Subcommand
from allennlp.common.checks import ConfigurationError
from allennlp.data.tokenizers import PretrainedTransformerTokenizer
from allennlp.models.archival import Archive, load_archive
from allennlp.modules.token_embedders import PretrainedTransformerEmbedder
from transformers import AutoModel

logger = logging.getLogger(__name__)


@Subcommand.register("tft-export")
class Export(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = (
            "Write the transformer encoder of a trained model archive as a Hugging Face "
            "checkpoint (config, safetensors weights, tokenizer files)."
        )
        subparser = parser.add_parser(self.name, description=description, help=description)
        subparser.add_argument(
            "archive_file", help="model.tar.gz, or a serialization directory (uses best.th)"
        )
        subparser.add_argument("output_dir", help="where to write the checkpoint")
        subparser.add_argument(
            "--weights-file", help="a weights file to use instead of the archive's best.th"
        )
        subparser.add_argument(
            "--sentence-transformers",
            action="store_true",
            help="also write the files that make the directory a sentence-transformers model "
            "(the encoder, then mean pooling over the tokens)",
        )
        subparser.set_defaults(func=_export_from_args)
        return subparser


def _export_from_args(args: argparse.Namespace) -> None:
    try:
        export_encoder(
            args.archive_file, args.output_dir, args.weights_file, args.sentence_transformers
        )
    except ConfigurationError as error:
        sys.exit(f"tft-export: {error}")


def export_encoder(
    archive_file: str,
    output_dir: str,
    weights_file: str = None,
    sentence_transformers: bool = False,
) -> str:
    """
    Saves the archive's `PretrainedTransformerEmbedder` model and its reader's tokenizer to
    `output_dir` with `save_pretrained` (and, with `sentence_transformers`, the
    sentence-transformers files for mean pooling), and returns `output_dir`.
    """
    _check_paths(archive_file, weights_file, output_dir)
    archive = load_model_archive(archive_file, weights_file)
    embedders = [
        module
        for module in archive.model.modules()
        if isinstance(module, PretrainedTransformerEmbedder)
    ]
    if len(embedders) != 1:
        raise ConfigurationError(
            f"{archive_file}: expected one pretrained_transformer embedder, found {len(embedders)}."
        )
    # The plugin's readers encode through a `PairEncoder`, which holds the tokenizer.
    tokenizer = getattr(getattr(archive.dataset_reader, "encoder", None), "tokenizer", None)
    if not isinstance(tokenizer, PretrainedTransformerTokenizer):
        raise ConfigurationError(
            f"{archive_file}: the reader has no pretrained_transformer tokenizer."
        )
    adapters = getattr(embedders[0], "adapters", None)
    if adapters is not None and sentence_transformers:
        raise ConfigurationError(
            f"{archive_file}: the model has adapters, which a sentence-transformers model would "
            "not run; export it without --sentence-transformers."
        )
    os.makedirs(output_dir, exist_ok=True)
    transformer = embedders[0].transformer_model
    if hasattr(transformer, "pooler") and transformer.pooler is None:
        # The embedder dropped the checkpoint's pooler, which training never used: write the
        # checkpoint's own back, so that the export loads as a whole model, nothing re-initialised.
        base_name = transformer.config._name_or_path
        try:
            transformer.pooler = getattr(AutoModel.from_pretrained(base_name), "pooler", None)
        except OSError as error:
            logger.warning(
                "No pooler written: the base checkpoint %s is not at hand (%s); "
                "AutoModel will initialise one at random.",
                base_name,
                error,
            )
    transformer.save_pretrained(output_dir, safe_serialization=True)
    # AllenNLP loads tokenizers with an `add_special_tokens` init argument, which
    # `save_pretrained` would try to write out as the method of that name; leave it out.
    hf_tokenizer = copy.deepcopy(tokenizer.tokenizer)
    hf_tokenizer.init_kwargs.pop("add_special_tokens", None)
    hf_tokenizer.save_pretrained(output_dir)
    if adapters is not None:
        adapters.export(output_dir)
        logger.warning(
            "%s has adapters: wrote them beside the encoder (adapters.json, adapters.th). The "
            "encoder alone is not the trained model; load both with the embedder's "
            '`adapters: {"type": "tft_exported", "directory": "%s"}`.',
            archive_file,
            output_dir,
        )
    if sentence_transformers:
        max_length = archive.dataset_reader.encoder.max_length
        write_sentence_transformers_files(output_dir, transformer.config.hidden_size, max_length)
    logger.info("Wrote the encoder of %s to %s", archive_file, output_dir)
    return output_dir


def _check_paths(archive_file: str, weights_file: Optional[str], output_dir: str) -> None:
    """A `ConfigurationError` naming the path, before anything is loaded or written."""
    if not os.path.exists(archive_file):
        raise ConfigurationError(f"{archive_file}: no such file or directory.")
    if weights_file is not None and not os.path.isfile(weights_file):
        raise ConfigurationError(f"--weights-file {weights_file}: no such file.")
    if not os.path.exists(output_dir):
        return
    if not os.path.isdir(output_dir):
        raise ConfigurationError(f"{output_dir}: exists and is not a directory.")
    # A serialization directory has a config.json of its own (the training config, which
    # `load_archive` and `--recover` read): the checkpoint's would overwrite it.
    for path in (archive_file, weights_file):
        if path is not None:
            directory = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
            if os.path.samefile(output_dir, directory):
                raise ConfigurationError(
                    f"{output_dir}: is the directory of {path}; the checkpoint's config.json "
                    "would overwrite the training config there. Give another output directory."
                )


def load_model_archive(
    archive_file: str, weights_file: Optional[str] = None, cuda_device: int = -1
) -> Archive:
    """The archive, or a `ConfigurationError` that names the file and what is wrong with it."""
    try:
        return load_archive(archive_file, cuda_device=cuda_device, weights_file=weights_file)
    except (tarfile.ReadError, EOFError, zlib.error, gzip.BadGzipFile) as error:
        raise ConfigurationError(
            f"{archive_file}: not a readable model archive (a model.tar.gz, or a serialization "
            f"directory): {error}"
        ) from None
    except FileNotFoundError as error:
        raise ConfigurationError(
            f"{archive_file}: incomplete serialization directory or archive: {error}"
        ) from None


def write_sentence_transformers_files(
    directory: str, hidden_size: int, max_seq_length: int
) -> None:
    """
    The files that make a Hugging Face checkpoint directory a sentence-transformers model: the
    checkpoint as its `Transformer` module, then `Pooling` with the mean of the token vectors
    (padding excluded), as Sentence-BERT pools. Written as plain JSON; sentence-transformers is
    needed only to load the result.
    """
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
