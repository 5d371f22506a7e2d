"""
`allennlp tft-export MODEL_ARCHIVE OUT_DIR`: writes the encoder of a trained model as a
standard Hugging Face checkpoint, so that GLUE fine-tuning (or any other library) can start
from the injected encoder: `TFT_MODEL=OUT_DIR allennlp train training_configs/glue/mrpc.jsonnet`.
"""
import argparse
import copy
import logging
import os

from allennlp.commands.subcommand import Subcommand
from allennlp.common.checks import ConfigurationError
from allennlp.data.tokenizers import PretrainedTransformerTokenizer
from allennlp.models.archival import load_archive
from allennlp.modules.token_embedders import PretrainedTransformerEmbedder

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
        subparser.set_defaults(func=_export_from_args)
        return subparser


def _export_from_args(args: argparse.Namespace) -> None:
    export_encoder(args.archive_file, args.output_dir, args.weights_file)


def export_encoder(archive_file: str, output_dir: str, weights_file: str = None) -> str:
    """
    Saves the archive's `PretrainedTransformerEmbedder` model and its reader's tokenizer to
    `output_dir` with `save_pretrained`, and returns `output_dir`.
    """
    archive = load_archive(archive_file, weights_file=weights_file)
    embedders = [
        module for module in archive.model.modules() if isinstance(module, PretrainedTransformerEmbedder)
    ]
    if len(embedders) != 1:
        raise ConfigurationError(
            f"{archive_file}: expected one pretrained_transformer embedder, found {len(embedders)}."
        )
    # The plugin's readers encode through a `PairEncoder`, which holds the tokenizer.
    tokenizer = getattr(getattr(archive.dataset_reader, "encoder", None), "tokenizer", None)
    if not isinstance(tokenizer, PretrainedTransformerTokenizer):
        raise ConfigurationError(f"{archive_file}: the reader has no pretrained_transformer tokenizer.")
    os.makedirs(output_dir, exist_ok=True)
    embedders[0].transformer_model.save_pretrained(output_dir, safe_serialization=True)
    # AllenNLP loads tokenizers with an `add_special_tokens` init argument, which
    # `save_pretrained` would try to write out as the method of that name; leave it out.
    hf_tokenizer = copy.deepcopy(tokenizer.tokenizer)
    hf_tokenizer.init_kwargs.pop("add_special_tokens", None)
    hf_tokenizer.save_pretrained(output_dir)
    logger.info("Wrote the encoder of %s to %s", archive_file, output_dir)
    return output_dir
