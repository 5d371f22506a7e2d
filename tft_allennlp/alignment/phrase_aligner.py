"""
Phrase alignment of a sentential paraphrase pair: syntactic phrases from a dependency parse,
word links from lexical evidence (and optionally contextual embeddings), and the phrase pairs
that those links support.

The rules, in order (each is tested in `tests/alignment/phrase_aligner_test.py`):

1. Phrases. Every content word (noun, proper noun, verb, adjective, adverb, number) is a
   single-word phrase. Every token's subtree is a multi-word phrase when it spans two or more
   words (a constituent-like phrase for projective parses), and so is the verb phrase of every
   word with a subject to its left: from its first auxiliary or negation to its right edge.
   Punctuation is trimmed from the edges, spans that are only function words are dropped, and
   the whole sentence is not a phrase (that pair is the sentential paraphrase itself).
2. Word links, one-to-one, between content words only (identical function words such as "the"
   are too frequent to be evidence, and linking them across reordered phrases would make
   correct phrase pairs inconsistent). Candidates are content-word pairs with the same
   lower-cased form or the same lemma; they are taken greedily by evidence (form before lemma),
   then by closeness of relative position, so repeated words link in order. With a WordNet
   database (`tft_allennlp.alignment.wordnet`), content words of one kind (no names or
   numbers) that share a synset are candidates too, after form and lemma ("selected" /
   "chosen", "child" / "kid"). With a similarity matrix (contextual embeddings), content
   words still unlinked are then linked when they are each other's most similar word and the
   cosine reaches `similarity_threshold` (`SIMILARITY_THRESHOLD`, 0.65, by default).
   With `content_checks`, a lemma link also needs the two words to be the same kind of word
   (noun or proper noun, verb, adjective, adverb, number), so that the verb "headed" never
   links to the noun "head" (a verb's "-ing" form and the noun written as the lemma do: "is
   working" / "the work"); and two numbers, or two proper nouns, link by their form only
   (never by similarity: "$4,450" is not "$4,500"), where numbers of the same value have the
   same form ("four" / "4"), and so do forms that differ only by periods ("U.S." / "US"), a
   symbol and the word it is read as ("%" / "percent", `WRITTEN_OUT`), a capitalised word and
   its written abbreviation ("Corp." / "Corporation", `is_abbreviation`), and, after those, a
   name spelt two ways ("Qaeda" / "Qaida", `is_spelling_variant`). Also with `content_checks`,
   a word in capitals still unlinked links to each capitalised word of a run of unlinked words
   on the other side whose initials it is ("WHO" / "World Health Organization", "P&W" / "Pratt &
   Whitney"), and a content word still unlinked that is written as two or three adjacent
   unlinked words on the other side links to each of them ("hostnames" / "host names",
   "reentry" / "re - entry": hyphens between the parts are skipped; "%" / "per cent"); such
   one-to-many links support multi-word pairs but make no single-word pair.
3. Phrase pairs. A source and a target phrase align when both are single words or both are
   multi-word phrases, at least one link lies inside the pair, and the pair is
   consistent: no word inside either phrase is linked to a word outside the other.
4. Content checks (`content_checks`, on by default). A multi-word pair is dropped when
   - its sides hold different unlinked substantive words by kind (content words, counted as
     nouns, verbs, adjectives, adverbs and numbers, and polarity words such as "not", "never",
     "without", "against"): one side says something the other does not ("to shore" / "to
     reach shore", "against renewing the contract" / "renewing the contract", an extra
     attribution or argument), or something else ("smiling bomber" / "Bali bomber": an
     adjective for a name); a substitution of one kind stays ("fell sharply" / "dropped
     sharply"); or
   - both sides hold an unlinked number, or both an unlinked proper noun: amounts or names
     that differ ("$4,450" / "$4,500", a different person).
   Unlinked proper nouns next to a linked proper noun, in one run of proper nouns, are more
   words of a name both sides share and add no content ("Merrill 's" / "Merrill Lynch 's",
   "the Cubs" / "the Chicago Cubs"), as long as the other side has no unlinked proper noun.
   A courtesy title or rank (`TITLES`) in such a run is a word of the name that stands for a
   first name ("Mr Hicks" / "David Hicks"), but unlinked titles on both sides are two people
   ("Mr. Smith" / "Mrs. Smith").
5. One span per region (`tightest_spans`, on by default). Pairs with the same links inside
   them cover the same region; the tightest of them are kept (no other pair of the group lies
   inside them), and a wider one only when the words it adds are the same on both sides, any
   preposition counting as the same ("in the park" / "in the park" and "in the park" /
   "through the park" besides "the park" / "the park", but not "in the park" / "the park").
6. Among the remaining multi-word pairs, a phrase keeps only the partners closest to it in
   length, and a pair is kept only when each side is among the other's closest.

Without `content_checks` and `tightest_spans` (rules 1-3 and 6 alone) this is the aligner
that the project used before issue 19, kept for comparison.
"""

