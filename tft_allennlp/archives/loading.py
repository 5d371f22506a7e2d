"""
A trained model read back for export: a model archive (`model.tar.gz`, opened as untrusted input
by `tft_allennlp.common.untrusted_archives`) or a serialization directory (its `best.th`, or
another weights file), loaded on the CPU with its files kept on disk while it is used, and its
transformer embedder and tokenizer found in it. Every problem is a `ConfigurationError` that
names the file: a path that is missing, a Hugging Face folder given for an archive, an archive
that is not one, weights of another model.
"""

import contextlib
import gzip
import json
import os
import pickle
import tarfile
import zlib
from typing import Iterator, Optional

from allennlp.common.checks import ConfigurationError
from allennlp.data.tokenizers import PretrainedTransformerTokenizer
from allennlp.models.archival import Archive, load_archive
from allennlp.modules.token_embedders import PretrainedTransformerEmbedder

from tft_allennlp.common.archive_extraction import extracted_archive


def load_model_archive(
    archive_file: str,
    weights_file: Optional[str] = None,
    cuda_device: int = -1,
    name: Optional[str] = None,
) -> Archive:
    """The archive, or a `ConfigurationError` that names the file (`name`, where the archive was
    extracted from it) and what is wrong with it."""
    name = name or archive_file
    if is_hugging_face_folder(archive_file):  # AllenNLP would fail on its config
        raise ConfigurationError(
            f"{name}: a Hugging Face model folder, not a model archive (a model.tar.gz, or a "
            "serialization directory)."
        )
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


@contextlib.contextmanager
def opened_archive(archive_file: str, weights_file: Optional[str] = None) -> Iterator[Archive]:
    """
    The archive loaded on the CPU, its files kept on disk until the block ends (AllenNLP's
    `load_archive` deletes them once the model is built): an export reads the copy of the
    base's files in it.
    """
    if os.path.isdir(archive_file):
        yield load_model_archive(archive_file, weights_file)
        return
    with extracted_archive(archive_file) as directory:
        yield load_model_archive(directory, weights_file, name=archive_file)


def check_export_paths(archive_file: str, weights_file: Optional[str], output_dir: str) -> None:
    """A `ConfigurationError` naming the path, before anything is loaded or written."""
    if not os.path.exists(archive_file):
        raise ConfigurationError(f"{archive_file}: no such file or directory.")
    if is_hugging_face_folder(archive_file):
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


def is_hugging_face_folder(path: str) -> bool:
    """Whether `path` is a folder whose config.json is a Hugging Face model's (no AllenNLP
    `model` and `dataset_reader`)."""
    try:
        with open(os.path.join(path, "config.json"), encoding="utf-8") as handle:
            config = json.load(handle)
    except (OSError, ValueError, RecursionError):  # not a model's config: the loader says why
        return False
    return (
        isinstance(config, dict)
        and ("model_type" in config or "architectures" in config)
        and not {"model", "dataset_reader"} & set(config)
    )


def archive_embedder(archive: Archive, archive_file: str) -> PretrainedTransformerEmbedder:
    """The archive's one `pretrained_transformer` embedder (the plugin's or AllenNLP's)."""
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


def archive_tokenizer(archive: Archive, archive_file: str) -> PretrainedTransformerTokenizer:
    """The tokenizer of the archive's reader."""
    # The plugin's readers encode through a `PairEncoder`, which holds the tokenizer.
    tokenizer = getattr(getattr(archive.dataset_reader, "encoder", None), "tokenizer", None)
    if not isinstance(tokenizer, PretrainedTransformerTokenizer):
        raise ConfigurationError(
            f"{archive_file}: the reader has no pretrained_transformer tokenizer."
        )
    return tokenizer
