from tft_allennlp.alignment.link_rules.link_rule import LinkRule
from tft_allennlp.alignment.parsed_sentence import ParsedSentence
from tft_allennlp.alignment.word_forms import is_abbreviation


@LinkRule.register("tft_abbreviation")
class Abbreviation(LinkRule):
    """
    A capitalised word and its written abbreviation ("Corp." / "Corporation",
    `tft_allennlp.alignment.word_forms.is_abbreviation`).

    Registered as a `LinkRule` with name "tft_abbreviation".
    """

    def matches(self, source: ParsedSentence, i: int, target: ParsedSentence, j: int) -> bool:
        return is_abbreviation(source.words[i], target.words[j])
