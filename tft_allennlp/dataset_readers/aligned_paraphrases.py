import collections
import json
import logging
import random
from typing import Any, Dict, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from allennlp.common.checks import ConfigurationError
from allennlp.common.file_utils import cached_path
from allennlp.data import DatasetReader, Instance, Token, TokenIndexer, Tokenizer
from allennlp.data.fields import Field, LabelField, ListField, MetadataField, SpanField, TextField
from allennlp.data.token_indexers import PretrainedTransformerIndexer
from allennlp.data.tokenizers import PretrainedTransformerTokenizer

from tft_allennlp.common.input_problems import InputProblems, decode_line, read_raw_lines
from tft_allennlp.common.truncation import longest_first

logger = logging.getLogger(__name__)

Span = Tuple[int, int]
PhrasePair = Tuple[Span, Span]

PARAPHRASE, RANDOM, IN_PARAPHRASE = "paraphrase", "random", "in_paraphrase"
_DROPPED = "phrase pairs dropped (cut by truncation or without wordpieces)"


class AlignedPair(NamedTuple):
    """One line of the aligned corpus; spans are word-level and inclusive."""

    line_number: int
    source: List[str]
    target: List[str]
    source_phrases: List[Span]
    target_phrases: List[Span]
    alignments: List[PhrasePair]


class _Encoded(NamedTuple):
    """A sentence's wordpieces and, per word, its inclusive wordpiece span (None: no pieces)."""

    pieces: List[Token]
    word_pieces: List[Optional[Span]]


class PairLayout:
    """
    The combined sequence `[CLS] source [SEP] target [SEP]` of one sentence pair after
    truncation, and the map from word spans of either sentence to wordpiece spans in it.
    """

    def __init__(
        self, tokens: List[Token], source: _Encoded, target: _Encoded, source_offset: int,
        source_length: int, target_offset: int, target_length: int, truncated: bool,
    ) -> None:
        self.tokens = tokens
        self.truncated = truncated
        self._sides = (
            (source.word_pieces, source_offset, source_length),
            (target.word_pieces, target_offset, target_length),
        )

    def source_span(self, span: Span) -> Optional[Span]:
        return self._map(0, span)

    def target_span(self, span: Span) -> Optional[Span]:
        return self._map(1, span)

    def _map(self, side: int, span: Span) -> Optional[Span]:
        """
        The wordpiece span covering word span `span`, or None when its words have no pieces or
        truncation cut any of them. Words without pieces at the edges are skipped.
        """
        word_pieces, offset, kept = self._sides[side]
        covered = [pieces for pieces in word_pieces[span[0] : span[1] + 1] if pieces is not None]
        if not covered or covered[-1][1] >= kept:
            return None
        return offset + covered[0][0], offset + covered[-1][1]


