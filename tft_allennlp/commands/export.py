"""
`allennlp tft-export MODEL_ARCHIVE OUT_DIR`: writes the encoder of a trained model as a
standard Hugging Face checkpoint, so that GLUE fine-tuning (or any other library) can start
from the injected encoder: `TFT_MODEL=OUT_DIR allennlp train training_configs/glue/mrpc.jsonnet`.
With `--sentence-transformers` the directory also loads as `SentenceTransformer(OUT_DIR)`: with
the base's own pooling, normalisation and maximum length when the base is a sentence-transformers
model, else with mean pooling. With `--sequence-classification` a GLUE classifier is written as
a Hugging Face `AutoModelForSequenceClassification` instead. Only the archive is read: it holds
the base's config, tokenizer and pooler (see `tft_allennlp.common.transformer_source`).

A model trained with adapters (`tft_allennlp.modules.adapters`) is not merged: the checkpoint
is the encoder as it was (frozen), and the adapters are written beside it (`adapters.json`,
`adapters.th`), loaded back with `{"type": "tft_exported", "directory": OUT_DIR}`.

OUT_DIR must be new or empty unless `--force` is given, and is never a directory the export
reads or the base checkpoint the model was trained from (`tft_allennlp.common.output_paths`).
"""

import argparse
import contextlib
import copy
import gzip
import json
import logging
import os
import pickle
import shutil
import sys
import tarfile
import zlib
from typing import Iterator, List, Optional

import torch
from allennlp.commands.subcommand import Subcommand
from allennlp.common.checks import ConfigurationError
from allennlp.data.tokenizers import PretrainedTransformerTokenizer
from allennlp.models.archival import Archive, load_archive
from allennlp.modules.token_embedders import PretrainedTransformerEmbedder
from safetensors import SafetensorError
from transformers import AutoModel, PreTrainedModel

from tft_allennlp.commands.sequence_classification import sequence_classifier
from tft_allennlp.common.atomic_files import naming_path
from tft_allennlp.common.output_paths import (
    add_force_argument,
    check_not_reading,
    check_output_directory,
    output_directory,
)
from tft_allennlp.common.transformer_source import sentence_transformers_modules
from tft_allennlp.common.untrusted_archives import extracted_archive
from tft_allennlp.models.glue_classifier import GlueClassifier

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
            "(the base's own pooling, Normalize and max length when the base is one; else the "
            "encoder, then mean pooling over the tokens)",
        )
        subparser.add_argument(
            "--sequence-classification",
            action="store_true",
            help="write a GLUE classifier (tft_glue_classifier, also under tft_smart) as a "
            "Hugging Face AutoModelForSequenceClassification directory, labels included",
        )
        add_force_argument(subparser, "the files of the same name in a non-empty output_dir")
        subparser.set_defaults(func=_export_from_args)
        return subparser


def _export_from_args(args: argparse.Namespace) -> None:
    reads = [args.archive_file, args.weights_file]
    try:
        if args.sequence_classification and args.sentence_transformers:
            raise ConfigurationError(
                "--sequence-classification and --sentence-transformers write different models; "
                "give one."
            )
        # Checked before the archive is loaded, which takes long; again when writing.
        check_output_directory(args.output_dir, args.force, reads)
        with naming_path(args.output_dir):
            if args.sequence_classification:
                export_sequence_classifier(
                    args.archive_file, args.output_dir, args.weights_file, force=args.force
                )
            else:
                export_encoder(
                    args.archive_file,
                    args.output_dir,
                    args.weights_file,
                    args.sentence_transformers,
                    force=args.force,
                )
    except SafetensorError as error:  # safetensors' writer: no OSError, no path
        sys.exit(f"tft-export: {args.output_dir}: cannot write the weights: {error}")
    except (ConfigurationError, OSError) as error:
        sys.exit(f"tft-export: {error}")


