from tests.alignment.sentences import CHECKED, show


def test_flute_pair_by_hand(pipeline):
    source, target = pipeline.parse_text(["A man is playing a flute.", "A man plays the flute."])
    record = CHECKED.align(source, target)
    assert show(record) == [
        ("A man", "A man"),
        ("man", "man"),
        ("is playing a flute", "plays the flute"),
        ("playing", "plays"),
        ("a flute", "the flute"),
        ("flute", "flute"),
    ]
    # man, playing ~ plays (a lemma), flute.
    assert record["word_links"] == [[1, 1], [3, 2], [5, 4]]


def test_one_span_per_region_and_closest_length(pipeline):
    # Rule 5: "the park" / "the park" covers the region; a wider pair stays where it adds the
    # same words on both sides, a preposition counting as any preposition ("in" / "through").
    texts = ["Two dogs are running in the park.", "Two dogs run through the park."]
    pairs = show(CHECKED.align(*pipeline.parse_text(texts)))
    assert ("the park", "the park") in pairs and ("in the park", "through the park") in pairs
    assert ("in the park", "the park") not in pairs
    # A wider pair that adds the same words on both sides stays.
    texts = ["Two dogs are running in the park.", "Two dogs run in the park."]
    pairs = show(CHECKED.align(*pipeline.parse_text(texts)))
    assert ("in the park", "in the park") in pairs and ("the park", "the park") in pairs
    source, target = pipeline.parse_text(
        ["Prices fell sharply in March.", "In March, prices dropped sharply."]
    )
    assert ("in March", "In March") in show(CHECKED.align(source, target))


def test_deterministic(pipeline):
    texts = ["The river flooded the small town.", "The small town was flooded by the river."]
    first = CHECKED.align(*pipeline.parse_text(texts))
    second = CHECKED.align(*pipeline.parse_text(texts))
    assert first == second
