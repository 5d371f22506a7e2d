from tft_allennlp.commands.align import Align
from tft_allennlp.commands.configs import Configs
from tft_allennlp.commands.export import Export
from tft_allennlp.commands.glue_submission import GlueSubmission
from tft_allennlp.commands.show import Show
from tft_allennlp.commands.tune import Tune