import difflib
from typing import TYPE_CHECKING, Callable, Dict, List, NamedTuple, Optional, Sequence, Set, Tuple

import numpy

from tft_allennlp.common.aligned_corpus import PhrasePair, Span, corpus_record

if TYPE_CHECKING:  # for annotations only
    import spacy.tokens

CONTENT_POS = frozenset({"NOUN", "PROPN", "VERB", "ADJ", "ADV", "NUM"})
# Kinds of content words that may link by lemma or similarity (rule 2, `content_checks`).
WORD_KINDS = {"NOUN": "noun", "PROPN": "noun", "VERB": "verb", "ADJ": "adj", "ADV": "adv"}
WORD_KINDS["NUM"] = "number"
# Unlinked words that count as content a phrase adds (rule 4), besides polarity words.
SUBSTANTIVE_POS = CONTENT_POS
# Words that may only link by their form: amounts and names.
FORM_ONLY_POS = frozenset({"NUM", "PROPN"})
# Lemmas that turn a statement around (rule 4).
POLARITY_LEMMAS = frozenset(
    {"not", "n't", "no", "never", "without", "against", "neither", "nor", "none", "nobody"}
    | {"nothing", "nowhere"}
)
# The least cosine of a similarity link (rule 2). 0.65 is the lowest threshold whose pairs were
# judged correct at 0.85 or more on the development samples of results/alignment_eval (0.5
# before: 0.78 there); held out, 0.87 against 0.79, with 0.89 as many correct pairs.
SIMILARITY_THRESHOLD = 0.65
# Courtesy titles and abbreviated ranks, without their period (rule 4): words that stand before a
# name instead of a first name ("Mr Hicks" / "David Hicks").
TITLES = frozenset(
    {"mr", "mrs", "ms", "miss", "dr", "prof", "sir", "rev", "gen", "col", "capt", "lt", "sgt"}
    | {"maj", "adm", "cmdr", "sen", "rep", "gov"}
)
# Words that may stand between the capitalised words of a name written out without giving its
# acronym a letter ("Pratt & Whitney" / "P&W", "Federal Bureau of Investigation" / "FBI").
ACRONYM_CONNECTORS = frozenset({"of", "and", "&", "for", "the", "-"})
# Symbols written out as a word (rule 2, `content_checks`): "30.4 %" / "30.4 percent".
WRITTEN_OUT = {"%": "percent"}
SUBJECTS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"})
VERB_PREFIX = frozenset({"aux", "auxpass", "neg"})


class ParsedSentence(NamedTuple):
    """What the aligner needs of a parsed sentence (picklable, unlike a spaCy `Doc`)."""

    words: List[str]
    lemmas: List[str]
    pos: List[str]
    phrases: List[Span]


