from tft_allennlp.commands.export import Export
