from tft_allennlp.alignment.link_rules.link_rule import LinkRule
from tft_allennlp.alignment.parsed_sentence import ParsedSentence


@LinkRule.register("tft_same_form")
class SameForm(LinkRule):
    """
    The same word in any case ("The" / "the").

    Registered as a `LinkRule` with name "tft_same_form".
    """

    def matches(self, source: ParsedSentence, i: int, target: ParsedSentence, j: int) -> bool:
        return source.words[i].lower() == target.words[j].lower()