def parse_to_sentence(doc: "spacy.tokens.Doc") -> ParsedSentence:
    """Extracts words, lemmas, coarse POS tags and syntactic phrases from a spaCy `Doc`."""
    words = [token.text for token in doc]
    pos = [token.pos_ for token in doc]
    content = [tag in CONTENT_POS for tag in pos]
    punctuation = [tag == "PUNCT" for tag in pos]

    def trimmed(start: int, end: int) -> Optional[Span]:
        while start <= end and punctuation[start]:
            start += 1
        while end >= start and punctuation[end]:
            end -= 1
        return (start, end) if start <= end else None

    sentence = trimmed(0, len(words) - 1)
    phrases: Set[Span] = {(i, i) for i in range(len(words)) if content[i]}
    for token in doc:
        candidates = [trimmed(token.left_edge.i, token.right_edge.i)]
        subjects = [child.i for child in token.children if child.dep_ in SUBJECTS]
        if subjects and max(subjects) < token.i:
            prefix = [child.i for child in token.lefts if child.dep_ in VERB_PREFIX]
            start = min(prefix + [token.i])
            if start > max(subjects):
                candidates.append(trimmed(start, token.right_edge.i))
        for span in candidates:
            if (
                span is not None
                and span[1] > span[0]
                and span != sentence
                and any(content[span[0] : span[1] + 1])
            ):
                phrases.add(span)
    return ParsedSentence(words, [token.lemma_.lower() for token in doc], pos, sorted(phrases))