@DatasetReader.register("tft_aligned_paraphrases")
class AlignedParaphrasesReader(DatasetReader):
    """
    Reads a corpus of sentential paraphrases with phrase alignments (JSON lines, one pair per
    line) and produces the training instances of paraphrasal relation injection (Arase &
    Tsujii, 2019, Algorithm 4.1). Each line looks like

        {"source": ["A", "man", "is", "playing", "a", "flute", "."],
         "target": ["A", "man", "plays", "the", "flute", "."],
         "source_phrases": [[0, 1], [3, 5], [4, 5], [0, 6]],
         "target_phrases": [[0, 1], [2, 4], [3, 4], [0, 5]],
         "alignments": [[[0, 1], [0, 1]], [[3, 5], [2, 4]], [[4, 5], [3, 4]]]}

    with word-level, inclusive spans; `source_phrases` and `target_phrases` list each side's
    phrases, aligned or not (aligned spans are added to them if missing), and `alignments` pairs
    a source phrase with a target phrase. Only `source` and `target` are required.

    For each line it yields:

    - a `paraphrase` instance `[CLS] s [SEP] t [SEP]` whose phrase pairs are every alignment,
      labelled `paraphrase`, and for each alignment an `in_paraphrase` negative: the same source
      phrase with another phrase of t, chosen at random among those not aligned to it;
    - `random_pairs_per_paraphrase` `random` instances `[CLS] s [SEP] t' [SEP]`, with t' the
      target of another pair of the corpus, in which every phrase of s is paired with a random
      phrase of t', labelled `random` (none in `binary` mode).

    Word spans become wordpiece spans of the combined sequence, so that in the paper's 1-based
    terms `2 <= j <= k < m <= n <= N-1`. A phrase whose words have no wordpieces, or that
    truncation to `max_length` cut, is dropped from its instance; both are counted and logged.
    Every random choice is seeded by `seed` and the line number, so the instances do not depend
    on how reading is sharded. Random partners come from the same block of `buffer_size` lines,
    so the corpus is streamed, never loaded; blocks are the unit of distributed and
    multi-process sharding.

    Instances have `tokens` (`TextField`), `label` (`labels` namespace), `source_spans` and
    `target_spans` (`ListField[SpanField]`, aligned by position), `phrase_labels`
    (`ListField[LabelField]`, `phrase_labels` namespace) and `metadata`. An instance without
    phrase pairs holds one `(-1, -1)` padding span that the model masks out.

    Registered as a `DatasetReader` with name "tft_aligned_paraphrases".

    # Parameters

    tokenizer : `Tokenizer`
        A `pretrained_transformer` tokenizer with a fast (Rust) Hugging Face tokenizer and
        `add_special_tokens: false`.
    token_indexers : `Dict[str, TokenIndexer]`, optional
        Attached in `apply_token_indexers`; defaults to a `pretrained_transformer` indexer.
    max_length : `int`, optional (default = `128`)
        Maximum wordpieces of an instance including special tokens (longest-first truncation).
    random_pairs_per_paraphrase : `int`, optional (default = `1`)
        Random (negative) sentence pairs per paraphrase pair.
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
        random_pairs_per_paraphrase: int = 1,
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
        if not isinstance(tokenizer, PretrainedTransformerTokenizer) or tokenizer._add_special_tokens:
            raise ConfigurationError(
                "tft_aligned_paraphrases needs a 'pretrained_transformer' tokenizer with "
                "'add_special_tokens: false'; the reader adds [CLS]/[SEP] itself."
            )
        if not tokenizer.tokenizer.is_fast:
            raise ConfigurationError(f"{tokenizer._model_name} has no fast tokenizer.")
        if part not in ("all", "train", "validation"):
            raise ConfigurationError(f"part must be all, train or validation, not {part!r}.")
        if buffer_size < 2 or random_pairs_per_paraphrase < 0:
            raise ConfigurationError("buffer_size must be >= 2, random_pairs_per_paraphrase >= 0.")
        self._tokenizer = tokenizer
        self._token_indexers = token_indexers or {
            "tokens": PretrainedTransformerIndexer(tokenizer._model_name)
        }
        self._start = tokenizer.sequence_pair_start_tokens
        self._middle = tokenizer.sequence_pair_mid_tokens
        self._budget = max_length - tokenizer.num_special_tokens_for_pair()
        if self._budget < 2:
            raise ConfigurationError(f"max_length {max_length} leaves no room for two sentences.")
        self._max_length = max_length
        self._random_pairs = random_pairs_per_paraphrase
        self._binary = binary
        self._max_phrase_pairs = max_phrase_pairs
        self._buffer_size = buffer_size
        self._part = part
        self._validation_fraction = validation_fraction
        self._seed = seed
        self._lenient = lenient
        self._counts: collections.Counter = collections.Counter()
        self._encoded: Dict[Tuple[str, ...], _Encoded] = {}

    # Reading

    def _read(self, file_path: str) -> Iterable[Instance]:
        problems = InputProblems(file_path, self._lenient)
        self._counts.clear()
        lines = read_raw_lines(cached_path(file_path))
        for block in self.shard_iterable(self._blocks(lines)):
            pairs = [
                pair
                for pair in (self._parse(number, raw, problems) for number, raw in block)
                if pair is not None and self._in_part(pair.line_number)
            ]
            self._encoded.clear()
            for position, pair in enumerate(pairs):
                rng = random.Random(f"{self._seed}:{pair.line_number}")
                self._counts["paraphrase pairs"] += 1
                yield self._paraphrase_instance(pair, rng)
                for partner in self._partners(position, pairs, rng):
                    yield self._random_instance(pair, partner, rng)
        self._log_counts(file_path)
        problems.log_summary("lines")

    def _blocks(self, lines: Iterator[Tuple[int, bytes]]) -> Iterator[List[Tuple[int, bytes]]]:
        """
        Groups the non-blank lines into blocks of `buffer_size`; a last block of a single line,
        which would have no random partner, joins the one before. Lines stay undecoded: only the
        worker that owns a block decodes and parses it.
        """
        held: List[Tuple[int, bytes]] = []
        block: List[Tuple[int, bytes]] = []
        for number, raw in lines:
            if not raw.strip():
                continue
            block.append((number, raw))
            if len(block) == self._buffer_size:
                if held:
                    yield held
                held, block = block, []
        if len(block) == 1 and held:
            held, block = held + block, []
        for remaining in (held, block):
            if remaining:
                yield remaining

    def _in_part(self, line_number: int) -> bool:
        if self._part == "all":
            return True
        draw = random.Random(f"split:{self._seed}:{line_number}").random()
        return (draw < self._validation_fraction) == (self._part == "validation")

    def _parse(self, number: int, raw: bytes, problems: InputProblems) -> Optional[AlignedPair]:
        text = decode_line(number, raw, problems)
        if text is None:
            return None
        try:
            record = json.loads(text)
        except json.JSONDecodeError as error:
            problems.reject(number, f"invalid JSON: {error.msg} at column {error.colno}")
            return None
        try:
            return _validate(number, record)
        except ValueError as error:
            problems.reject(number, str(error))
            return None

    def _partners(
        self, position: int, pairs: List[AlignedPair], rng: random.Random
    ) -> List[AlignedPair]:
        """Draws the random partners of `pairs[position]`: other pairs with another target."""
        target = pairs[position].target
        candidates = [i for i in range(len(pairs)) if i != position and pairs[i].target != target]
        missing = self._random_pairs - len(candidates)
        if missing > 0:
            self._counts["random pairs missing (no partner in the block)"] += missing
        chosen = rng.sample(candidates, min(self._random_pairs, len(candidates)))
        return [pairs[i] for i in chosen]

    # Instances

    def _paraphrase_instance(self, pair: AlignedPair, rng: random.Random) -> Instance:
        layout = self.layout(pair.source, pair.target)
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
            negatives = [t for t in targets if layout.target_span(t) not in aligned]
            if negatives:
                phrase_pairs.append((source_span, rng.choice(negatives)))
                labels.append(IN_PARAPHRASE)
            else:
                self._counts["in-paraphrase negatives missing (no other target phrase)"] += 1
        return self._instance(layout, phrase_pairs, labels, PARAPHRASE, pair, rng)

    def _random_instance(
        self, pair: AlignedPair, partner: AlignedPair, rng: random.Random
    ) -> Instance:
        layout = self.layout(pair.source, partner.target)
        phrase_pairs: List[PhrasePair] = []
        if not self._binary:
            targets = _mapped(partner.target_phrases, layout.target_span)
            if targets:
                phrase_pairs = [
                    (source_span, rng.choice(targets))
                    for source_span in _mapped(pair.source_phrases, layout.source_span)
                ]
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
        metadata = {"line_number": pair.line_number}
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
        layout = self.layout(source, target)
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
            source_pieces = layout.source_span(tuple(source_span))
            target_pieces = layout.target_span(tuple(target_span))
            if source_pieces is None or target_pieces is None:
                self._counts[_DROPPED] += 1
                continue
            kept.append((tuple(source_span), tuple(target_span)))
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

    def layout(self, source: List[str], target: List[str]) -> PairLayout:
        """The combined, truncated wordpiece sequence of two word-split sentences."""
        encoded_source, encoded_target = self._encode(source), self._encode(target)
        length1, length2 = longest_first(
            len(encoded_source.pieces), len(encoded_target.pieces), self._budget
        )
        tokens = self._tokenizer.add_special_tokens(
            encoded_source.pieces[:length1], encoded_target.pieces[:length2]
        )
        source_offset = len(self._start)
        return PairLayout(
            tokens,
            encoded_source,
            encoded_target,
            source_offset,
            length1,
            source_offset + length1 + len(self._middle),
            length2,
            truncated=length1 + length2 < len(encoded_source.pieces) + len(encoded_target.pieces),
        )

    def _encode(self, words: List[str]) -> _Encoded:
        key = tuple(words)
        if key not in self._encoded:
            if len(self._encoded) >= 4 * self._buffer_size:
                # Reading clears the cache per block; this bounds it for prediction.
                self._encoded.clear()
            encoding = self._tokenizer.tokenizer(
                list(words), is_split_into_words=True, add_special_tokens=False
            )
            ids = encoding["input_ids"]
            texts = self._tokenizer.tokenizer.convert_ids_to_tokens(ids)
            pieces = [Token(text, text_id=id_, type_id=0) for text, id_ in zip(texts, ids)]
            word_pieces: List[Optional[Span]] = [None] * len(words)
            for piece_index, word_index in enumerate(encoding.word_ids()):
                if word_index is None:
                    continue
                current = word_pieces[word_index]
                word_pieces[word_index] = (
                    (piece_index, piece_index) if current is None else (current[0], piece_index)
                )
            self._encoded[key] = _Encoded(pieces, word_pieces)
        return self._encoded[key]

    def _log_counts(self, file_path: str) -> None:
        if self._counts:
            summary = ", ".join(f"{count} {what}" for what, count in sorted(self._counts.items()))
            logger.info("Read %s: %s.", file_path, summary)

    def apply_token_indexers(self, instance: Instance) -> None:
        instance["tokens"].token_indexers = self._token_indexers  # type: ignore


def _mapped(spans: Iterable[Span], to_pieces) -> List[Span]:
    """The spans that map to wordpieces in a layout."""
    return [span for span in spans if to_pieces(span) is not None]


def _validate(number: int, record: Any) -> AlignedPair:
    """Checks one JSON record of the aligned corpus; raises ValueError with the reason."""
    if not isinstance(record, dict):
        raise ValueError("malformed record: expected a JSON object")
    words = {}
    for side in ("source", "target"):
        value = record.get(side)
        if not isinstance(value, list) or not value or not all(
            isinstance(word, str) and word.strip() for word in value
        ):
            raise ValueError(f"malformed record: {side!r} must be a non-empty list of words")
        words[side] = value

    def span(value: Any, side: str, what: str) -> Span:
        if (
            not isinstance(value, (list, tuple))
            or len(value) != 2
            or not all(isinstance(i, int) and not isinstance(i, bool) for i in value)
        ):
            raise ValueError(f"malformed span: {what} {value!r} is not [start, end]")
        start, end = value
        if start > end:
            raise ValueError(f"reversed span: {what} {list(value)} has start > end")
        if start < 0 or end >= len(words[side]):
            raise ValueError(
                f"span out of range: {what} {list(value)} for {len(words[side])} {side} words"
            )
        return start, end

    phrases: Dict[str, List[Span]] = {}
    for side in ("source", "target"):
        field = record.get(f"{side}_phrases", [])
        if not isinstance(field, list):
            raise ValueError(f"malformed record: '{side}_phrases' must be a list")
        phrases[side] = [span(value, side, f"{side}_phrases") for value in field]
    alignments_field = record.get("alignments", [])
    if not isinstance(alignments_field, list):
        raise ValueError("malformed record: 'alignments' must be a list")
    alignments: List[PhrasePair] = []
    for value in alignments_field:
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            raise ValueError(f"malformed alignment: {value!r} is not [source span, target span]")
        alignments.append((span(value[0], "source", "alignment"), span(value[1], "target", "alignment")))
    for side, index in (("source", 0), ("target", 1)):
        phrases[side] = list(dict.fromkeys(phrases[side] + [pair[index] for pair in alignments]))
    return AlignedPair(
        number, words["source"], words["target"], phrases["source"], phrases["target"], alignments
    )
