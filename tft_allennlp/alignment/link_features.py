"""
Features of every word pair of a sentence pair, for a learned link scorer
(`tft_allennlp.alignment.phrase_aligners.learned_phrase_aligner`). They are the evidence the
rule-based aligner has, as numbers: lexical (the link rules of
`tft_allennlp.alignment.link_rules`, shared prefixes, neighbours), WordNet synonymy, static and
contextual embedding similarity, position and the parse (part of speech; in a second round, the
first round's scores of the neighbours and the heads).
"""

from typing import Dict, List, Optional, Sequence

import numpy

from tft_allennlp.alignment.link_rules import Abbreviation, SpellingVariant, WordNetSynonym
from tft_allennlp.alignment.parsed_sentence import CONTENT_POS, ParsedSentence
from tft_allennlp.alignment.word_forms import number_value, written_form
from tft_allennlp.alignment.wordnet import WordNet

# Universal Dependencies' coarse tags, one indicator each per side.
UNIVERSAL_POS = (
    "ADJ ADP ADV AUX CCONJ DET INTJ NOUN NUM PART PRON PROPN PUNCT SCONJ SYM VERB X".split()
)
# Feature groups, in the order they are stacked.
GROUPS = ("lexical", "wordnet", "static", "contextual")
# The link rules that "written_variant" asks for its own (`_written_variants`).
ABBREVIATION = Abbreviation()
SPELLING_VARIANT = SpellingVariant()


def feature_names(groups: Sequence[str]) -> List[str]:
    """The names of the first round's features for `groups`, in column order."""
    names: List[str] = []
    for group in GROUPS:
        if group not in groups:
            continue
        if group == "lexical":
            names += ["same_form", "same_lemma", "written_variant", "same_prefix"]
            names += ["both_content", "both_function", "same_pos", "position_distance"]
            names += ["previous_same_form", "next_same_form"]
            names += ["source_form_elsewhere", "target_form_elsewhere"]
            names += [f"source_{tag}" for tag in UNIVERSAL_POS]
            names += [f"target_{tag}" for tag in UNIVERSAL_POS]
        elif group == "wordnet":
            names.append("wordnet_synonym")
        else:
            names += [f"{group}_{name}" for name in SIMILARITY_FEATURES]
    return names


SIMILARITY_FEATURES = ("cosine", "below_row_best", "below_column_best", "mutual_best")
SECOND_ROUND_FEATURES = (
    "score",
    "previous_score",
    "next_score",
    "heads_score",
    "row_other_best",
    "column_other_best",
)


def similarity_features(similarity: numpy.ndarray) -> List[numpy.ndarray]:
    """A cosine matrix, how far each cell lies below the best of its row and of its column, and
    whether it is the best of both (SimAlign's mutual argmax)."""
    row_best = similarity.max(axis=1, keepdims=True)
    column_best = similarity.max(axis=0, keepdims=True)
    mutual = (similarity >= row_best) & (similarity >= column_best)
    return [similarity, similarity - row_best, similarity - column_best, mutual]


def _written_variants(source: ParsedSentence, target: ParsedSentence) -> numpy.ndarray:
    """1 where one word is written two ways, as the link rules find it: a symbol written out,
    forms without periods, numbers of one value (the tests of "tft_written_out",
    "tft_without_periods" and "tft_same_number", for all word pairs at once), or, between
    capitalised words, an abbreviation or a name spelt two ways (`ABBREVIATION`,
    `SPELLING_VARIANT`)."""

    def keys(sentence: ParsedSentence) -> List[tuple]:
        found = []
        for word, tag in zip(sentence.words, sentence.pos):
            bare = word.replace(".", "")
            value = number_value(word) if tag == "NUM" else None
            found.append((written_form(word), bare.lower() if bare.isalpha() else None, value))
        return found

    source_keys, target_keys = keys(source), keys(target)
    variants = numpy.zeros((len(source_keys), len(target_keys)), dtype=numpy.float32)
    for i, (written, bare, value) in enumerate(source_keys):
        for j, (other_written, other_bare, other_value) in enumerate(target_keys):
            if (
                written == other_written
                or (bare is not None and bare == other_bare)
                or (value is not None and value == other_value)
            ):
                variants[i, j] = 1.0
    # An abbreviation is capitalised; a name spelt two ways is two proper nouns.
    for rule, candidate in (
        (ABBREVIATION, lambda sentence, k: sentence.words[k][:1].isupper()),
        (SPELLING_VARIANT, lambda sentence, k: sentence.pos[k] == "PROPN"),
    ):
        for i in range(len(source_keys)):
            if not candidate(source, i):
                continue
            for j in range(len(target_keys)):
                if candidate(target, j) and rule.matches(source, i, target, j):
                    variants[i, j] = 1.0
    return variants