NUMBER_WORDS = {
    word: value
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
NUMBER_WORDS.update(
    {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80}
)
NUMBER_WORDS.update({"ninety": 90, "hundred": 100, "thousand": 1000, "million": 10**6})
NUMBER_WORDS["billion"] = 10**9


def number_value(word: str) -> Optional[float]:
    """The value of a number written with digits ("10,000", "2.5") or as one word ("four")."""
    text = word.lower().replace(",", "")
    if text in NUMBER_WORDS:
        return float(NUMBER_WORDS[text])
    try:
        return float(text)
    except ValueError:
        return None


def is_abbreviation(word: str, other: str) -> bool:
    """Whether one capitalised word shortens the other, as written abbreviations do: the
    shorter, without a final period, has three or more letters and begins the longer, which has
    two or more letters more; and the shorter ends with a period or has at most four letters
    ("Corp." / "Corporation", "Gen." / "General", "Brig" / "Brigadier"; not the names "Johns" /
    "Johnson", nor "Japan" / "Japanese")."""
    written, longer = sorted((word, other), key=lambda form: len(form.rstrip(".")))
    short, long = written.rstrip("."), longer.rstrip(".")
    return (
        len(short) >= 3
        and (written.endswith(".") or len(short) <= 4)
        and len(long) >= len(short) + 2
        and short.isalpha()
        and long.isalpha()
        and short[0].isupper()
        and long[0].isupper()
        and long.lower().startswith(short.lower())
    )


def link_words(
    source: ParsedSentence,
    target: ParsedSentence,
    similarity: Optional[numpy.ndarray] = None,
    similarity_threshold: float = SIMILARITY_THRESHOLD,
    content_checks: bool = False,
    synonyms: Optional[Callable[[str, str, str], bool]] = None,
) -> Set[Tuple[int, int]]:
    """One-to-one word links (rule 2); `similarity` is a `(len(source), len(target))` matrix;
    `synonyms(lemma, other_lemma, kind)` says whether two lemmas of a kind are synonyms
    (`tft_allennlp.alignment.wordnet.WordNet.synonyms`)."""

    def same_kind(i: int, j: int) -> bool:
        """With `content_checks`, a lemma link needs the same kind of word ("headed" is no
        "head"), or a verb's "-ing" form and the bare noun ("is working" / "the work")."""
        if not content_checks or WORD_KINDS[source.pos[i]] == WORD_KINDS[target.pos[j]]:
            return True
        return _gerund_and_noun(source, i, target, j) or _gerund_and_noun(target, j, source, i)

    def may_be_similar(i: int, j: int) -> bool:
        """With `content_checks`, two numbers or two proper nouns link by their form only."""
        both = source.pos[i] == target.pos[j] and source.pos[i] in FORM_ONLY_POS
        return not (content_checks and both)

    candidates = []
    source_length, target_length = len(source.words), len(target.words)
    for i, (word, lemma, tag) in enumerate(zip(source.words, source.lemmas, source.pos)):
        if tag not in CONTENT_POS:
            continue
        for j, (other, other_lemma, other_tag) in enumerate(
            zip(target.words, target.lemmas, target.pos)
        ):
            if other_tag not in CONTENT_POS:
                continue
            if word.lower() == other.lower():
                evidence = 0
            elif content_checks and _written_form(word) == _written_form(other):
                evidence = 0  # "%" / "percent"
            elif content_checks and _equal_without_periods(word, other):
                evidence = 0  # "U.S." / "US", "Mr." / "Mr"
            elif (
                content_checks
                and tag == other_tag == "NUM"
                and number_value(word) is not None
                and number_value(word) == number_value(other)
            ):
                evidence = 0  # "four" / "4"
            elif lemma == other_lemma and same_kind(i, j):
                evidence = 1
            elif content_checks and is_abbreviation(word, other):
                evidence = 1  # "Corp." / "Corporation"
            elif (
                content_checks and tag == other_tag == "PROPN" and is_spelling_variant(word, other)
            ):
                evidence = 2  # "Qaeda" / "Qaida"
            elif (
                synonyms is not None
                and tag not in FORM_ONLY_POS  # names and numbers link by form only
                and other_tag not in FORM_ONLY_POS
                and WORD_KINDS[tag] == WORD_KINDS[other_tag]
                and synonyms(lemma, other_lemma, WORD_KINDS[tag])
            ):
                evidence = 2  # "selected" / "chosen"
            else:
                continue
            distance = abs(i / source_length - j / target_length)
            candidates.append((evidence, distance, i, j))
    links: Set[Tuple[int, int]] = set()
    linked_source: Set[int] = set()
    linked_target: Set[int] = set()
    for _, _, i, j in sorted(candidates):
        if i not in linked_source and j not in linked_target:
            links.add((i, j))
            linked_source.add(i)
            linked_target.add(j)
    if content_checks:
        links |= _acronym_links(source, target, linked_source, linked_target)
        links |= _compound_links(source, target, linked_source, linked_target)
    if similarity is not None:
        free_source = [
            i
            for i in range(source_length)
            if i not in linked_source and source.pos[i] in CONTENT_POS
        ]
        free_target = [
            j
            for j in range(target_length)
            if j not in linked_target and target.pos[j] in CONTENT_POS
        ]
        if free_source and free_target:
            block = similarity[numpy.ix_(free_source, free_target)]
            for row, i in enumerate(free_source):
                column = int(block[row].argmax())
                if (
                    int(block[:, column].argmax()) == row
                    and block[row, column] >= similarity_threshold
                    and may_be_similar(i, free_target[column])
                ):
                    links.add((i, free_target[column]))
    return links


def is_spelling_variant(word: str, other: str) -> bool:
    """Whether two names are one name spelt two ways, as transliterations are ("Qaeda" /
    "Qaida", "Domecq" / "Domeq", "Zulifquar" / "Zulfiqar"): words of five or more letters with
    the same first letter, neither beginning the other (not "Daniel" / "Daniels", nor "Japan"
    / "Japanese"), whose letters match at 0.8 or more (`difflib`'s ratio: twice the matched
    letters over both lengths)."""
    one, two = word.lower(), other.lower()
    return (
        min(len(one), len(two)) >= 5
        and one.isalpha()
        and two.isalpha()
        and one[0] == two[0]
        and not one.startswith(two)
        and not two.startswith(one)
        and difflib.SequenceMatcher(None, one, two).ratio() >= 0.8
    )


def _written_form(word: str) -> str:
    """The lower-cased word, a symbol written out ("%" -> "percent")."""
    return WRITTEN_OUT.get(word, word.lower())


def _is_title(word: str) -> bool:
    """A courtesy title or an abbreviated rank, with or without its period ("Mr", "Gen.")."""
    return word.rstrip(".").lower() in TITLES


def _both_ways(
    source: ParsedSentence,
    target: ParsedSentence,
    linked_source: Set[int],
    linked_target: Set[int],
) -> Tuple[Tuple[ParsedSentence, ParsedSentence, Set[int], Set[int], bool], ...]:
    """For one-to-many links looked for in both directions: (one side, the other, their linked
    words, whether the links must be flipped to read (source, target))."""
    return (
        (source, target, linked_source, linked_target, False),
        (target, source, linked_target, linked_source, True),
    )


def _acronym_links(
    source: ParsedSentence,
    target: ParsedSentence,
    linked_source: Set[int],
    linked_target: Set[int],
) -> Set[Tuple[int, int]]:
    """
    Rule 2, an acronym and the name it shortens: `(i, j)` for each capitalised word `j` of the
    run of words that source word `i`, written in capitals, gives the initials of ("WHO" /
    "World Health Organization", "N.Y." / "New York", "P&W" / "Pratt & Whitney"), and the same
    the other way round. Connectors (`ACRONYM_CONNECTORS`) may stand between the capitalised
    words. Only words not in `linked_source` / `linked_target` take part; both sets are
    updated.
    """
    links: Set[Tuple[int, int]] = set()
    for one, other, one_linked, other_linked, flip in _both_ways(
        source, target, linked_source, linked_target
    ):
        for i, word in enumerate(one.words):
            letters = word.replace(".", "").replace("&", "")
            if i in one_linked or not (2 <= len(letters) <= 6 and letters.isalpha()):
                continue
            if not letters.isupper():  # an acronym is written in capitals
                continue
            run = _initials_run(other, other_linked, letters)
            if run is None:
                continue
            one_linked.add(i)
            other_linked.update(run)
            links.update((j, i) if flip else (i, j) for j in run)
    return links


def _initials_run(sentence: ParsedSentence, linked: Set[int], letters: str) -> Optional[List[int]]:
    """The first run of unlinked capitalised words (connectors between them) whose initials are
    `letters`, as positions of the capitalised words; None when there is none."""

    def capitalised(k: int) -> bool:
        word = sentence.words[k]
        return k not in linked and word[:1].isupper() and word.isalpha() and not word.isupper()

    for start in range(len(sentence.words)):
        if not capitalised(start):
            continue
        run: List[int] = []
        k = start
        while k < len(sentence.words) and len(run) < len(letters):
            if capitalised(k) and sentence.words[k][0] == letters[len(run)]:
                run.append(k)
            elif not (sentence.words[k].lower() in ACRONYM_CONNECTORS and k not in linked):
                break
            k += 1
        if len(run) == len(letters):
            return run
    return None


def _equal_without_periods(word: str, other: str) -> bool:
    """Whether two words of letters and periods are the same without their periods, in any case
    ("U.S." / "US", "Dr" / "Dr."); numbers are not ("3.5" is not "35")."""
    forms = [form.replace(".", "") for form in (word, other)]
    return all(form.isalpha() for form in forms) and forms[0].lower() == forms[1].lower()


def _gerund_and_noun(one: ParsedSentence, i: int, other: ParsedSentence, j: int) -> bool:
    """Whether word `i` of `one` is a verb in "-ing" and word `j` of `other` a noun written as
    its lemma ("working" / "work", "dissenting" / "dissent")."""
    return (
        one.pos[i] == "VERB"
        and one.words[i].lower().endswith("ing")
        and other.pos[j] == "NOUN"
        and other.words[j].lower() == other.lemmas[j]
    )


def _compound_links(
    source: ParsedSentence,
    target: ParsedSentence,
    linked_source: Set[int],
    linked_target: Set[int],
) -> Set[Tuple[int, int]]:
    """
    Rule 2, one word written as adjacent words on the other side: `(i, j)` for each part `j`
    of the split form of source word `i`, and the same the other way round. Only words not in
    `linked_source` / `linked_target` take part; both sets are updated.
    """

    def split_forms(sentence: ParsedSentence, linked: Set[int]) -> Dict[str, List[int]]:
        """Concatenated lower-cased form -> the parts' positions, for each run of 2-3 unlinked
        words (hyphens between them are parts too, left out of the form)."""
        found: Dict[str, List[int]] = {}
        for start in range(len(sentence.words)):
            parts: List[int] = []
            pieces: List[str] = []
            for k in range(start, len(sentence.words)):
                word = sentence.words[k]
                if k in linked or (word != "-" and sentence.pos[k] == "PUNCT"):
                    break
                if word == "-" and (not pieces or sentence.words[parts[-1]] == "-"):
                    break  # a hyphen only between two words
                parts.append(k)
                if word != "-":
                    pieces.append(word.lower())
                    if len(pieces) >= 2:
                        found.setdefault("".join(pieces), parts[:])
                    if len(pieces) == 3:
                        break
        return found

    links: Set[Tuple[int, int]] = set()
    for one, other, one_linked, other_linked, flip in _both_ways(
        source, target, linked_source, linked_target
    ):
        forms = split_forms(other, other_linked)
        for i, (word, tag) in enumerate(zip(one.words, one.pos)):
            parts = forms.get(_written_form(word))  # "%" / "per cent" too
            if tag not in CONTENT_POS or i in one_linked or parts is None:
                continue
            if any(part in other_linked for part in parts):
                continue  # a part taken by an earlier compound
            one_linked.add(i)
            other_linked.update(parts)
            links.update((part, i) if flip else (i, part) for part in parts)
    return links


def align_phrases(
    source: ParsedSentence,
    target: ParsedSentence,
    links: Set[Tuple[int, int]],
    content_checks: bool = False,
    tightest_spans: bool = False,
) -> List[PhrasePair]:
    """The phrase pairs supported by `links` (rules 3-6), sorted."""
    source_links: Dict[int, Set[int]] = {}
    target_links: Dict[int, Set[int]] = {}
    for i, j in links:
        source_links.setdefault(i, set()).add(j)
        target_links.setdefault(j, set()).add(i)

    def consistent(source_span: Span, target_span: Span) -> bool:
        for i in range(source_span[0], source_span[1] + 1):
            if any(not target_span[0] <= j <= target_span[1] for j in source_links.get(i, ())):
                return False
        for j in range(target_span[0], target_span[1] + 1):
            if any(not source_span[0] <= i <= source_span[1] for i in target_links.get(j, ())):
                return False
        return True

    singles: List[PhrasePair] = [
        ((i, i), (j, j))
        for i, j in links
        if (i, i) in source.phrases
        and (j, j) in target.phrases
        and source_links[i] == {j}  # one-to-one
        and target_links[j] == {i}
    ]
    multi: List[PhrasePair] = []
    source_multi = [span for span in source.phrases if span[1] > span[0]]
    target_multi = [span for span in target.phrases if span[1] > span[0]]
    for source_span in source_multi:
        for target_span in target_multi:
            supported = any(
                source_span[0] <= i <= source_span[1] and target_span[0] <= j <= target_span[1]
                for i, j in links
            )
            if supported and consistent(source_span, target_span):
                multi.append((source_span, target_span))
    if content_checks:
        linked = ({i for i, _ in links}, {j for _, j in links})
        multi = [pair for pair in multi if _same_content(source, target, linked, pair)]
    if tightest_spans:
        multi = _tightest(source, target, links, multi)
    return sorted(singles + _closest_in_length(multi))


def _same_content(
    source: ParsedSentence,
    target: ParsedSentence,
    linked: Tuple[Set[int], Set[int]],
    pair: PhrasePair,
) -> bool:
    """Rule 4: the same kinds of unlinked substantive words on both sides, and no unlinked
    number or proper noun on both sides; `linked`: the linked words of each side."""
    linked_source, linked_target = linked
    kinds, facts, titles = [], [], []
    for sentence, span, side in (
        (source, pair[0], linked_source),
        (target, pair[1], linked_target),
    ):
        # Words of a name whose other words are linked add no content ("Merrill 's" /
        # "Merrill Lynch 's"), unless both sides hold such words (the facts check below).
        names = _name_parts(sentence, span, side)
        unlinked = [k for k in range(span[0], span[1] + 1) if k not in side]
        # A title before a name is no fact of its own ("Mr Hicks" / "David Hicks"), but two
        # different titles are ("Mr. Smith" / "Mrs. Smith").
        unlinked_titles = {k for k in unlinked if _is_title(sentence.words[k])}
        titles.append(bool(unlinked_titles))
        facts.append(
            {sentence.pos[k] for k in unlinked if k not in unlinked_titles} & FORM_ONLY_POS
        )
        unlinked = [k for k in unlinked if k not in names]
        kinds.append(
            sorted(
                "polarity" if sentence.lemmas[k] in POLARITY_LEMMAS else WORD_KINDS[sentence.pos[k]]
                for k in unlinked
                if sentence.pos[k] in SUBSTANTIVE_POS or sentence.lemmas[k] in POLARITY_LEMMAS
            )
        )
    # Both sides with an unlinked number (or proper noun): amounts (names) that differ.
    return kinds[0] == kinds[1] and not facts[0] & facts[1] and not (titles[0] and titles[1])


def _name_parts(sentence: ParsedSentence, span: Span, linked: Set[int]) -> Set[int]:
    """The unlinked proper nouns of `span` that stand in one run of adjacent proper nouns (and
    titles) with a linked proper noun: further words of a name that is linked ("Lynch" of
    "Merrill Lynch", "Mr" of "Mr Hicks")."""
    parts: Set[int] = set()
    start = span[0]
    while start <= span[1]:
        end = start
        while end <= span[1] and (sentence.pos[end] == "PROPN" or _is_title(sentence.words[end])):
            end += 1
        run = range(start, end)
        if any(k in linked for k in run):
            parts.update(k for k in run if k not in linked)
        start = end + 1
    return parts


def _tightest(
    source: ParsedSentence,
    target: ParsedSentence,
    links: Set[Tuple[int, int]],
    pairs: Sequence[PhrasePair],
) -> List[PhrasePair]:
    """Rule 5: per set of links inside, the tightest pairs, and wider ones that add the same
    words on both sides."""

    def inside(pair: PhrasePair) -> frozenset:
        (s0, s1), (t0, t1) = pair
        return frozenset((i, j) for i, j in links if s0 <= i <= s1 and t0 <= j <= t1)

    def added(sentence: ParsedSentence, wide: Span, tight: Span) -> List[str]:
        outside = [k for k in range(wide[0], wide[1] + 1) if not tight[0] <= k <= tight[1]]
        # A preposition counts as a preposition, whichever it is ("in" / "from Florida").
        return sorted(
            "ADP" if sentence.pos[k] == "ADP" else sentence.words[k].lower() for k in outside
        )

    groups: Dict[frozenset, List[PhrasePair]] = {}
    for pair in pairs:
        groups.setdefault(inside(pair), []).append(pair)
    kept: List[PhrasePair] = []
    for group in groups.values():
        chosen: List[PhrasePair] = []
        # Tightest first: a pair is compared with the kept pairs inside it.
        for pair in sorted(group, key=lambda p: (p[0][1] - p[0][0]) + (p[1][1] - p[1][0])):
            nested = [
                other
                for other in chosen
                if pair[0][0] <= other[0][0] <= other[0][1] <= pair[0][1]
                and pair[1][0] <= other[1][0] <= other[1][1] <= pair[1][1]
            ]
            if all(
                added(source, pair[0], other[0]) == added(target, pair[1], other[1])
                for other in nested
            ):
                chosen.append(pair)
        kept.extend(chosen)
    return kept


def _closest_in_length(pairs: Sequence[PhrasePair]) -> List[PhrasePair]:
    def length(span: Span) -> int:
        return span[1] - span[0] + 1

    best_for_source: Dict[Span, int] = {}
    best_for_target: Dict[Span, int] = {}
    for source_span, target_span in pairs:
        difference = abs(length(source_span) - length(target_span))
        best_for_source[source_span] = min(best_for_source.get(source_span, difference), difference)
        best_for_target[target_span] = min(best_for_target.get(target_span, difference), difference)
    return [
        (source_span, target_span)
        for source_span, target_span in pairs
        if abs(length(source_span) - length(target_span))
        == best_for_source[source_span]
        == best_for_target[target_span]
    ]


def align(
    source: ParsedSentence,
    target: ParsedSentence,
    similarity: Optional[numpy.ndarray] = None,
    similarity_threshold: float = SIMILARITY_THRESHOLD,
    content_checks: bool = True,
    tightest_spans: bool = True,
    synonyms: Optional[Callable[[str, str, str], bool]] = None,
) -> Dict:
    """The aligned-corpus record of one pair (`tft_allennlp.common.aligned_corpus`)."""
    links = link_words(source, target, similarity, similarity_threshold, content_checks, synonyms)
    return corpus_record(
        source.words,
        target.words,
        source.phrases,
        target.phrases,
        align_phrases(source, target, links, content_checks, tightest_spans),
        word_links=[list(link) for link in sorted(links)],
    )
