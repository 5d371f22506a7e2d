// TFT with the follow-up's simple features: mean-pooled phrases, [hs; ht], both heads.
// Base recipe and variables: ../common/injection.libsonnet
local injection = import '../common/injection.libsonnet';
injection(pooling='tft_mean_pooling', features='tft_concat')
