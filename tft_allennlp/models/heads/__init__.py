from tft_allennlp.models.heads.glue_head import GlueHead
