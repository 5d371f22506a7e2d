"""
A tiny random-init BERT checkpoint written locally for the tests: nothing is downloaded.

The vocabulary holds the special tokens, single characters (plain and `##`-continuation, so
every ASCII word can be tokenized) and a fixed list of whole words used by the fixtures. Words
left out on purpose split into several wordpieces: "playing" -> "play ##ing",
"flute" -> "f ##lu ##te".
"""

import os
import string

import torch
from transformers import BertConfig, BertModel, BertTokenizer

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = """
a actors an and animals apple are asleep at back bad bank best better bike blue book books
bought boy buy by called calm can cancelled car cat children closed coffee cold company cook
cooking cost cut cutting day did dinner do dogs dropped dull early eating election expensive
fast fastest fell film finance flood flooded fly for friday funny game get girl he held higher
hired how i in instrument is it job kitchen learn long lose lost making man march mat meeting
mess monday money moved much music my nearest new not of on one onion outside park phone plan
planes play plays plot prices profits reading report reported riding river rose run running said sat
school sharply she shop should sitting sky sleep slicing small spring staff stay stories street
team the this through to today too town two wanted warm was way weather weight what when where
which who why woman won wonderful would written wrote year you
""".split()
PIECES = ["##ing", "##lu", "##te", "##s", "##ed"]


def tiny_vocabulary():
    characters = list(string.ascii_lowercase + string.digits + string.punctuation)
    pieces = ["##" + character for character in string.ascii_lowercase + string.digits]
    # Whole words that are also single characters ("a", "i") appear once.
    return list(dict.fromkeys(SPECIAL_TOKENS + characters + pieces + PIECES + WORDS))


def write_tiny_bert(directory: str, seed: int = 0) -> str:
    """
    Writes config, safetensors weights and tokenizer files of a 2-layer BERT with hidden size
    32 to `directory`, deterministically for a given `seed`, and returns the directory.
    """
    os.makedirs(directory, exist_ok=True)
    vocabulary = tiny_vocabulary()
    with open(os.path.join(directory, "vocab.txt"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(vocabulary) + "\n")
    config = BertConfig(
        vocab_size=len(vocabulary),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    torch.manual_seed(seed)
    BertModel(config).save_pretrained(directory, safe_serialization=True)
    BertTokenizer(os.path.join(directory, "vocab.txt"), do_lower_case=True).save_pretrained(
        directory
    )
    return directory
