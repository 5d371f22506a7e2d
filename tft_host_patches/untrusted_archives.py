"""
The guards of `tft_allennlp.common.untrusted_archives` put into AllenNLP's archive loading:
`allennlp.models.archival`'s `extracted_archive` (only the members loading reads, within a size and
ratio budget), `Params` and `Meta` (config and meta read as strict JSON), `_load_dataset_readers`
and `_load_model` (errors naming the archive; vocabulary, weights and base models checked first),
`Model.load_state_dict` (checked while an archive's model loads) and
`allennlp.nn.util.read_state_dict` (weights as data). Remove only with a loader that does the same
checks (`tests/common/untrusted_archives_test.py`, `tests/common/archive_extraction_test.py`,
docs/security.md).
"""

from tft_host_patches import PATCH_ATTRIBUTE, replace

PATCH = "untrusted_archives"


def install() -> None:
    """Puts the guards into AllenNLP's archive loading (once)."""
    from allennlp.models import archival
    from allennlp.models.model import Model
    from allennlp.nn import util as nn_util

    from tft_allennlp.common.archive_extraction import extracted_archive
    from tft_allennlp.common.untrusted_archives import (
        ArchiveMeta,
        ArchiveParams,
        checked_dataset_readers,
        checked_load_model,
        checked_load_state_dict,
        read_state_dict,
    )

    if getattr(archival.extracted_archive, PATCH_ATTRIBUTE, None) == PATCH:
        return
    replace(archival, "extracted_archive", extracted_archive, patch=PATCH)
    replace(archival, "Params", ArchiveParams, patch=PATCH)
    replace(archival, "Meta", ArchiveMeta, patch=PATCH)
    for name, guard in [
        ("_load_dataset_readers", checked_dataset_readers),
        ("_load_model", checked_load_model),
    ]:
        replace(archival, name, guard(getattr(archival, name)), patch=PATCH)
    load_state_dict = checked_load_state_dict(Model.load_state_dict)
    replace(Model, "load_state_dict", load_state_dict, patch=PATCH)
    replace(nn_util, "read_state_dict", read_state_dict, patch=PATCH)
