"""
`allennlp tft-glue-submission OUTPUT_DIR ARCHIVE...`: predicts the unlabelled GLUE test sets
with trained `tft_glue_classifier` archives and writes the files the GLUE leaderboard takes.
"""

import argparse
import logging
import os
import sys
import zipfile
from typing import Any, Dict, Iterable, List, Optional, Tuple, cast

import torch
from allennlp.commands.subcommand import Subcommand
from allennlp.common.checks import ConfigurationError
from allennlp.common.util import lazy_groups_of
from allennlp.data.fields import MetadataField
from allennlp.models.archival import Archive

from tft_allennlp.archives.loading import load_model_archive
from tft_allennlp.commands.arguments import positive_int
from tft_allennlp.common.atomic_files import naming_path
from tft_allennlp.common.console import stopped
from tft_allennlp.common.glue_tasks import GLUE_TASKS
from tft_allennlp.common.output_paths import add_force_argument, draft_name, output_directory
from tft_allennlp.common.sentence_tasks import SentenceTask
from tft_allennlp.dataset_readers.glue_rows import HUB_PREFIX

logger = logging.getLogger(__name__)


@Subcommand.register("tft-glue-submission")
class GlueSubmission(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = (
            "Predict the GLUE test sets with trained tft_glue_classifier archives (one per task) "
            "and write the leaderboard's files (CoLA.tsv, ..., MNLI-m.tsv, MNLI-mm.tsv, AX.tsv: "
            "index<TAB>prediction) and submission.zip."
        )
        subparser = parser.add_parser(self.name, description=description, help=description)
        subparser.add_argument("output_dir", help="where the files and submission.zip go")
        subparser.add_argument(
            "archives", nargs="+", help="model.tar.gz of each task (the task is read from it)"
        )
        subparser.add_argument(
            "--glue-dir",
            default=os.environ.get("GLUE_DIR", "glue_data"),
            help="the GLUE download with the test files (or hf:NAME); default $GLUE_DIR",
        )
        subparser.add_argument("--batch-size", type=positive_int, default=64)
        subparser.add_argument("--cuda-device", type=int, default=-1)
        add_force_argument(subparser, "the files of the same name in a non-empty output_dir")
        subparser.set_defaults(func=_submission_from_args)
        return subparser


def _submission_from_args(args: argparse.Namespace) -> None:
    # The archives' directories and the GLUE folders with the test files are read, never written.
    reads = [*args.archives, args.glue_dir]
    if not args.glue_dir.startswith(HUB_PREFIX):
        for task in GLUE_TASKS.values():
            reads += [os.path.join(args.glue_dir, test) for _, test, _ in task.submission_files]
    try:
        with naming_path(args.output_dir):
            with output_directory(args.output_dir, args.force, reads) as target:
                written = write_submission(
                    args.archives, target, args.glue_dir, args.batch_size, args.cuda_device
                )
    except (ConfigurationError, OSError) as error:
        sys.exit(stopped("tft-glue-submission", error))
    missing = [
        name
        for task in GLUE_TASKS.values()
        for name, _, _ in task.submission_files
        if name not in written
    ]
    for name, rows in written.items():
        print(f"{name}: {rows} predictions")
    if missing:
        print(
            f"Not written (no archive for the task): {', '.join(missing)}; "
            "the leaderboard needs all 11 files."
        )


def write_submission(
    archives: Iterable[str],
    output_dir: str,
    glue_dir: str,
    batch_size: int = 64,
    cuda_device: int = -1,
) -> Dict[str, int]:
    """
    Writes each archive's task files and `submission.zip`; returns file name -> predictions.
    A missing archive, GLUE directory or test file is a `ConfigurationError` naming it. The
    files are put in place together once every archive has predicted, so a failure leaves
    `output_dir` as it was.
    """
    archives = list(archives)
    local = not glue_dir.startswith(HUB_PREFIX)
    # Checked before the first archive is loaded, which takes long and writes files.
    for archive_file in archives:
        if not os.path.exists(archive_file):
            raise ConfigurationError(f"{archive_file}: no such file or directory.")
    if local and not os.path.isdir(glue_dir):
        raise ConfigurationError(f"--glue-dir {glue_dir}: no such directory.")
    if os.path.exists(output_dir) and not os.path.isdir(output_dir):
        raise ConfigurationError(f"{output_dir}: exists and is not a directory.")
    written: Dict[str, int] = {}
    # Every file is drafted first and put in place only once all archives have predicted: a
    # failure midway (a bad archive, a missing test file) leaves an earlier submission whole.
    drafts: Dict[str, str] = {}
    try:
        for archive_file in archives:
            archive = load_model_archive(archive_file, cuda_device=cuda_device)
            task = _task_of(archive)
            if task is None or task.name not in GLUE_TASKS:
                raise ConfigurationError(
                    f"{archive_file}: not a GLUE task model (tft_glue_classifier or "
                    "tft_siamese_pair_classifier, or one of them wrapped by tft_smart)."
                )
            for name, test_file, hub_split in task.submission_files:
                if name in written:
                    raise ConfigurationError(f"Two archives for {name}.")
                source = os.path.join(glue_dir, test_file) if local else f"{glue_dir}:{hub_split}"
                if local and not os.path.isfile(source):
                    raise ConfigurationError(f"{source}: no such file (the {name} test set).")
                predictions = predict(archive, source, batch_size)
                os.makedirs(output_dir, exist_ok=True)
                drafts[name] = draft_name(os.path.join(output_dir, "." + name))
                with open(drafts[name], "w", encoding="utf-8") as out:
                    out.write("index\tprediction\n")
                    for index, prediction in predictions:
                        out.write(f"{index}\t{prediction}\n")
                written[name] = len(predictions)
                logger.info("%s: %d predictions of %s", name, len(predictions), source)
        bundle_draft = draft_name(os.path.join(output_dir, ".submission.zip"))
        drafts["submission.zip"] = bundle_draft
        with zipfile.ZipFile(bundle_draft, "w", zipfile.ZIP_DEFLATED) as bundle:
            for name in written:
                bundle.write(drafts[name], name)
        for name, draft in drafts.items():
            os.replace(draft, os.path.join(output_dir, name))
    finally:
        for draft in drafts.values():
            if os.path.exists(draft):
                os.remove(draft)
    return written


def _task_of(archive: Archive) -> Optional[SentenceTask]:
    """The task of an archive: its `tft_glue` reader's; None for other readers."""
    return getattr(archive.validation_dataset_reader, "task", None)


def predict(archive: Archive, source: str, batch_size: int) -> List[Tuple[str, str]]:
    """(example index, prediction) for every row of `source`, in its order."""
    reader, model = archive.validation_dataset_reader, archive.model
    task = _task_of(archive)
    assert task is not None
    model.eval()
    predictions: List[Tuple[str, str]] = []
    with torch.no_grad():
        for batch in lazy_groups_of(reader.read(source), batch_size):
            for instance, output in zip(batch, model.forward_on_instances(batch)):
                index = cast(MetadataField, instance["metadata"])["index"]
                predictions.append((index, _prediction(task, output)))
    return predictions


def _prediction(task: SentenceTask, output: Dict[str, Any]) -> str:
    """The label string (GLUE's own labels) or the score, clipped to the task's range (STS-B's
    [0, 5])."""
    if task.is_regression:
        score = float(output["score"])
        if task.score_range is not None:
            score = min(max(score, task.score_range[0]), task.score_range[1])
        return f"{score:.3f}"
    return output["label"]
