import collections
import logging
import random
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, cast

from allennlp.common.checks import ConfigurationError
from allennlp.common.file_utils import cached_path
from allennlp.data import DatasetReader, Instance, TokenIndexer, Tokenizer
from allennlp.data.fields import Field, LabelField, ListField, MetadataField, SpanField, TextField

from tft_allennlp.common.aligned_corpus import AlignedPair, PhrasePair, Span, parse_record
from tft_allennlp.common.input_problems import InputProblems, read_raw_lines
from tft_allennlp.common.pair_layout import PairEncoder, PairLayout
from tft_allennlp.dataset_readers.corpus_blocks import Block, blocks, own_lines
from tft_allennlp.dataset_readers.negative_samplers import NegativeSampler, PaperNegativeSampler

logger = logging.getLogger(__name__)

PARAPHRASE, RANDOM, IN_PARAPHRASE = "paraphrase", "random", "in_paraphrase"
"""The sentence labels (`labels`) and phrase-pair labels (`phrase_labels`)."""
_DROPPED = "phrase pairs dropped (cut by truncation or without wordpieces)"


@DatasetReader.register("tft_aligned_paraphrases")
class AlignedParaphrasesReader(DatasetReader):
    """
    Reads a corpus of sentential paraphrases with phrase alignments (JSON lines, one pair per
    line, as `tft_allennlp.common.aligned_corpus` defines) and produces the training instances
    of paraphrasal relation injection (Arase & Tsujii, 2019, Algorithm 4.1). For each line:

    - a `paraphrase` instance `[CLS] s [SEP] t [SEP]` whose phrase pairs are every alignment,
      labelled `paraphrase`, each followed by its in-paraphrase negatives (`in_paraphrase`);
    - a `random` instance `[CLS] s [SEP] t' [SEP]` per random partner, `t'` the target of another
      pair of the same block, with random phrase pairs labelled `random` (none in `binary` mode).

    The negatives come from `negative_sampler` (the paper's by default). Word spans become
    wordpiece spans of the joined sequence (`PairEncoder`), so that in the paper's 1-based
    terms `2 <= j <= k < m <= n <= N-1`. A phrase pair whose words have no wordpieces, or that
    truncation to `max_length` cut, is dropped from its instance; both are counted and logged.

    The corpus is streamed, never loaded: lines are read in blocks of `buffer_size` and random
    partners come from the same block. Under distributed training each rank reads every
    `world_size`-th line, so the ranks' shares differ by at most one line; blocks go
    round-robin to the data-loader workers. Every random choice is seeded by `seed` and the
    line number, so the instances do not depend on how reading is sharded, and
    `count_instances` knows how many each rank reads without building them.

    Instances have `tokens` (`TextField`), `label` (`labels` namespace), `source_spans` and
    `target_spans` (`ListField[SpanField]`, aligned by position), `phrase_labels`
    (`ListField[LabelField]`, `phrase_labels` namespace) and `metadata` (`line_number`, and
    `partner_line_number` for a random pair). An instance without phrase pairs holds one
    `(-1, -1)` padding span that the model masks out.

    Registered as a `DatasetReader` with name "tft_aligned_paraphrases".

    # Parameters

    tokenizer : `Tokenizer`
        A `pretrained_transformer` tokenizer with a fast (Rust) Hugging Face tokenizer and
        `add_special_tokens: false`.
    token_indexers : `Dict[str, TokenIndexer]`, optional
        Attached in `apply_token_indexers`; defaults to a `pretrained_transformer` indexer.
    max_length : `int`, optional (default = `128`)
        Maximum wordpieces of an instance including special tokens (longest-first truncation).
    negative_sampler : `NegativeSampler`, optional (default = `tft_paper`)
        Chooses random partners, in-paraphrase and random phrase pairs.
    binary : `bool`, optional (default = `False`)
        Phrase labels `paraphrase` / `in_paraphrase` only (the +binary-PP ablation): random
        instances then carry no phrase pairs.
    max_phrase_pairs : `int`, optional (default = `None`)
        Cap on phrase pairs per instance; larger sets are sampled down, and the number of pairs
        left out is logged.
    buffer_size : `int`, optional (default = `1000`)
        Lines per block; random partners are drawn from the same block.
    part : `str`, optional (default = `"all"`)
        `"train"` or `"validation"` to read one part of a corpus split by `validation_fraction`,
        or `"all"`.
    validation_fraction : `float`, optional (default = `0.0`)
        Share of lines (chosen by `seed` and line number) that form the `validation` part.
    seed : `int`, optional (default = `13370`)
    lenient : `bool`, optional (default = `False`)
        If `True`, malformed lines (invalid JSON or UTF-8, missing words, reversed or
        out-of-range spans) are skipped and counted; otherwise the first one raises an error
        naming file and line.
    """

    def __init__(
        self,
        tokenizer: Tokenizer,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        max_length: int = 128,
        negative_sampler: Optional[NegativeSampler] = None,
        binary: bool = False,
        max_phrase_pairs: Optional[int] = None,
        buffer_size: int = 1000,
        part: str = "all",
        validation_fraction: float = 0.0,
        seed: int = 13370,
        lenient: bool = False,
        **kwargs,
    ) -> None:
        super().__init__(
            manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs
        )
        self.encoder = PairEncoder(tokenizer, max_length, "tft_aligned_paraphrases")
        if not self.encoder.tokenizer.tokenizer.is_fast:
            raise ConfigurationError(f"{self.encoder.tokenizer._model_name} has no fast tokenizer.")
        if part not in ("all", "train", "validation"):
            raise ConfigurationError(f"part must be all, train or validation, not {part!r}.")
        if buffer_size < 2:
            raise ConfigurationError("buffer_size must be >= 2.")
        self._token_indexers = token_indexers or self.encoder.default_indexers()
        self._sampler = negative_sampler or PaperNegativeSampler()
        self._binary = binary
        self._max_phrase_pairs = max_phrase_pairs
        self._buffer_size = buffer_size
        self._part = part
        self._validation_fraction = validation_fraction
        self._seed = seed
        self._lenient = lenient
        self._counts: collections.Counter = collections.Counter()
        self._file_path: Optional[str] = None

    # Reading

    def _read(self, file_path: str) -> Iterable[Instance]:
        problems = InputProblems(file_path, self._lenient)
        self._counts.clear()
        self._file_path = file_path
        worker = self.get_worker_info()
        num_lines = 0
        for block in self._blocks(file_path):
            num_lines += len(block.lines)
            if worker is not None and block.index % worker.num_workers != worker.id:
                continue
            for pair, partners in problems.counted(self._own_pairs(block, problems)):
                self._counts["paraphrase pairs"] += 1
                rng = random.Random(f"{self._seed}:{pair.line_number}")
                yield self._paraphrase_instance(pair, rng)
                if not partners:
                    self._counts["paraphrase pairs without a random pair"] += 1
                for partner in partners:
                    yield self._random_instance(pair, partner, rng)
        self._log_counts(file_path)
        problems.log_summary("lines")
        if num_lines == 0:
            self._require_pairs(file_path, problems)
        if worker is None and self.get_distributed_info() is None:
            # Only a process that read every line can tell that none of them was valid;
            # sharded readers rely on `count_instances`, which the `tft_streaming` loader calls.
            self._require_pairs(file_path, problems)

    def count_instances(self, file_path: str, world_size: int = 1) -> List[int]:
        """
        How many instances each of `world_size` distributed ranks reads from `file_path` (over
        all its data-loader workers), found by parsing the corpus without tokenizing it.
        """
        if self.max_instances is not None:
            raise TypeError("Cannot count instances under max_instances.")
        counts = [0] * world_size
        problems = InputProblems(file_path, self._lenient)
        for block in self._blocks(file_path):
            for rank in range(world_size):
                pairs = self._own_pairs(block, problems, rank, world_size)
                for _, partners in problems.counted(pairs):
                    counts[rank] += 1 + len(partners)
        self._require_pairs(file_path, problems)
        return counts

    def _require_pairs(self, file_path: str, problems: InputProblems) -> None:
        """
        Raises unless `problems` counted a valid pair, saying why there was none: an empty
        file, a corpus too small to put any line in this reader's part, or every line skipped.
        """
        if problems.num_records:
            return
        reason = "the file has no non-blank lines"
        if self._part != "all" and not problems.num_skipped:
            lines = read_raw_lines(cached_path(file_path))
            num_lines = sum(1 for _, raw in lines if raw.strip())
            if num_lines:
                reason = (
                    f"none of its {num_lines} lines falls in the {self._part!r} part "
                    f"(validation_fraction {self._validation_fraction}); give a larger corpus "
                    "or validation_fraction, or a separate validation corpus read with part 'all'"
                )
        problems.require_records("aligned pairs", reason)

    def _blocks(self, file_path: str) -> Iterable[Block]:
        lines = read_raw_lines(cached_path(file_path))
        return blocks(lines, self._buffer_size, self._part, self._validation_fraction, self._seed)

    def _own_pairs(
        self,
        block: Block,
        problems: InputProblems,
        rank: Optional[int] = None,
        world_size: Optional[int] = None,
    ) -> Iterator[Tuple[AlignedPair, List[AlignedPair]]]:
        """
        `(pair, random partners)` for the valid lines of `block` that `rank` reads (this
        process's rank by default). Every line of the block is parsed, since partners come from
        all of them, but only the rank's own lines report problems, so that each bad line is
        reported once however many ranks read the block.
        """
        if rank is None:
            distributed = self.get_distributed_info()
            rank, world_size = (
                (0, 1) if distributed is None else (distributed.global_rank, distributed.world_size)
            )
        owned = own_lines(block, rank, world_size or 1)
        silent = InputProblems(problems.source, lenient=True)
        parsed = [
            parse_record(number, raw, problems if own else silent)
            for (number, raw), own in zip(block.lines, owned)
        ]
        valid = [pair for pair in parsed if pair is not None]
        for pair, own in zip(parsed, owned):
            if pair is not None and own:
                rng = random.Random(f"{self._seed}:{pair.line_number}:partners")
                yield pair, self._sampler.random_partners(pair, valid, rng)

    # Instances

    def _paraphrase_instance(self, pair: AlignedPair, rng: random.Random) -> Instance:
        layout = self.encoder.layout(pair.source, pair.target)
        targets = _mapped(pair.target_phrases, layout.target_span)
        phrase_pairs: List[PhrasePair] = []
        labels: List[str] = []
        for source_span, target_span in pair.alignments:
            if layout.source_span(source_span) is None or layout.target_span(target_span) is None:
                self._counts[_DROPPED] += 1
                continue
            phrase_pairs.append((source_span, target_span))
            labels.append(PARAPHRASE)
            aligned = {layout.target_span(t) for s, t in pair.alignments if s == source_span}
            candidates = [t for t in targets if layout.target_span(t) not in aligned]
            negatives = self._sampler.in_paraphrase_targets(
                (source_span, target_span), candidates, rng
            )
            if not negatives:
                self._counts["aligned phrase pairs without an in-paraphrase negative"] += 1
            for negative in negatives:
                phrase_pairs.append((source_span, negative))
                labels.append(IN_PARAPHRASE)
        return self._instance(layout, phrase_pairs, labels, PARAPHRASE, pair, rng)

    def _random_instance(
        self, pair: AlignedPair, partner: AlignedPair, rng: random.Random
    ) -> Instance:
        layout = self.encoder.layout(pair.source, partner.target)
        phrase_pairs: List[PhrasePair] = []
        if not self._binary:
            phrase_pairs = self._sampler.random_phrase_pairs(
                _mapped(pair.source_phrases, layout.source_span),
                _mapped(partner.target_phrases, layout.target_span),
                rng,
            )
        labels = [RANDOM] * len(phrase_pairs)
        self._counts["random pairs"] += 1
        return self._instance(layout, phrase_pairs, labels, RANDOM, pair, rng, partner)

    def _instance(
        self,
        layout: PairLayout,
        phrase_pairs: List[PhrasePair],
        phrase_labels: List[str],
        label: str,
        pair: AlignedPair,
        rng: random.Random,
        partner: Optional[AlignedPair] = None,
    ) -> Instance:
        if self._max_phrase_pairs is not None and len(phrase_pairs) > self._max_phrase_pairs:
            self._counts["phrase pairs left out by max_phrase_pairs"] += (
                len(phrase_pairs) - self._max_phrase_pairs
            )
            keep = sorted(rng.sample(range(len(phrase_pairs)), self._max_phrase_pairs))
            phrase_pairs = [phrase_pairs[i] for i in keep]
            phrase_labels = [phrase_labels[i] for i in keep]
        metadata: Dict[str, Any] = {"line_number": pair.line_number, "file": self._file_path}
        if partner is not None:
            metadata["partner_line_number"] = partner.line_number
        return self._fields(
            layout,
            pair.source,
            partner.target if partner else pair.target,
            phrase_pairs,
            phrase_labels,
            label,
            metadata,
        )

    def text_to_instance(  # type: ignore
        self,
        source: List[str],
        target: List[str],
        phrase_pairs: Sequence[PhrasePair] = (),
        phrase_labels: Optional[Sequence[str]] = None,
        label: Optional[str] = None,
    ) -> Instance:
        """
        An instance for two word-split sentences and word-level phrase pairs (inclusive spans).
        Phrase pairs that cannot be mapped to wordpieces (cut by truncation, or words without
        pieces) are left out and counted; `metadata["phrase_pairs"]` lists those kept.
        """
        layout = self.encoder.layout(source, target)
        return self._fields(layout, source, target, phrase_pairs, phrase_labels, label, {})

    def _fields(
        self,
        layout: PairLayout,
        source: List[str],
        target: List[str],
        phrase_pairs: Sequence[PhrasePair],
        phrase_labels: Optional[Sequence[str]],
        label: Optional[str],
        metadata: Dict[str, Any],
    ) -> Instance:
        text_field = TextField(layout.tokens)
        source_spans: List[Field] = []
        target_spans: List[Field] = []
        labels: List[Field] = []
        kept: List[PhrasePair] = []
        for index, (source_span, target_span) in enumerate(phrase_pairs):
            # Spans read from JSON are lists.
            source_span, target_span = cast(PhrasePair, (tuple(source_span), tuple(target_span)))
            source_pieces = layout.source_span(source_span)
            target_pieces = layout.target_span(target_span)
            if source_pieces is None or target_pieces is None:
                self._counts[_DROPPED] += 1
                continue
            kept.append((source_span, target_span))
            if phrase_labels is not None and phrase_labels[index] == PARAPHRASE:
                self._counts["aligned phrase pairs"] += 1
            source_spans.append(SpanField(*source_pieces, text_field))
            target_spans.append(SpanField(*target_pieces, text_field))
            if phrase_labels is not None:
                labels.append(LabelField(phrase_labels[index], label_namespace="phrase_labels"))
        if not kept:
            # One padding span (-1, -1), masked out by the model, keeps the fields batchable.
            source_spans = [SpanField(-1, -1, text_field)]
            target_spans = [SpanField(-1, -1, text_field)]
            if phrase_labels is not None:
                labels = [LabelField(-1, label_namespace="phrase_labels", skip_indexing=True)]
        if layout.truncated:
            self._counts["truncated instances"] += 1
        fields: Dict[str, Field] = {
            "tokens": text_field,
            "source_spans": ListField(source_spans),
            "target_spans": ListField(target_spans),
            "metadata": MetadataField(
                {**metadata, "source": source, "target": target, "phrase_pairs": kept}
            ),
        }
        if phrase_labels is not None:
            fields["phrase_labels"] = ListField(labels)
        if label is not None:
            fields["label"] = LabelField(label)
        return Instance(fields)

    def _log_counts(self, file_path: str) -> None:
        if self._counts:
            summary = ", ".join(f"{count} {what}" for what, count in sorted(self._counts.items()))
            logger.info("Read %s: %s.", file_path, summary)
        if self._counts["paraphrase pairs"] and not self._counts["aligned phrase pairs"]:
            logger.warning(
                "%s: no aligned phrase pairs in %d paraphrase pairs (no alignments, or none "
                "that the wordpieces keep): the phrase head cannot learn paraphrases from it.",
                file_path,
                self._counts["paraphrase pairs"],
            )

    def apply_token_indexers(self, instance: Instance) -> None:
        instance["tokens"].token_indexers = self._token_indexers  # type: ignore


def _mapped(spans: Iterable[Span], to_pieces: Callable[[Span], Optional[Span]]) -> List[Span]:
    """The spans that map to wordpieces in a layout."""
    return [span for span in spans if to_pieces(span) is not None]
