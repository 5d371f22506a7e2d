"""
`allennlp tft-show`'s library: one self-contained HTML page of aligned sentence pairs, with the
injection corpus's labels, an injection model's probabilities and gold verdicts
(`page_writer.write_page`).
"""
