// TFT, the paper's main model: max-pooled phrases, elaborate features [hs; ht; hs*ht; |hs-ht|], both heads.
// Base recipe and variables: ../common/injection.libsonnet
local injection = import '../common/injection.libsonnet';
injection(pooling='tft_max_pooling', features='tft_elaborate')
