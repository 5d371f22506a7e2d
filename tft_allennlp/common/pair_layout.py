"""
How a sentence or a sentence pair becomes one wordpiece sequence for a pretrained transformer:
the tokenizer's own special tokens and segment ids (`[CLS] a [SEP] b [SEP]` for BERT),
longest-first truncation to `max_length`, and, for word-split sentences, the map from word spans
to wordpiece spans of the joined sequence. The GLUE reader, the injection reader and the
predictors all encode through `PairEncoder`.

AllenNLP's `intra_word_tokenize_sentence_pair` is not used for word-split pairs: it tokenizes
word by word (RoBERTa's and ModernBERT's words then lose the space before them) and cannot
truncate; the fast tokenizer's `word_ids` give the same map in one call.
"""

import copy
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

import transformers
from allennlp.common.checks import ConfigurationError
from allennlp.data import Token, TokenIndexer, Tokenizer
from allennlp.data.token_indexers import PretrainedTransformerIndexer
from allennlp.data.tokenizers import PretrainedTransformerTokenizer
from tokenizers import pre_tokenizers

from tft_allennlp.common.aligned_corpus import Span
from tft_allennlp.common.truncation import longest_first

CACHE_SIZE = 4096


class WordPieces(NamedTuple):
    """A word-split sentence's wordpieces and, per word, its inclusive wordpiece span (None:
    the word has no pieces, e.g. a zero-width space)."""

    pieces: List[Token]
    word_spans: List[Optional[Span]]


class Joined(NamedTuple):
    """The joined, truncated sequence of one or two sentences."""

    tokens: List[Token]
    lengths: Tuple[int, int]
    """Wordpieces kept of each sentence (0 for the missing second one)."""
    offsets: Tuple[int, int]
    """Position of each sentence's first wordpiece in `tokens`."""
    truncated: bool


