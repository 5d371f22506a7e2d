// Ablation +sentence: the sentential head alone (paraphrase vs random pair).
// Base recipe and variables: ../common/injection.libsonnet
local injection = import '../common/injection.libsonnet';
injection(pooling='tft_max_pooling', features='tft_elaborate', loss_weights={ sentence: 1.0, phrase: 0.0 }, stop_metric='sentence_accuracy')
