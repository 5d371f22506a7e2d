from tft_allennlp.alignment.link_rules.link_rule import LinkRule
from tft_allennlp.alignment.parsed_sentence import ParsedSentence
from tft_allennlp.alignment.word_forms import is_spelling_variant


@LinkRule.register("tft_spelling_variant")
class SpellingVariant(LinkRule):
    """
    Two proper nouns that are one name spelt two ways ("Qaeda" / "Qaida",
    `tft_allennlp.alignment.word_forms.is_spelling_variant`).

    Registered as a `LinkRule` with name "tft_spelling_variant".
    """

    def matches(self, source: ParsedSentence, i: int, target: ParsedSentence, j: int) -> bool:
        return source.pos[i] == target.pos[j] == "PROPN" and is_spelling_variant(
            source.words[i], target.words[j]
        )
