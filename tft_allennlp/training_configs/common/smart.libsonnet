// SMART (Jiang et al., 2020, "SMART: Robust and Efficient Fine-Tuning for Pre-trained Natural
// Language Models through Principled Regularized Optimization") on top of any training config:
// its `model` wrapped in `tft_smart`, which adds to the loss a smoothness-inducing adversarial
// term (noise on the transformer's embedding-layer output, sigma 1e-5, one normalised ascent
// step of 1e-3, epsilon 1e-6; symmetric KL for classification, squared error for regression),
// weight lambda_s = `adversarial_weight`, and a Bregman proximal point term (distance to the
// outputs of a moving average of the parameters, momentum 0.99), weight mu = `proximal_weight`.
// The paper tuned lambda_s in {1, 3, 5} with mu = 1; the default here is lambda_s = mu = 1.
// Every key of the base config keeps working, the model's under `model.model`: e.g.
// `-o '{"model.model.dropout": 0.2, "model.adversarial_weight": 3}'`.
//
// outputs: which output keys are regularised, e.g. {sst2_logits: 'classification'} to switch
// SMART on for SST-2 only in a multitask run (null: the predictions the model declares, its
// `output_kinds()`; see tft_allennlp/models/smart.py).
function(config, adversarial_weight=1.0, proximal_weight=1.0, outputs=null)
  config {
    model: {
      type: 'tft_smart',
      model: config.model,
      adversarial_weight: adversarial_weight,
      proximal_weight: proximal_weight,
      [if outputs != null then 'outputs']: outputs,
    },
  }
