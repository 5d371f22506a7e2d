from tft_allennlp.alignment.phrase_aligners.learned_phrase_aligner import LearnedPhraseAligner
from tft_allennlp.alignment.phrase_aligners.mutual_argmax_phrase_aligner import (
    MutualArgmaxPhraseAligner,
)
from tft_allennlp.alignment.phrase_aligners.phrase_aligner import PhraseAligner
from tft_allennlp.alignment.phrase_aligners.syntactic_basic_phrase_aligner import (
    SyntacticBasicPhraseAligner,
)
from tft_allennlp.alignment.phrase_aligners.syntactic_phrase_aligner import (
    SyntacticPhraseAligner,
)
