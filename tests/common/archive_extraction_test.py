"""
Extracting untrusted model archives (`tft_allennlp.common.archive_extraction`): every kind of
member that escapes its folder is refused, only what loading reads is extracted, a decompression
bomb is refused at its header, and nothing stays behind after a refusal or an interruption.
"""

import os
import tarfile
from typing import List, Tuple

import pytest
from allennlp.common.checks import ConfigurationError
from allennlp.models.archival import load_archive

from tests.common.tar_members import Member, entry_member, file_member, write_bomb, write_tar
from tft_allennlp.common import archive_extraction
from tft_allennlp.common.archive_extraction import (
    ExtractionBudget,
    UntrustedArchiveError,
    extract_archive,
    member_problem,
)


@pytest.mark.parametrize(
    "member, problem",
    [
        (file_member("config.json"), None),
        (file_member("./vocabulary/labels.txt"), None),
        (entry_member("vocabulary", tarfile.DIRTYPE), None),
        (entry_member("weights.th", tarfile.SYMTYPE, "best/weights.th"), None),
        (entry_member("copy.json", tarfile.LNKTYPE, "config.json"), None),
        (file_member("/etc/cron.d/x"), "has an absolute path"),
        (file_member("a/../../x"), "has '..' in its path"),
        (file_member("..\\x"), "has '..' in its path"),
        (
            entry_member("l", tarfile.SYMTYPE, "/home"),
            "is a symbolic link to the absolute path '/home'",
        ),
        (
            entry_member("l", tarfile.SYMTYPE, "a/../.."),
            "is a symbolic link to 'a/../..', out of its",
        ),
        (entry_member("h", tarfile.LNKTYPE, "/etc/passwd"), "is a hard link to the absolute path"),
        (entry_member("h", tarfile.LNKTYPE, "../x"), "is a hard link to '../x', out of its folder"),
        (entry_member("disk", tarfile.BLKTYPE), "is a device file"),
        (entry_member("null", tarfile.CHRTYPE), "is a device file"),
        (entry_member("pipe", tarfile.FIFOTYPE), "is a named pipe"),
        (entry_member("odd", b"X"), "is not a file, folder or link (tar type b'X')"),
    ],
)
def test_every_kind_of_member_is_judged(member, problem):
    found = member_problem(member[0])
    assert found == problem if problem is None else found.startswith(problem), found


def _escapes(outside) -> List[Tuple[str, List[Member]]]:
    up = "../" * 40 + str(outside).lstrip("/")
    return [
        ("'..' path", [file_member(f"{up}/dotdot.txt")]),
        ("absolute path", [file_member(f"{outside}/absolute.txt")]),
        (
            "symlink, then a file",
            [entry_member("l", tarfile.SYMTYPE, str(outside)), file_member("l/x.txt")],
        ),
        (
            "hard link, then its file",
            [
                entry_member("v", tarfile.LNKTYPE, str(outside / "victim.txt")),
                file_member("v", b"over\n"),
            ],
        ),
        ("named pipe", [entry_member("pipe", tarfile.FIFOTYPE)]),
        ("device", [entry_member("null", tarfile.CHRTYPE)]),
    ]


@pytest.mark.parametrize("kind", range(6))
def test_a_malicious_archive_is_refused_with_nothing_written(tmp_path, kind):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("mine\n")
    name, members = _escapes(outside)[kind]
    # The refused member comes after good ones: those must not be extracted either.
    archive = write_tar(tmp_path / "model.tar.gz", [file_member("config.json"), *members])
    target = tmp_path / "extracted"
    target.mkdir()
    with pytest.raises(UntrustedArchiveError) as error:
        extract_archive(archive, str(target))
    message = str(error.value)
    shown = archive_extraction.shown(members[0][0].name)  # a long name, its middle cut
    assert message.startswith(f"{archive}: refused: member {shown}"), name
    assert "\n" not in message
    assert os.listdir(target) == []
    assert sorted(os.listdir(outside)) == ["victim.txt"]
    assert (outside / "victim.txt").read_text() == "mine\n"


def test_load_archive_refuses_before_it_extracts(tmp_path):
    """AllenNLP's own `load_archive`, as `predict` and `evaluate` call it, is guarded."""
    outside = tmp_path / "outside"
    outside.mkdir()
    escape = "../" * 40 + str(outside).lstrip("/") + "/x"
    archive = write_tar(tmp_path / "m.tar.gz", [file_member(escape)])
    with pytest.raises(UntrustedArchiveError, match="m.tar.gz: refused: member"):
        load_archive(archive)
    assert os.listdir(outside) == []