def export_encoder(
    archive_file: str,
    output_dir: str,
    weights_file: Optional[str] = None,
    sentence_transformers: bool = False,
    force: bool = False,
) -> str:
    """
    Saves the archive's `PretrainedTransformerEmbedder` model and its reader's tokenizer to
    `output_dir` with `save_pretrained` (and, with `sentence_transformers`, the
    sentence-transformers files: the base's own modules when the base is a sentence-transformers
    model, else mean pooling), and returns `output_dir`. Nothing is read but the archive (and, for
    an archive made before archives held the checkpoint's files, the base checkpoint).
    `output_dir` must be new or empty unless `force` is given; the files appear there together,
    once all are written (`output_directory`).
    """
    _check_paths(archive_file, weights_file, output_dir)
    with opened_archive(archive_file, weights_file) as archive:
        embedder = _the_embedder(archive, archive_file)
        tokenizer = _the_tokenizer(archive, archive_file)
        adapters = getattr(embedder, "adapters", None)
        if adapters is not None and sentence_transformers:
            raise ConfigurationError(
                f"{archive_file}: the model has adapters, which a sentence-transformers model "
                "would not run; export it without --sentence-transformers."
            )
        # The base the encoder was trained from is a user's checkpoint: never written over.
        base = getattr(embedder, "model_name", None)
        check_not_reading(output_dir, [base], "the base checkpoint the model was trained from")
        reads = [archive_file, weights_file]
        with output_directory(output_dir, force, reads) as target:
            transformer = embedder.transformer_model
            _name_after_the_base(transformer, embedder)
            with _pooler_written_back(transformer, embedder):
                transformer.save_pretrained(target, safe_serialization=True)
            _save_tokenizer(tokenizer, target)
            if adapters is not None:
                adapters.export(target)
            if sentence_transformers:
                write_sentence_transformers_files(
                    target,
                    transformer.config.hidden_size,
                    archive.dataset_reader.encoder.max_length,  # type: ignore[attr-defined]
                    base=getattr(embedder, "source", None),
                )
        if adapters is not None:
            logger.warning(
                "%s has adapters: wrote them beside the encoder (adapters.json, adapters.th). The "
                "encoder alone is not the trained model; load both with the embedder's "
                '`adapters: {"type": "tft_exported", "directory": "%s"}`.',
                archive_file,
                output_dir,
            )
    logger.info("Wrote the encoder of %s to %s", archive_file, output_dir)
    return output_dir


def export_sequence_classifier(
    archive_file: str, output_dir: str, weights_file: Optional[str] = None, force: bool = False
) -> str:
    """
    Saves the archive's GLUE classifier as a Hugging Face `AutoModelForSequenceClassification`
    (see `tft_allennlp.commands.sequence_classification`) with its reader's tokenizer, whose
    `model_max_length` is the reader's `max_length`, so that `tokenizer(a, b, truncation=True)`
    cuts pairs as the reader did; returns `output_dir` (as `export_encoder` writes it).
    """
    _check_paths(archive_file, weights_file, output_dir)
    with opened_archive(archive_file, weights_file) as archive:
        classifiers = [
            module for module in archive.model.modules() if isinstance(module, GlueClassifier)
        ]
        if len(classifiers) != 1:
            raise ConfigurationError(
                f"{archive_file}: not a GLUE classifier (tft_glue_classifier, also under "
                "tft_smart); only those export as a Hugging Face sequence classifier."
            )
        embedder = _the_embedder(archive, archive_file)
        if getattr(embedder, "adapters", None) is not None:
            raise ConfigurationError(
                f"{archive_file}: the model has adapters, which a Hugging Face sequence "
                "classifier would not run."
            )
        tokenizer = _the_tokenizer(archive, archive_file)
        _name_after_the_base(embedder.transformer_model, embedder)
        model = sequence_classifier(classifiers[0], embedder.transformer_model)
        max_length = archive.dataset_reader.encoder.max_length  # type: ignore[attr-defined]
        with output_directory(output_dir, force, [archive_file, weights_file]) as target:
            model.save_pretrained(target, safe_serialization=True)
            _save_tokenizer(tokenizer, target, max_length)
    logger.info("Wrote the classifier of %s to %s", archive_file, output_dir)
    return output_dir


@contextlib.contextmanager
def opened_archive(archive_file: str, weights_file: Optional[str] = None) -> Iterator[Archive]:
    """
    The archive loaded on the CPU, its files kept on disk until the block ends (AllenNLP's
    `load_archive` deletes them once the model is built): the export reads the copy of the
    base's files in it.
    """
    if os.path.isdir(archive_file):
        yield load_model_archive(archive_file, weights_file)
        return
    with extracted_archive(archive_file) as directory:
        yield load_model_archive(directory, weights_file, name=archive_file)


