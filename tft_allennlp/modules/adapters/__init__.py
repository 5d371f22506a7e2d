from tft_allennlp.modules.adapters.bottleneck_adapters import BottleneckAdapter, BottleneckAdapters
from tft_allennlp.modules.adapters.lora import LoraAdapters
from tft_allennlp.modules.adapters.sublayer_sites import SITES, SublayerSites, sublayer_sites
from tft_allennlp.modules.adapters.transformer_adapters import TransformerAdapters
