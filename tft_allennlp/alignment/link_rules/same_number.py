from tft_allennlp.alignment.link_rules.link_rule import LinkRule
from tft_allennlp.alignment.parsed_sentence import ParsedSentence
from tft_allennlp.alignment.word_forms import number_value


@LinkRule.register("tft_same_number")
class SameNumber(LinkRule):
    """
    Two numbers of one value ("four" / "4").

    Registered as a `LinkRule` with name "tft_same_number".
    """

    def matches(self, source: ParsedSentence, i: int, target: ParsedSentence, j: int) -> bool:
        if not source.pos[i] == target.pos[j] == "NUM":
            return False
        value = number_value(source.words[i])
        return value is not None and value == number_value(target.words[j])
