// GLUE stsb: STS-B, regression, Pearson and Spearman correlation. Base recipe and variables: ../common/glue.libsonnet
local glue = import '../common/glue.libsonnet';
// Training batches are not grouped by length: STS-B's scores vary with sentence length, and
// length-bucketed batches cost 3 points of dev Pearson at 1k examples (benchmarks/RESULTS.md).
glue(task='stsb', directory='STS-B', validation_metric='+combined_score') + {
  data_loader+: { bucket_batches: 0 },
}
