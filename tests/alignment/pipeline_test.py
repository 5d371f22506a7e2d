def test_runs_of_whitespace_never_become_words(pipeline):
    source, target = pipeline.parse_text(["What does  Quora \t mean?", "What does Quora mean?"])
    assert source.words == target.words == ["What", "does", "Quora", "mean", "?"]


def test_given_words_are_parsed_as_given(pipeline):
    # spaCy would split "show-style" and "can't"; words given as split stay as they are.
    (parsed,) = pipeline.parse_word_lists([["game", "show-style", "videos", "ca", "n't", "stop"]])
    assert parsed.words == ["game", "show-style", "videos", "ca", "n't", "stop"]
    assert len(parsed.pos) == len(parsed.heads) == 6


def test_a_pair_that_fails_to_parse_is_reported_not_fatal(pipeline, monkeypatch):
    """A parser error inside a batch marks that pair only; the others are aligned."""
    parse = pipeline.parse_text

    def failing(texts):
        if any("BOOM" in text for text in texts):
            raise RuntimeError("parser crashed")
        return parse(texts)

    monkeypatch.setattr(pipeline, "parse_text", failing)
    results = pipeline.align_texts(
        [
            (1, "A man sleeps.", "A man is asleep."),
            (2, "BOOM", "x"),
            (3, "Dogs run.", "Dogs are running."),
        ]
    )
    assert [number for number, _ in results] == [1, 2, 3]
    assert "parsing failed" in results[1][1]
    assert '"alignments"' in results[0][1] and '"alignments"' in results[2][1]
