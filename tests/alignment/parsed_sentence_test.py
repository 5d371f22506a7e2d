def test_phrases_are_content_words_subtrees_and_verb_phrases(pipeline):
    source, _ = pipeline.parse_text(["A man is playing a flute.", "A man plays the flute."])
    assert [" ".join(source.words[s : e + 1]) for s, e in source.phrases] == [
        "A man",
        "man",
        "is playing a flute",
        "playing",
        "a flute",
        "flute",
    ]
    # Each word's head from the parse: "playing" is the root.
    assert source.heads == [1, 3, 3, 3, 5, 3, 3]


def test_whole_sentence_and_function_words_are_never_phrases(pipeline):
    (parsed,) = pipeline.parse_text(["He said that it was on the table."])
    phrases = [" ".join(parsed.words[s : e + 1]) for s, e in parsed.phrases]
    assert "He said that it was on the table" not in phrases
    assert all(w not in phrases for w in ("He", "that", "it", "on", "the", "."))
    assert "on the table" in phrases and "table" in phrases
