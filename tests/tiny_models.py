"""
Tiny random-init checkpoints of every encoder architecture the plugin supports, written locally
for the tests (nothing is downloaded): BERT, RoBERTa, DistilBERT, MPNet, ELECTRA, DeBERTa-v2 and
ModernBERT, each with 2 layers of width 32 and a tokenizer of its own kind.

- WordPiece (BERT, DistilBERT, ELECTRA, MPNet): the tiny BERT's vocabulary (`tiny_bert.py`),
  with MPNet's own special tokens;
- byte-level BPE (RoBERTa; ModernBERT with its own special tokens, `[CLS] a [SEP] b [SEP]` and no
  segment ids): trained here on the tiny vocabulary's words;
- SentencePiece (DeBERTa-v2): a unigram model trained here on the same words.
"""

import os
import string

import torch
import transformers

from tests.tiny_bert import WORDS, tiny_vocabulary, write_tiny_bert

ARCHITECTURES = ["bert", "roberta", "distilbert", "mpnet", "electra", "deberta-v2", "modernbert"]
SIZE = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)


def training_text():
    """Sentences for the subword learners: every vocabulary word, letters and digits."""
    lines = [" ".join(WORDS[i : i + 12]) for i in range(0, len(WORDS), 12)]
    return lines + [" ".join(string.ascii_lowercase + string.digits + string.punctuation)] * 3


def write_tiny_model(architecture: str, directory: str, seed: int = 0) -> str:
    """Writes a tiny `architecture` model (config, weights, tokenizer); returns its directory."""
    if architecture == "bert":
        return write_tiny_bert(directory, seed)
    os.makedirs(directory, exist_ok=True)
    tokenizer = _tokenizer(architecture, directory)
    vocab_size = len(tokenizer)
    if architecture == "roberta":
        config = transformers.RobertaConfig(
            vocab_size=vocab_size,
            max_position_embeddings=130,
            **SIZE,
            pad_token_id=tokenizer.pad_token_id,
        )
    elif architecture == "distilbert":
        config = transformers.DistilBertConfig(
            vocab_size=vocab_size,
            dim=32,
            n_layers=2,
            n_heads=2,
            hidden_dim=64,
            max_position_embeddings=128,
        )
    elif architecture == "mpnet":
        config = transformers.MPNetConfig(
            vocab_size=vocab_size,
            max_position_embeddings=130,
            **SIZE,
            pad_token_id=tokenizer.pad_token_id,
        )
    elif architecture == "electra":
        config = transformers.ElectraConfig(
            vocab_size=vocab_size, embedding_size=16, max_position_embeddings=128, **SIZE
        )
    elif architecture == "deberta-v2":
        config = transformers.DebertaV2Config(
            vocab_size=vocab_size,
            max_position_embeddings=128,
            **SIZE,
            relative_attention=True,
            pos_att_type=["p2c", "c2p"],
            position_biased_input=False,
            type_vocab_size=0,
            pad_token_id=tokenizer.pad_token_id,
        )
    elif architecture == "modernbert":
        # A global attention layer, then a local one whose window (8 wordpieces either side) is
        # shorter than the tests' sequences.
        config = transformers.ModernBertConfig(
            vocab_size=vocab_size,
            max_position_embeddings=130,
            **SIZE,
            global_attn_every_n_layers=2,
            local_attention=16,
            pad_token_id=tokenizer.pad_token_id,
            bos_token_id=tokenizer.cls_token_id,
            cls_token_id=tokenizer.cls_token_id,
            eos_token_id=tokenizer.sep_token_id,
            sep_token_id=tokenizer.sep_token_id,
        )
    else:
        raise ValueError(f"Unknown architecture {architecture!r}; choose from {ARCHITECTURES}.")
    torch.manual_seed(seed)
    transformers.AutoModel.from_config(config).save_pretrained(directory, safe_serialization=True)
    tokenizer.save_pretrained(directory)
    return directory


def _tokenizer(architecture: str, directory: str):
    if architecture in ("distilbert", "electra", "mpnet"):
        special = ["<s>", "<pad>", "</s>", "[UNK]", "<mask>"] if architecture == "mpnet" else []
        vocabulary = list(dict.fromkeys(special + tiny_vocabulary()))
        path = os.path.join(directory, "vocab.txt")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("\n".join(vocabulary) + "\n")
        kind = {
            "distilbert": transformers.DistilBertTokenizerFast,
            "electra": transformers.ElectraTokenizerFast,
            "mpnet": transformers.MPNetTokenizerFast,
        }[architecture]
        return kind(vocab=path, do_lower_case=True)
    if architecture == "roberta":
        from tokenizers import ByteLevelBPETokenizer

        bpe = ByteLevelBPETokenizer()
        bpe.train_from_iterator(
            training_text(),
            vocab_size=600,
            min_frequency=1,
            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
        )
        bpe.save_model(directory)
        return transformers.RobertaTokenizerFast(
            vocab=os.path.join(directory, "vocab.json"),
            merges=os.path.join(directory, "merges.txt"),
        )
    if architecture == "modernbert":
        return _modernbert_tokenizer()
    if architecture == "deberta-v2":
        import sentencepiece

        text = os.path.join(directory, "text.txt")
        with open(text, "w", encoding="utf-8") as handle:
            handle.write("\n".join(training_text()) + "\n")
        sentencepiece.SentencePieceTrainer.train(
            input=text,
            model_prefix=os.path.join(directory, "spm"),
            vocab_size=200,
            model_type="unigram",
            pad_id=0,
            bos_id=1,
            eos_id=2,
            unk_id=3,
            pad_piece="[PAD]",
            bos_piece="[CLS]",
            eos_piece="[SEP]",
            unk_piece="[UNK]",
            user_defined_symbols=["[MASK]"],
            character_coverage=1.0,
            minloglevel=2,
        )
        os.remove(text)
        os.remove(os.path.join(directory, "spm.vocab"))
        # transformers converts the SentencePiece model it finds in the folder.
        transformers.DebertaV2Tokenizer.from_pretrained(directory).save_pretrained(directory)
        return transformers.DebertaV2TokenizerFast.from_pretrained(directory)
    raise ValueError(f"Unknown architecture {architecture!r}; choose from {ARCHITECTURES}.")


def _modernbert_tokenizer() -> transformers.PreTrainedTokenizerFast:
    """
    ModernBERT's kind of tokenizer: byte-level BPE without a space added before the text, BERT's
    special tokens, `[CLS] a [SEP] b [SEP]` and no segment ids, as one `tokenizers` object
    (ModernBERT ships a `tokenizer.json` and no tokenizer class of its own).
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    special = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]
    bpe = Tokenizer(models.BPE(unk_token="[UNK]"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(
        training_text(),
        trainers.BpeTrainer(
            vocab_size=600,
            min_frequency=1,
            special_tokens=special,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    cls, sep = ("[CLS]", bpe.token_to_id("[CLS]")), ("[SEP]", bpe.token_to_id("[SEP]"))
    bpe.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]", special_tokens=[cls, sep]
    )
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        unk_token="[UNK]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        mask_token="[MASK]",
        model_input_names=["input_ids", "attention_mask"],
    )