def test_a_good_archive_extracts_whole_with_its_links_inside(tmp_path):
    archive = write_tar(
        tmp_path / "model.tar.gz",
        [
            entry_member("vocabulary", tarfile.DIRTYPE),
            file_member("vocabulary/labels.txt", b"0\n1\n"),
            entry_member("vocabulary/link.txt", tarfile.SYMTYPE, "labels.txt"),
            entry_member("weights.th", tarfile.LNKTYPE, "vocabulary/labels.txt"),
        ],
    )
    extract_archive(archive, str(tmp_path / "x"))
    for name in ("vocabulary/labels.txt", "vocabulary/link.txt", "weights.th"):
        assert (tmp_path / "x" / name).read_bytes() == b"0\n1\n"
    assert os.path.islink(tmp_path / "x/vocabulary/link.txt")


def test_a_file_that_is_no_archive_is_named(tmp_path):
    path = tmp_path / "model.tar.gz"
    path.write_text("not a tar file")
    with pytest.raises(ConfigurationError, match="model.tar.gz: not a readable model archive"):
        extract_archive(str(path), str(tmp_path / "x"))


def test_members_loading_does_not_read_stay_in_the_archive(tmp_path):
    archive = write_tar(
        tmp_path / "model.tar.gz",
        [
            file_member("config.json", b"{}"),
            file_member("./meta.json", b"{}"),
            file_member("pretrained_transformers/m/vocab.txt", b"[PAD]\n"),
            file_member("notes.txt", b"kept out\n"),
            file_member("fta/anything.bin", b"kept out\n"),
        ],
    )
    extract_archive(archive, str(tmp_path / "x"))
    found = sorted(str(p.relative_to(tmp_path / "x")) for p in (tmp_path / "x").rglob("*"))
    assert found == [
        "config.json",
        "meta.json",
        "pretrained_transformers",
        "pretrained_transformers/m",
        "pretrained_transformers/m/vocab.txt",
    ]


def test_a_bomb_is_refused_at_its_header_with_nothing_written(tmp_path):
    # 8 GiB of zeros in 8 MB: refused from the member's header, before its first byte.
    archive = write_bomb(
        tmp_path / "model.tar.gz", "weights.th", 8 * 2**30, [file_member("config.json", b"{}")]
    )
    compressed = os.path.getsize(archive)
    assert 8 * 2**20 < compressed < 9 * 2**20
    # config.json's header and data block, then weights.th's header and data.
    expanded = 3 * 512 + 8 * 2**30
    with pytest.raises(UntrustedArchiveError) as error:
        extract_archive(archive, str(tmp_path / "x"))
    assert str(error.value).startswith(
        f"{archive}: refused: with member 'weights.th' it expands to 8.0 GiB, "
        f"{expanded / compressed:.0f} times its compressed {compressed / 2**20:.1f} MiB (at most "
        "20 times: TFT_ARCHIVE_MAX_RATIO), as a decompression bomb"
    )
    assert not (tmp_path / "x").exists()


def test_the_ratio_counts_from_its_free_allowance_and_members_it_skips(tmp_path):
    archive = write_bomb(tmp_path / "model.tar.gz", "notes.bin", 4 * 2**20)  # 4 KB compressed
    generous = ExtractionBudget(max_size=2**30, max_ratio=20.0, ratio_free=8 * 2**20)
    extract_archive(archive, str(tmp_path / "x"), budget=generous)  # under its allowance
    strict = generous._replace(ratio_free=2**20)
    with pytest.raises(UntrustedArchiveError, match="with member 'notes.bin' it expands to 4.0 M"):
        extract_archive(archive, str(tmp_path / "y"), budget=strict)


def test_the_size_cap_is_read_from_the_environment(tmp_path, monkeypatch):
    archive = write_bomb(tmp_path / "model.tar.gz", "weights.th", 2**20)
    monkeypatch.setenv("TFT_ARCHIVE_MAX_SIZE", "512K")
    with pytest.raises(UntrustedArchiveError) as error:
        extract_archive(archive, str(tmp_path / "x"))
    assert str(error.value).startswith(
        f"{archive}: refused: with member 'weights.th' it expands to more than 512.0 KiB, the "
        "most an archive may (TFT_ARCHIVE_MAX_SIZE)"
    )
    monkeypatch.setenv("TFT_ARCHIVE_MAX_SIZE", "2M")
    extract_archive(archive, str(tmp_path / "x"))
    assert os.path.getsize(tmp_path / "x/weights.th") == 2**20


