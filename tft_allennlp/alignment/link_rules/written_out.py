from tft_allennlp.alignment.link_rules.link_rule import LinkRule
from tft_allennlp.alignment.parsed_sentence import ParsedSentence
from tft_allennlp.alignment.word_forms import written_form


@LinkRule.register("tft_written_out")
class WrittenOut(LinkRule):
    """
    A symbol and the word it is read as ("%" / "percent").

    Registered as a `LinkRule` with name "tft_written_out".
    """

    def matches(self, source: ParsedSentence, i: int, target: ParsedSentence, j: int) -> bool:
        return written_form(source.words[i]) == written_form(target.words[j])
