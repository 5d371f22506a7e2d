"""
`allennlp tft-export MODEL_ARCHIVE OUT_DIR`: writes the encoder of a trained model as a
standard Hugging Face checkpoint, so that GLUE fine-tuning (or any other library) can start
from the injected encoder: `TFT_MODEL=OUT_DIR allennlp train training_configs/glue/mrpc.jsonnet`.
With `--sentence-transformers` the directory also loads as `SentenceTransformer(OUT_DIR)`: with
the base's own pooling, normalisation and maximum length when the base is a sentence-transformers
model, else with mean pooling. With `--sequence-classification` a GLUE classifier is written as
a Hugging Face `AutoModelForSequenceClassification` instead. Only the archive is read: it holds
the base's config, tokenizer and pooler. Every export carries a `README.md` model card
(`tft_allennlp.archives.model_card`). This module is the command line over
`tft_allennlp.archives`, which does the exporting.

A model trained with adapters (`tft_allennlp.modules.adapters`) is not merged: the checkpoint
is the encoder as it was (frozen), and the adapters are written beside it (`adapters.json` and
their weights; LoRA's as peft's adapter folder), loaded back with `{"type": "tft_exported",
"directory": OUT_DIR}`; LoRA's can be merged into one plain checkpoint (`--merge-adapters`),
as a classifier trained with LoRA must be for `--sequence-classification`.

OUT_DIR must be new or empty unless `--force` is given, is never a directory the export reads
or the base checkpoint the model was trained from, and is written by one command at a time (its
lock, `.tft-lock`, is held from the first check to the end: `tft_allennlp.common.output_paths`).
"""

import argparse
import sys

from allennlp.commands.subcommand import Subcommand
from allennlp.common.checks import ConfigurationError
from safetensors import SafetensorError

from tft_allennlp.archives.encoder_export import export_encoder
from tft_allennlp.archives.sequence_classification import export_sequence_classifier
from tft_allennlp.common.atomic_files import naming_path
from tft_allennlp.common.console import stopped
from tft_allennlp.common.folder_lock import FolderLock
from tft_allennlp.common.output_paths import add_force_argument, check_output_directory


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
        subparser.add_argument(
            "--merge-adapters",
            action="store_true",
            help="for a model trained with LoRA adapters: write one plain checkpoint with them "
            "merged into its weights, instead of the encoder it started from with the adapters "
            "beside it (peft's adapter folder); needed with --sequence-classification",
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
        # Checked before the archive is loaded, which takes long; again when writing. Its lock
        # is held from here to the end: one command at a time writes it.
        check_output_directory(args.output_dir, args.force, reads)
        with FolderLock(args.output_dir), naming_path(args.output_dir):
            if args.sequence_classification:
                export_sequence_classifier(
                    args.archive_file,
                    args.output_dir,
                    args.weights_file,
                    force=args.force,
                    merge_adapters=args.merge_adapters,
                )
            else:
                export_encoder(
                    args.archive_file,
                    args.output_dir,
                    args.weights_file,
                    args.sentence_transformers,
                    force=args.force,
                    merge_adapters=args.merge_adapters,
                )
    except SafetensorError as error:  # safetensors' writer: no OSError, no path
        message = f"{args.output_dir}: cannot write the weights: {error}"
        sys.exit(stopped("tft-export", error, message))
    except (ConfigurationError, OSError) as error:
        sys.exit(stopped("tft-export", error))