@pytest.mark.parametrize(
    "variable, value, message",
    [
        ("TFT_ARCHIVE_MAX_SIZE", "lots", "TFT_ARCHIVE_MAX_SIZE='lots': not a size"),
        ("TFT_ARCHIVE_MAX_RATIO", "0.5", "TFT_ARCHIVE_MAX_RATIO='0.5': not a number of 1 or more"),
        ("TFT_ARCHIVE_MAX_RATIO", "nan", "TFT_ARCHIVE_MAX_RATIO='nan': not a number of 1 or more"),
    ],
)
def test_a_budget_variable_that_is_not_one_is_named(monkeypatch, variable, value, message):
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigurationError) as error:
        ExtractionBudget.from_environment()
    assert str(error.value).startswith(message)


def test_sizes_read_as_people_write_them():
    assert archive_extraction.parse_size("32G", "V") == 32 * 2**30
    assert archive_extraction.parse_size("1.5k", "V") == 1536
    assert archive_extraction.parse_size("100 MiB", "V") == 100 * 2**20
    assert archive_extraction.parse_size("4096", "V") == 4096


def test_a_member_that_would_fill_the_disk_is_refused(tmp_path, monkeypatch):
    archive = write_tar(tmp_path / "model.tar.gz", [file_member("weights.th", bytes(4096))])
    usage = archive_extraction.shutil.disk_usage(tmp_path)
    # The disk as if 100 MiB were free: less than the 256 MiB extraction leaves free.
    monkeypatch.setattr(
        archive_extraction.shutil, "disk_usage", lambda path: usage._replace(free=100 * 2**20)
    )
    with pytest.raises(UntrustedArchiveError) as error:
        extract_archive(archive, str(tmp_path / "x"))
    assert str(error.value).startswith(
        f"{archive}: cannot extract member 'weights.th' (4.0 KiB): 100.0 MiB free in"
    )
    assert not (tmp_path / "x").exists()


def test_an_interrupted_extraction_leaves_nothing_and_says_so(tmp_path, monkeypatch):
    archive = write_tar(
        tmp_path / "model.tar.gz",
        [file_member("config.json", b"{}"), file_member("weights.th", b"w")],
    )
    extract = tarfile.TarFile.extract

    def interrupted(self, member, *args, **kwargs):
        if member.name == "weights.th":  # Ctrl-C after config.json was written
            raise KeyboardInterrupt
        return extract(self, member, *args, **kwargs)

    monkeypatch.setattr(tarfile.TarFile, "extract", interrupted)
    with pytest.raises(KeyboardInterrupt) as error:
        extract_archive(archive, str(tmp_path / "x"))
    assert error.value.__notes__ == [
        f"{archive}: stopped while extracting it; nothing of it was kept"
    ]
    assert not (tmp_path / "x").exists()


def test_a_member_of_negative_size_is_refused_before_tarfile_loops_on_it(tmp_path):
    # A GNU base-256 size of -512: tarfile would read the same header again and again.
    header = tarfile.TarInfo("junk")
    header.size = -512
    good = tarfile.TarInfo("config.json")
    good.size = 2
    raw = good.tobuf(tarfile.GNU_FORMAT) + b"{}" + bytes(510)
    raw += header.tobuf(tarfile.GNU_FORMAT) + bytes(2 * tarfile.BLOCKSIZE)
    (tmp_path / "model.tar").write_bytes(raw)
    with pytest.raises(UntrustedArchiveError, match="member 'junk' has a negative size"):
        extract_archive(str(tmp_path / "model.tar"), str(tmp_path / "x"))


def test_a_hard_link_to_a_member_not_extracted_is_refused(tmp_path):
    # 40 links to a skipped 1 MiB member would each copy it out of the archive, uncounted.
    members = [file_member("junk.bin", bytes(2**20))]
    members += [entry_member(f"vocabulary/h{i}", tarfile.LNKTYPE, "junk.bin") for i in range(40)]
    archive = write_tar(tmp_path / "model.tar.gz", members)
    with pytest.raises(UntrustedArchiveError) as error:
        extract_archive(archive, str(tmp_path / "x"))
    assert str(error.value).startswith(
        f"{archive}: refused: member 'vocabulary/h0' is a hard link to 'junk.bin', which is no "
        "file extracted before it"
    )
    assert not (tmp_path / "x").exists()


def test_a_member_the_file_system_refuses_is_named_in_one_line(tmp_path):
    long_name = "vocabulary/" + "a" * 300 + ".txt"
    archive = write_tar(tmp_path / "model.tar.gz", [file_member(long_name)])
    with pytest.raises(UntrustedArchiveError) as error:
        extract_archive(archive, str(tmp_path / "x"))
    shown = "'vocabulary/" + "a" * 39 + "…" + "a" * 46 + ".txt'"
    assert str(error.value) == (
        f"{archive}: refused: member {shown} cannot be extracted (File name too long); nothing "
        "was kept"
    )