POS_INDEX = {tag: k for k, tag in enumerate(UNIVERSAL_POS)}


def _one_hot(tags: Sequence[str]) -> numpy.ndarray:
    """Shape `(len(UNIVERSAL_POS), len(tags))`: row k marks the words tagged `UNIVERSAL_POS[k]`."""
    table = numpy.zeros((len(UNIVERSAL_POS), len(tags)), dtype=numpy.float32)
    for word, tag in enumerate(tags):
        if tag in POS_INDEX:
            table[POS_INDEX[tag], word] = 1.0
    return table


def shifted(matrix: numpy.ndarray, offset: int) -> numpy.ndarray:
    """`result[i, j] = matrix[i + offset, j + offset]`, 0 where that lies outside."""
    result = numpy.zeros_like(matrix)
    rows, columns = matrix.shape
    if offset >= 0:
        result[: rows - offset, : columns - offset] = matrix[offset:, offset:]
    else:
        result[-offset:, -offset:] = matrix[: rows + offset, : columns + offset]
    return result


class LinkFeatures:
    """
    # Parameters

    groups : `Sequence[str]`
        Which of `GROUPS` to compute: "lexical", "wordnet", "static", "contextual".
    wordnet : `WordNet`, optional (default = `None`)
        Needed for "wordnet".
    """

    def __init__(self, groups: Sequence[str], wordnet: Optional[WordNet] = None) -> None:
        unknown = set(groups) - set(GROUPS)
        if unknown:
            raise ValueError(f"unknown feature groups {sorted(unknown)}; known: {list(GROUPS)}")
        if "wordnet" in groups and wordnet is None:
            raise ValueError('feature group "wordnet" needs a WordNet database')
        self.groups = list(groups)
        self.names = feature_names(groups)
        self._synonym = WordNetSynonym(wordnet) if wordnet is not None else None

    def first_round(
        self,
        source: ParsedSentence,
        target: ParsedSentence,
        similarities: Optional[Dict[str, numpy.ndarray]] = None,
    ) -> numpy.ndarray:
        """Shape `(len(source), len(target), len(names))`, float32. `similarities` holds the
        cosine matrices of word vectors that the groups "static" and "contextual" need, under
        those names."""
        columns: List[numpy.ndarray] = []
        if "lexical" in self.groups:
            columns += self._lexical(source, target)
        if "wordnet" in self.groups:
            columns.append(self._wordnet(source, target))
        for group in ("static", "contextual"):
            if group in self.groups:
                if similarities is None or group not in similarities:
                    raise ValueError(f'feature group "{group}" needs {group} similarities')
                columns += similarity_features(similarities[group])
        result = numpy.empty((len(source.words), len(target.words), len(columns)), numpy.float32)
        for k, values in enumerate(columns):
            result[:, :, k] = values
        return result

    @staticmethod
    def second_round(
        scores: numpy.ndarray, source: ParsedSentence, target: ParsedSentence
    ) -> numpy.ndarray:
        """Shape `(len(source), len(target), len(SECOND_ROUND_FEATURES))`: a cell's first-round
        score, its neighbours' (the previous words, the next words), its heads', and the best
        other score of its row and of its column."""
        rows, columns = scores.shape
        source_heads = numpy.array(source.heads if source.heads is not None else range(rows))
        target_heads = numpy.array(target.heads if target.heads is not None else range(columns))
        # Shape: (rows, columns): the best and second-best score of each row and column.
        row_sorted = numpy.sort(scores, axis=1)
        column_sorted = numpy.sort(scores, axis=0)
        row_second = row_sorted[:, -2:-1] if columns > 1 else numpy.zeros((rows, 1))
        column_second = column_sorted[-2:-1, :] if rows > 1 else numpy.zeros((1, columns))
        row_other = numpy.where(scores >= row_sorted[:, -1:], row_second, row_sorted[:, -1:])
        column_other = numpy.where(
            scores >= column_sorted[-1:, :], column_second, column_sorted[-1:, :]
        )
        heads = scores[numpy.ix_(source_heads, target_heads)]
        return numpy.stack(
            [scores, shifted(scores, -1), shifted(scores, 1), heads, row_other, column_other],
            axis=-1,
        ).astype(numpy.float32)

    @staticmethod
    def _lexical(source: ParsedSentence, target: ParsedSentence) -> List[numpy.ndarray]:
        source_forms = numpy.array([w.lower() for w in source.words], dtype=object)
        target_forms = numpy.array([w.lower() for w in target.words], dtype=object)
        same_form = (source_forms[:, None] == target_forms[None, :]).astype(float)
        source_lemmas = numpy.array(source.lemmas, dtype=object)
        target_lemmas = numpy.array(target.lemmas, dtype=object)
        same_lemma = (source_lemmas[:, None] == target_lemmas[None, :]) * (1 - same_form)
        variant = _written_variants(source, target) * (1 - same_form)
        source_content = numpy.array([tag in CONTENT_POS for tag in source.pos])
        target_content = numpy.array([tag in CONTENT_POS for tag in target.pos])
        variant *= numpy.outer(source_content, target_content)
        # The first four letters of words of four or more letters ("evidence" / "evident").
        source_prefixes = numpy.array(
            [w[:4] if len(w) >= 4 else f"<source {k}>" for k, w in enumerate(source_forms)], object
        )
        target_prefixes = numpy.array(
            [w[:4] if len(w) >= 4 else f"<target {k}>" for k, w in enumerate(target_forms)], object
        )
        prefix = (source_prefixes[:, None] == target_prefixes[None, :]) * (1 - same_form)
        source_pos = numpy.array(source.pos, dtype=object)
        target_pos = numpy.array(target.pos, dtype=object)
        rows, columns = same_form.shape
        position = numpy.abs(
            numpy.arange(rows)[:, None] / max(rows - 1, 1)
            - numpy.arange(columns)[None, :] / max(columns - 1, 1)
        )
        return [
            same_form,
            same_lemma,
            variant,
            prefix,
            numpy.outer(source_content, target_content),
            numpy.outer(~source_content, ~target_content),
            source_pos[:, None] == target_pos[None, :],
            position,
            shifted(same_form, -1),
            shifted(same_form, 1),
            (same_form.sum(axis=1, keepdims=True) - same_form) > 0,
            (same_form.sum(axis=0, keepdims=True) - same_form) > 0,
            *_one_hot(source.pos)[:, :, None],
            *_one_hot(target.pos)[:, None, :],
        ]

    def _wordnet(self, source: ParsedSentence, target: ParsedSentence) -> numpy.ndarray:
        assert self._synonym is not None
        synonyms = numpy.zeros((len(source.words), len(target.words)))
        for i, tag in enumerate(source.pos):
            if tag not in CONTENT_POS:
                continue
            for j, other_tag in enumerate(target.pos):
                if other_tag in CONTENT_POS and self._synonym.matches(source, i, target, j):
                    synonyms[i, j] = 1.0
        return synonyms