class PairLayout:
    """
    The joined sequence of two word-split sentences and the map from word spans of either
    sentence to wordpiece spans in it.
    """

    def __init__(self, joined: Joined, source: WordPieces, target: WordPieces) -> None:
        self.tokens = joined.tokens
        self.truncated = joined.truncated
        self._sides = (
            (source.word_spans, joined.offsets[0], joined.lengths[0]),
            (target.word_spans, joined.offsets[1], joined.lengths[1]),
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
        word_spans, offset, kept = self._sides[side]
        covered = [pieces for pieces in word_spans[span[0] : span[1] + 1] if pieces is not None]
        if not covered or covered[-1][1] >= kept:
            return None
        return offset + covered[0][0], offset + covered[-1][1]


def _with_type_id(token: Token, type_id: int) -> Token:
    """
    A copy of `token` with segment id `type_id`: what `dataclasses.replace` makes, which
    inspects the class's fields at every call (a third of the GLUE reader's time on MRPC).
    """
    return Token(
        token.text,
        token.idx,
        token.idx_end,
        token.lemma_,
        token.pos_,
        token.tag_,
        token.dep_,
        token.ent_type_,
        token.text_id,
        type_id,
    )


class PairEncoder:
    """
    Encodes sentences and sentence pairs for one pretrained transformer tokenizer.

    # Parameters

    tokenizer : `Tokenizer`
        A `pretrained_transformer` tokenizer built with `add_special_tokens: false`: the
        encoder adds the special tokens itself when it joins the two sentences.
    max_length : `int`
        Maximum wordpieces of a joined sequence, special tokens included.
    owner : `str`
        Named in configuration errors (the reader's registered name).
    """

    def __init__(self, tokenizer: Tokenizer, max_length: int, owner: str) -> None:
        if not isinstance(tokenizer, PretrainedTransformerTokenizer):
            raise ConfigurationError(f"{owner} needs a 'pretrained_transformer' tokenizer.")
        if tokenizer._add_special_tokens:
            raise ConfigurationError(
                f"Set 'add_special_tokens: false' on the tokenizer of {owner}: the reader adds "
                "the special tokens itself when it joins the two sentences."
            )
        if max_length <= tokenizer.num_special_tokens_for_pair() + 1:
            raise ConfigurationError(
                f"max_length {max_length} leaves no room for two sentences in {owner}."
            )
        self.tokenizer = tokenizer
        self.max_length = max_length
        self._cache: Dict[Tuple[str, ...], WordPieces] = {}
        # Segment ids only where the model has segment embeddings (BERT, ELECTRA), not where it
        # has none or one (RoBERTa, DistilBERT, MPNet, DeBERTa-v3, ModernBERT).
        config = transformers.AutoConfig.from_pretrained(tokenizer._model_name)
        self.segment_ids = number_of_token_types(config) > 1
        self._word_tokenizer = _word_list_tokenizer(tokenizer)

    def default_indexers(self) -> Dict[str, TokenIndexer]:
        """The `pretrained_transformer` indexer of the tokenizer's model."""
        return {"tokens": PretrainedTransformerIndexer(self.tokenizer._model_name)}

    def text(self, text: str) -> List[Token]:
        """The wordpieces of a sentence given as text."""
        return self.tokenizer.tokenize(text)

    def join(self, first: List[Token], second: Optional[List[Token]] = None) -> Joined:
        """
        `first` (and `second`) with the tokenizer's special tokens and segment ids, wordpieces
        removed from the end of the longer sentence first until the whole fits `max_length`.
        """
        tokenizer = self.tokenizer
        if second is None:
            budget = self.max_length - tokenizer.num_special_tokens_for_sequence()
            kept = (min(len(first), budget), 0)
            tokens = self._with_special_tokens(first[: kept[0]])
            offsets = (len(tokenizer.single_sequence_start_tokens), 0)
        else:
            budget = self.max_length - tokenizer.num_special_tokens_for_pair()
            kept = longest_first(len(first), len(second), budget)
            tokens = self._with_special_tokens(first[: kept[0]], second[: kept[1]])
            start = len(tokenizer.sequence_pair_start_tokens)
            offsets = (start, start + kept[0] + len(tokenizer.sequence_pair_mid_tokens))
        truncated = kept != (len(first), len(second or []))
        return Joined(tokens, kept, offsets, truncated)

    def _with_special_tokens(
        self, first: List[Token], second: Optional[List[Token]] = None
    ) -> List[Token]:
        """
        What AllenNLP's `add_special_tokens` returns (the tokenizer's special tokens around the
        sentences, each part with its segment id), with every segment id 0 where the model has
        no segment embeddings. AllenNLP's deep-copies the second sentence's tokens first, which
        took 60% of the GLUE reader's time; tokens are not changed here either, only replaced
        where their segment id changes.
        """
        tokenizer = self.tokenizer

        def typed(tokens: List[Token], type_id: Optional[int] = None) -> List[Token]:
            # Shared special tokens (type_id None) keep their own segment ids.
            if not self.segment_ids:
                type_id = 0
            return [
                token
                if type_id is None or token.type_id == type_id
                else _with_type_id(token, type_id)
                for token in tokens
            ]

        if second is None:
            return (
                typed(tokenizer.single_sequence_start_tokens)
                + typed(first, tokenizer.single_sequence_token_type_id)
                + typed(tokenizer.single_sequence_end_tokens)
            )
        return (
            typed(tokenizer.sequence_pair_start_tokens)
            + typed(first, tokenizer.sequence_pair_first_token_type_id)
            + typed(tokenizer.sequence_pair_mid_tokens)
            + typed(second, tokenizer.sequence_pair_second_token_type_id)
            + typed(tokenizer.sequence_pair_end_tokens)
        )

    def layout(self, source: Sequence[str], target: Sequence[str]) -> PairLayout:
        """The joined, truncated sequence of two word-split sentences, with its span map."""
        encoded_source = self.word_pieces(source)
        encoded_target = self.word_pieces(target)
        joined = self.join(encoded_source.pieces, encoded_target.pieces)
        return PairLayout(joined, encoded_source, encoded_target)

    def word_pieces(self, words: Sequence[str]) -> WordPieces:
        """
        The wordpieces of a word-split sentence and each word's span of them. Cached: a reader
        meets each sentence a few times within a block of its corpus (the cache is emptied when
        it holds `CACHE_SIZE` sentences).
        """
        key = tuple(words)
        if key not in self._cache:
            if len(self._cache) >= CACHE_SIZE:
                self._cache.clear()
            self._cache[key] = self._word_pieces(key)
        return self._cache[key]

    def _word_pieces(self, words: Tuple[str, ...]) -> WordPieces:
        hf_tokenizer = self._word_tokenizer
        encoding = hf_tokenizer(list(words), is_split_into_words=True, add_special_tokens=False)
        ids = encoding["input_ids"]
        texts = hf_tokenizer.convert_ids_to_tokens(ids)
        pieces = [Token(text, text_id=id_, type_id=0) for text, id_ in zip(texts, ids)]
        word_spans: List[Optional[Span]] = [None] * len(words)
        for piece_index, word_index in enumerate(encoding.word_ids()):
            if word_index is None:
                continue
            current = word_spans[word_index]
            word_spans[word_index] = (
                (piece_index, piece_index) if current is None else (current[0], piece_index)
            )
        return WordPieces(pieces, word_spans)


def _word_list_tokenizer(tokenizer: PretrainedTransformerTokenizer) -> Any:
    """
    The Hugging Face tokenizer that splits word lists: byte-level BPE tokenizers (RoBERTa,
    ModernBERT) with a space before each word, as in running text (without it a word list's
    "the" is not the "Ġthe" of a sentence); the text tokenization stays the model's own.
    RoBERTa's tokenizer class takes `add_prefix_space`; a plain `PreTrainedTokenizerFast`
    (ModernBERT's) keeps it as an attribute only, and a copy of it gets a byte-level
    pre-tokenizer that adds the space.
    """
    word_tokenizer = tokenizer.tokenizer
    if getattr(word_tokenizer, "add_prefix_space", None) is False:
        # Imported here, as AllenNLP's modules do: it imports transformers' model code.
        from allennlp.common import cached_transformers

        word_tokenizer = cached_transformers.get_tokenizer(
            tokenizer._model_name, **{**tokenizer._tokenizer_kwargs, "add_prefix_space": True}
        )
    backend = getattr(word_tokenizer, "backend_tokenizer", None)
    pre_tokenizer = None if backend is None else backend.pre_tokenizer
    if isinstance(pre_tokenizer, pre_tokenizers.ByteLevel) and not pre_tokenizer.add_prefix_space:
        # A copy: the cached tokenizer is shared.
        word_tokenizer = copy.deepcopy(word_tokenizer)
        word_tokenizer.backend_tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(
            add_prefix_space=True,
            trim_offsets=pre_tokenizer.trim_offsets,
            use_regex=pre_tokenizer.use_regex,
        )
    return word_tokenizer


def number_of_token_types(config: transformers.PretrainedConfig) -> int:
    """How many segment ids a model embeds (as AllenNLP's embedder counts them)."""
    if isinstance(config, transformers.XLNetConfig):
        return 3
    return getattr(config, "type_vocab_size", 0)
