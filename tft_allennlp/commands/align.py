"""
`allennlp tft-align INPUT OUTPUT`: aligns the phrases of every sentence pair of INPUT and
writes the aligned corpus (JSON lines) that `training_configs/injection/` reads.
`allennlp tft-align --evaluate GOLD` scores the aligner against hand-aligned pairs.
"""

import argparse
import collections
import json
import logging
import sys
import time

from allennlp.commands.subcommand import Subcommand
from allennlp.common.tqdm import Tqdm

from tft_allennlp.alignment.pair_input import read_sentence_pairs
from tft_allennlp.alignment.pipeline import Aligner, align_stream, evaluate
from tft_allennlp.common.input_problems import InputProblems

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
        subparser.add_argument("--workers", type=int, default=1, help="worker processes")
        subparser.add_argument("--batch-size", type=int, default=64, help="pairs per batch")
        subparser.add_argument(
            "--lenient", action="store_true", help="skip and count malformed lines"
        )
        subparser.add_argument(
            "--mrpc-all-pairs",
            action="store_true",
            help="with MRPC input, align the non-paraphrase pairs too",
        )
        subparser.add_argument("--max-sentence-chars", type=int, default=2000)
        subparser.add_argument(
            "--embeddings", help="local Hugging Face checkpoint for word similarity (optional)"
        )
        subparser.add_argument("--similarity-threshold", type=float, default=0.5)
        subparser.add_argument(
            "--evaluate", metavar="GOLD", help="print precision/recall/F1 against GOLD and exit"
        )
        subparser.set_defaults(func=_align_from_args)
        return subparser


def _align_from_args(args: argparse.Namespace) -> None:
    if args.evaluate:
        aligner = Aligner(args.spacy_model, args.embeddings, args.similarity_threshold)
        scores = evaluate(args.evaluate, aligner)
        print(json.dumps(scores))
        return
    if not args.input or not args.output:
        sys.exit("tft-align: give INPUT and OUTPUT (or --evaluate GOLD).")
    summary = align_file(
        args.input,
        args.output,
        spacy_model=args.spacy_model,
        workers=args.workers,
        batch_size=args.batch_size,
        lenient=args.lenient,
        mrpc_all_pairs=args.mrpc_all_pairs,
        max_sentence_chars=args.max_sentence_chars,
        embeddings=args.embeddings,
        similarity_threshold=args.similarity_threshold,
    )
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
    embeddings: str = None,
    similarity_threshold: float = 0.5,
) -> dict:
    """Aligns every valid pair of `input_path` into `output_path`; returns the summary."""
    problems = InputProblems(input_path, lenient)
    counts: collections.Counter = collections.Counter()
    pairs = read_sentence_pairs(input_path, problems, max_sentence_chars, mrpc_all_pairs, counts)
    started = time.perf_counter()
    written = phrases = alignments = 0
    with open(output_path, "w", encoding="utf-8") as output:
        lines = align_stream(
            pairs, spacy_model, workers, batch_size, embeddings, similarity_threshold
        )
        for number, line in Tqdm.tqdm(lines, desc="aligning", unit=" pairs"):
            record = json.loads(line)
            if "error" in record:
                problems.reject(number, record["error"])
                continue
            output.write(line + "\n")
            written += 1
            phrases += len(record["source_phrases"]) + len(record["target_phrases"])
            alignments += len(record["alignments"])
    seconds = time.perf_counter() - started
    problems.log_summary("lines")
    summary = {
        "pairs written": written,
        "lines skipped": problems.num_skipped,
        **{f"skipped: {reason}": count for reason, count in problems.skipped.items()},
        **counts,
        "phrases per sentence": round(phrases / max(2 * written, 1), 2),
        "alignments per pair": round(alignments / max(written, 1), 2),
        "seconds": round(seconds, 1),
        "pairs/s": round(written / seconds, 1) if seconds else 0.0,
    }
    return summary