def _the_embedder(archive: Archive, archive_file: str) -> PretrainedTransformerEmbedder:
    embedders = [
        module
        for module in archive.model.modules()
        if isinstance(module, PretrainedTransformerEmbedder)
    ]
    if len(embedders) != 1:
        raise ConfigurationError(
            f"{archive_file}: expected one pretrained_transformer embedder, found {len(embedders)}."
        )
    return embedders[0]


def _the_tokenizer(archive: Archive, archive_file: str) -> PretrainedTransformerTokenizer:
    # The plugin's readers encode through a `PairEncoder`, which holds the tokenizer.
    tokenizer = getattr(getattr(archive.dataset_reader, "encoder", None), "tokenizer", None)
    if not isinstance(tokenizer, PretrainedTransformerTokenizer):
        raise ConfigurationError(
            f"{archive_file}: the reader has no pretrained_transformer tokenizer."
        )
    return tokenizer


def _save_tokenizer(
    tokenizer: PretrainedTransformerTokenizer, output_dir: str, max_length: Optional[int] = None
) -> None:
    # AllenNLP loads tokenizers with an `add_special_tokens` init argument, which
    # `save_pretrained` would try to write out as the method of that name; leave it out.
    hf_tokenizer = copy.deepcopy(tokenizer.tokenizer)
    hf_tokenizer.init_kwargs.pop("add_special_tokens", None)
    if max_length is not None:
        hf_tokenizer.model_max_length = max_length
    hf_tokenizer.save_pretrained(output_dir)


def _name_after_the_base(transformer: PreTrainedModel, embedder: torch.nn.Module) -> None:
    """The config's `_name_or_path` as the model name the encoder was trained from, not the
    temporary folder of the archive's copy that it was loaded from."""
    if getattr(embedder, "source", None) != getattr(embedder, "model_name", None):
        transformer.config._name_or_path = embedder.model_name


@contextlib.contextmanager
def _pooler_written_back(transformer: PreTrainedModel, embedder: torch.nn.Module) -> Iterator[None]:
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
    transformer.pooler = pooler
    try:
        yield
    finally:
        transformer.pooler = None


def _check_paths(archive_file: str, weights_file: Optional[str], output_dir: str) -> None:
    """A `ConfigurationError` naming the path, before anything is loaded or written."""
    if not os.path.exists(archive_file):
        raise ConfigurationError(f"{archive_file}: no such file or directory.")
    if _is_hugging_face_folder(archive_file):
        raise ConfigurationError(
            f"{archive_file}: a Hugging Face model folder, not a model archive or serialization "
            f"directory; it is already a checkpoint: train from it as it is (TFT_MODEL="
            f"{archive_file} allennlp train ...), and export that run's model.tar.gz."
        )
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


def _is_hugging_face_folder(path: str) -> bool:
    """Whether `path` is a folder whose config.json is a Hugging Face model's (no AllenNLP
    `model` and `dataset_reader`)."""
    try:
        with open(os.path.join(path, "config.json"), encoding="utf-8") as handle:
            config = json.load(handle)
    except (OSError, ValueError):
        return False
    return (
        isinstance(config, dict)
        and ("model_type" in config or "architectures" in config)
        and not {"model", "dataset_reader"} & set(config)
    )


def load_model_archive(
    archive_file: str,
    weights_file: Optional[str] = None,
    cuda_device: int = -1,
    name: Optional[str] = None,
) -> Archive:
    """The archive, or a `ConfigurationError` that names the file (`name`, where the archive was
    extracted from it) and what is wrong with it."""
    name = name or archive_file
    try:
        return load_archive(archive_file, cuda_device=cuda_device, weights_file=weights_file)
    except (tarfile.ReadError, EOFError, zlib.error, gzip.BadGzipFile) as error:
        raise ConfigurationError(
            f"{name}: not a readable model archive (a model.tar.gz, or a serialization "
            f"directory): {error}"
        ) from None
    except FileNotFoundError as error:
        raise ConfigurationError(
            f"{name}: incomplete serialization directory or archive: {error}"
        ) from None
    except (pickle.UnpicklingError, RuntimeError) as error:
        # torch.load of a file that is not weights, or weights of another model.
        weights = f"--weights-file {weights_file}" if weights_file else name
        reason = (
            "not a file of saved tensors"
            if isinstance(error, pickle.UnpicklingError)
            else str(error).strip().splitlines()[0][:120]
        )
        raise ConfigurationError(f"{weights}: not the weights of this model: {reason}") from None


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
    `max_seq_length` as the reader's. Written as plain JSON; sentence-transformers is needed
    only to load the result.
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
