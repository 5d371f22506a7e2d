from tft_allennlp.alignment.link_rules.link_rule import LinkRule
from tft_allennlp.alignment.parsed_sentence import WORD_KINDS, ParsedSentence


@LinkRule.register("tft_same_lemma")
class SameLemma(LinkRule):
    """
    The same lemma ("runs" / "ran").

    Registered as a `LinkRule` with name "tft_same_lemma".

    # Parameters

    same_kind : `bool`, optional (default = `True`)
        Only words of one kind (`WORD_KINDS`), so that the verb "headed" never links to the
        noun "head"; a verb's "-ing" form and the noun written as its lemma are one kind
        ("is working" / "the work").
    """

    def __init__(self, same_kind: bool = True) -> None:
        self.same_kind = same_kind

    def matches(self, source: ParsedSentence, i: int, target: ParsedSentence, j: int) -> bool:
        if source.lemmas[i] != target.lemmas[j]:
            return False
        if not self.same_kind or WORD_KINDS[source.pos[i]] == WORD_KINDS[target.pos[j]]:
            return True
        return gerund_and_noun(source, i, target, j) or gerund_and_noun(target, j, source, i)


def gerund_and_noun(one: ParsedSentence, i: int, other: ParsedSentence, j: int) -> bool:
    """Whether word `i` of `one` is a verb in "-ing" and word `j` of `other` a noun written as
    its lemma ("working" / "work", "dissenting" / "dissent")."""
    return (
        one.pos[i] == "VERB"
        and one.words[i].lower().endswith("ing")
        and other.pos[j] == "NOUN"
        and other.words[j].lower() == other.lemmas[j]
    )
