from tft_allennlp.alignment.link_rules.link_rule import LinkRule
from tft_allennlp.alignment.parsed_sentence import ParsedSentence
from tft_allennlp.alignment.word_forms import equal_without_periods


@LinkRule.register("tft_without_periods")
class WithoutPeriods(LinkRule):
    """
    Forms that differ only by periods ("U.S." / "US", "Mr." / "Mr").

    Registered as a `LinkRule` with name "tft_without_periods".
    """

    def matches(self, source: ParsedSentence, i: int, target: ParsedSentence, j: int) -> bool:
        return equal_without_periods(source.words[i], target.words[j])
