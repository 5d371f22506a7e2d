import json

import pytest

from research.scripts.mix_corpora import corpus_figures, main, mix


def _record(source, target, alignments, line):
    return {
        "source": source.split(),
        "target": target.split(),
        "source_phrases": [[0, 0], [1, 1]],
        "target_phrases": [[0, 0]],
        "alignments": alignments,
        "line": line,
    }


# Two alignments each: "the"/"The" is identical (case ignored), "cat"/"dog" is not.
A = [_record("the cat", "The dog", [[[0, 0], [0, 0]], [[1, 1], [1, 1]]], n) for n in range(4)]
B = [_record("a b", "a b", [[[0, 1], [0, 1]]], n) for n in range(2)]


def test_figures_count_phrases_alignments_and_differing_pairs():
    figures = corpus_figures(A + B)
    assert figures["pairs"] == 6
    assert figures["phrases_per_sentence"] == 1.5  # (2 + 1) phrases per pair, 2 sentences
    assert figures["alignments_per_pair"] == 10 / 6
    assert figures["non_identical_per_pair"] == 4 / 6
    assert figures["non_identical_share"] == 4 / 10


def test_mix_keeps_every_record_once_tags_its_corpus_and_is_seeded():
    mixed = mix([("a", A), ("b", B)], take=0, seed=1)
    assert sorted((r["corpus"], r["line"]) for r in mixed) == [
        ("a", 0),
        ("a", 1),
        ("a", 2),
        ("a", 3),
        ("b", 0),
        ("b", 1),
    ]
    assert mixed[0]["source"] in (["the", "cat"], ["a", "b"])  # the words are left alone
    assert mixed == mix([("a", A), ("b", B)], take=0, seed=1)
    assert mixed != mix([("a", A), ("b", B)], take=0, seed=2)


def test_take_samples_each_source_to_one_size_and_refuses_a_small_source():
    mixed = mix([("a", A)], take=3, seed=1)
    assert len(mixed) == 3 and len({r["line"] for r in mixed}) == 3
    with pytest.raises(ValueError, match="source b has 2 records, fewer than 3"):
        mix([("a", A), ("b", B)], take=3, seed=1)


def test_the_command_writes_the_mix_and_refuses_to_overwrite(tmp_path):
    source = tmp_path / "a.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in A))
    out = tmp_path / "mixed.jsonl"
    main([str(out), f"a={source}"])
    assert len(out.read_text().splitlines()) == 4
    with pytest.raises(SystemExit):
        main([str(out), f"a={source}"])
    assert sorted(tmp_path.iterdir()) == sorted([source, out])  # no draft left behind
