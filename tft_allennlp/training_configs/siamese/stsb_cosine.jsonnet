// Siamese STS-B, Sentence-BERT's regression objective: cos(u, v) regressed on score / 5 with
// MSE, score = 5 * cos; Pearson and Spearman. Base recipe and variables: ../common/siamese.libsonnet
local siamese = import '../common/siamese.libsonnet';
// Training batches are sorted over whole windows like ../glue/stsb.jsonnet's, whose loader the
// harness's Siamese strategies take (../common/siamese_of_glue.libsonnet). The cross-encoder's
// trouble with sorted batches was its output's offset (a bias starting at 0); cos(u, v) has no
// bias to learn. Sorted against random batches was not measured for this objective.
siamese(task='stsb', directory='STS-B', validation_metric='+combined_score',
        objective={ type: 'tft_cosine_mse' })
