"""
`LinkRule`, the registrable base of the rules that link one word of a sentence pair to one word
of the other (rule 2 of the rule-based aligner, `docs/alignment.md`), and `Link`.
"""

from typing import Tuple

from allennlp.common import Registrable

from tft_allennlp.alignment.parsed_sentence import ParsedSentence

# Word `i` of the source linked to word `j` of the target.
Link = Tuple[int, int]


class LinkRule(Registrable):
    """
    Evidence that content word `i` of `source` and content word `j` of `target` are one word.
    A rule-based aligner takes the pairs that the rules of a rank match one-to-one, rank by
    rank (`tft_allennlp.alignment.word_linker.WordLinker`). Register a subclass and name it in
    the aligner's `link_rules`, one list of names per rank, strongest evidence first:

        @LinkRule.register("my_rule")
        class MyRule(LinkRule): ...

        allennlp tft-align pairs.tsv aligned.jsonl --include-package my_package --aligner \\
            '{"type": "tft_syntactic", "link_rules": [["tft_same_form", "my_rule"]]}'
    """

    def matches(self, source: ParsedSentence, i: int, target: ParsedSentence, j: int) -> bool:
        raise NotImplementedError
