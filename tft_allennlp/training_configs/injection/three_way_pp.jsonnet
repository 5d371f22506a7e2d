// Ablation +3way-PP: the phrasal head alone, paraphrase / random / in-paraphrase.
// Base recipe and variables: ../common/injection.libsonnet
local injection = import '../common/injection.libsonnet';
injection(pooling='tft_max_pooling', features='tft_elaborate', loss_weights={ sentence: 0.0, phrase: 1.0 })
