"""
The encoder cache of `tft_allennlp.archives.encoder_cache`: `TFT_CACHE` that cannot be a
folder is one line naming it, and an entry is used only while it matches the manifest written
with it; any other entry is rebuilt from the archive with one warning. The export itself is
stood in for by a function that writes known bytes (the real one is run by the fault campaign,
`tests/fault_cases.py`, and `tests/archives_test.py`).
"""

import hashlib
import json
import logging
import os

import pytest
from allennlp.common.checks import ConfigurationError

from tests.common.output_paths_test import gone_pid
from tft_allennlp.archives import encoder_cache, encoder_export
from tft_allennlp.archives.cache_manifest import MANIFEST_FILE, entry_problem, write_manifest
from tft_allennlp.archives.encoder_cache import exported_encoder
from tft_allennlp.common.output_paths import STAGING_PREFIX, draft_name

FILES = {"config.json": b'{"hidden_size": 32}', "model.safetensors": b"weights!"}
ARCHIVE = b"an archive"
ARCHIVE_SHA256 = hashlib.sha256(ARCHIVE).hexdigest()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """`TFT_CACHE` in `tmp_path`, a fake archive, and an export that writes `FILES` and counts
    its calls; {"archive": path, "exports": [output folders]}."""
    monkeypatch.setenv("TFT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(encoder_cache, "_exported", {})
    exports = []

    def fake_export(archive_file, output_dir, card=True):
        os.makedirs(output_dir)
        for name, content in FILES.items():
            (tmp_path / "written").write_bytes(content)
            os.replace(tmp_path / "written", os.path.join(output_dir, name))
        exports.append(output_dir)
        return output_dir

    monkeypatch.setattr(encoder_cache, "export_encoder", fake_export)
    archive = tmp_path / "model.tar.gz"
    archive.write_bytes(ARCHIVE)
    return {"archive": str(archive), "exports": exports}


def _entry(cache) -> str:
    return os.path.join(os.environ["TFT_CACHE"], "encoders", ARCHIVE_SHA256[:32])


def _load_again(cache) -> str:
    """`exported_encoder` in what stands for a new process: nothing remembered."""
    encoder_cache._exported.clear()
    return exported_encoder(cache["archive"])


def test_an_entry_is_written_with_its_manifest_and_then_reused_without_a_word(cache, caplog):
    directory = exported_encoder(cache["archive"])
    assert directory == _entry(cache)
    assert sorted(os.listdir(directory)) == [MANIFEST_FILE, "config.json", "model.safetensors"]
    manifest = json.loads(open(os.path.join(directory, MANIFEST_FILE)).read())
    assert manifest == {
        "format": 1,
        "archive_sha256": ARCHIVE_SHA256,
        "files": {
            # `sha256sum` of the bytes written
            "config.json": {
                "size": 19,
                "sha256": "454f0e46d0c72f39717fc658390bd9fb82207833e89b17c2de5d77dbb1ac6897",
            },
            "model.safetensors": {
                "size": 8,
                "sha256": "fa47a1dc2eaad8414f129b768e1bc3ab746de3ee7d73d82c9356a9ca2ad772f4",
            },
        },
    }
    # Nothing else is left in the cache (the staging folder is gone).
    assert os.listdir(os.path.dirname(directory)) == [os.path.basename(directory)]
    with caplog.at_level(logging.INFO):
        assert _load_again(cache) == directory
    assert len(cache["exports"]) == 1
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


def _delete_weights(d, tmp_path):
    os.remove(os.path.join(d, "model.safetensors"))


def _truncate_weights(d, tmp_path):
    with open(os.path.join(d, "model.safetensors"), "r+b") as handle:
        handle.truncate(3)


def _flip_a_byte_keeping_size_and_time(d, tmp_path):
    path = os.path.join(d, "model.safetensors")
    status = os.stat(path)
    with open(path, "r+b") as handle:
        handle.write(b"W")
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))


def _add_a_file(d, tmp_path):
    open(os.path.join(d, "tokenizer.json"), "w").write("{}")


def _weights_as_a_link_outside(d, tmp_path):
    # The same bytes, but through a link out of the entry: never followed, never deleted.
    (tmp_path / "outside.bin").write_bytes(FILES["model.safetensors"])
    os.remove(os.path.join(d, "model.safetensors"))
    os.symlink(tmp_path / "outside.bin", os.path.join(d, "model.safetensors"))


def _weights_as_a_named_pipe(d, tmp_path):
    os.remove(os.path.join(d, "model.safetensors"))
    os.mkfifo(os.path.join(d, "model.safetensors"))


def _entry_as_a_link_to_a_sound_copy(d, tmp_path):
    os.rename(d, tmp_path / "elsewhere")
    os.symlink(tmp_path / "elsewhere", d)


def _old_entry_without_manifest(d, tmp_path):
    os.remove(os.path.join(d, MANIFEST_FILE))


def _manifest_not_json(d, tmp_path):
    open(os.path.join(d, MANIFEST_FILE), "w").write("{not json")


def _manifest_of_another_archive(d, tmp_path):
    path = os.path.join(d, MANIFEST_FILE)
    manifest = json.loads(open(path).read())
    manifest["archive_sha256"] = "0" * 64
    open(path, "w").write(json.dumps(manifest))


def _nested_too_deep(d, tmp_path):
    os.makedirs(os.path.join(d, "a/b/c/d/e"))


DAMAGE = {
    "weights deleted": (_delete_weights, "model.safetensors is missing"),
    "weights truncated": (_truncate_weights, "model.safetensors has 3 bytes, its manifest 8"),
    "a byte changed, size and time kept": (
        _flip_a_byte_keeping_size_and_time,
        "model.safetensors differs from its manifest's SHA-256",
    ),
    "a file added": (_add_a_file, "tokenizer.json is not in its manifest"),
    "weights a link out of the entry": (
        _weights_as_a_link_outside,
        "model.safetensors is a symbolic link",
    ),
    "weights a named pipe": (_weights_as_a_named_pipe, "model.safetensors is not a plain file"),
    "the entry a link": (_entry_as_a_link_to_a_sound_copy, "it is a symbolic link"),
    "no manifest (an older version's entry)": (
        _old_entry_without_manifest,
        "it has no manifest: written by an older version of the plugin, or by hand",
    ),
    "manifest not JSON": (_manifest_not_json, f"its manifest {MANIFEST_FILE} is unreadable"),
    "manifest of another archive": (
        _manifest_of_another_archive,
        "its manifest is another archive's",
    ),
    "folders nested too deep": (_nested_too_deep, "a/b/c/d/e is more than 4 folders deep"),
}


@pytest.mark.parametrize("damage", DAMAGE, ids=list(DAMAGE))
def test_a_damaged_entry_is_rebuilt_with_one_warning(cache, caplog, tmp_path, damage):
    damaged, reason = DAMAGE[damage]
    directory = exported_encoder(cache["archive"])
    damaged(directory, tmp_path)
    assert entry_problem(directory, ARCHIVE_SHA256) == reason
    with caplog.at_level(logging.WARNING):
        assert _load_again(cache) == directory
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings == [
        f"The cached encoder {directory} is not used ({reason}); rebuilding it from "
        f"{cache['archive']}"
    ]
    assert len(cache["exports"]) == 2
    assert entry_problem(directory, ARCHIVE_SHA256) is None
    assert not os.path.islink(directory)
    for name, content in FILES.items():
        assert open(os.path.join(directory, name), "rb").read() == content
    # The damaged entry is gone, and nothing outside it was touched.
    assert os.listdir(os.path.dirname(directory)) == [os.path.basename(directory)]
    if damage == "weights a link out of the entry":
        assert (tmp_path / "outside.bin").read_bytes() == FILES["model.safetensors"]
    if damage == "the entry a link":
        assert (tmp_path / "elsewhere/model.safetensors").exists()


@pytest.mark.parametrize("sound", [True, False], ids=["sound", "damaged"])
def test_an_entry_another_process_completed_first_wins_if_sound(
    cache, monkeypatch, tmp_path, sound
):
    fake_export = encoder_cache.export_encoder
    theirs = {}

    def racing_export(archive_file, output_dir, card=True):
        # While this export runs, another process installs its own entry.
        fake_export(archive_file, str(tmp_path / "other"))
        write_manifest(str(tmp_path / "other"), ARCHIVE_SHA256)
        if not sound:
            os.remove(tmp_path / "other/config.json")
        os.rename(tmp_path / "other", _entry(cache))
        theirs["inode"] = os.stat(_entry(cache)).st_ino
        return fake_export(archive_file, output_dir)

    monkeypatch.setattr(encoder_cache, "export_encoder", racing_export)
    directory = exported_encoder(cache["archive"])
    assert len(cache["exports"]) == 2
    assert (os.stat(directory).st_ino == theirs["inode"]) == sound
    assert entry_problem(directory, ARCHIVE_SHA256) is None
    assert os.listdir(os.path.dirname(directory)) == [os.path.basename(directory)]


def test_a_failed_export_leaves_no_entry(cache, monkeypatch):
    def failing_export(archive_file, output_dir, card=True):
        os.makedirs(output_dir)
        open(os.path.join(output_dir, "config.json"), "w").write("{}")
        raise KeyboardInterrupt

    monkeypatch.setattr(encoder_cache, "export_encoder", failing_export)
    with pytest.raises(KeyboardInterrupt):
        exported_encoder(cache["archive"])
    assert os.listdir(os.path.join(os.environ["TFT_CACHE"], "encoders")) == []


def test_what_a_killed_export_left_in_the_cache_goes_with_the_next_build(cache):
    """A build killed midway (the process gone) leaves its staging folder, a whole export big:
    the next build removes it; one of a process that still runs stays."""
    encoders = os.path.join(os.environ["TFT_CACHE"], "encoders")
    host = draft_name("x").split(".")[-3]
    killed = os.path.join(encoders, f"{STAGING_PREFIX}{host}.{gone_pid()}")
    running = os.path.join(encoders, f"{STAGING_PREFIX}{host}.{os.getppid()}")
    for folder in (killed, running):
        os.makedirs(os.path.join(folder, "encoder"))
        open(os.path.join(folder, "encoder/model.safetensors"), "wb").write(b"half")
    directory = exported_encoder(cache["archive"])
    assert sorted(os.listdir(encoders)) == sorted(
        [os.path.basename(directory), os.path.basename(running)]
    )


def test_tft_cache_a_file_is_one_line_naming_it(cache, tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("TFT_CACHE", str(tmp_path / "file"))
    with pytest.raises(ConfigurationError) as error:
        exported_encoder(cache["archive"])
    assert str(error.value) == (
        f"TFT_CACHE={tmp_path}/file is not a folder; point it at a folder "
        "(default ~/.cache/tft_allennlp)"
    )
    monkeypatch.setenv("TFT_CACHE", str(tmp_path / "file/cache"))
    with pytest.raises(ConfigurationError) as error:
        exported_encoder(cache["archive"])
    assert str(error.value) == (
        f"TFT_CACHE={tmp_path}/file/cache is not a folder ({tmp_path}/file is a file); point it "
        "at a folder (default ~/.cache/tft_allennlp)"
    )


def test_the_default_cache_a_file_names_tft_cache(cache, tmp_path, monkeypatch):
    monkeypatch.delenv("TFT_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    (tmp_path / "tft_allennlp").write_text("")
    with pytest.raises(ConfigurationError) as error:
        exported_encoder(cache["archive"])
    assert str(error.value) == (
        f"the cache folder {tmp_path}/tft_allennlp (TFT_CACHE is unset) is not a folder; set "
        "TFT_CACHE to a folder"
    )


def test_an_encoders_file_in_the_cache_is_named(cache, tmp_path, monkeypatch):
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache/encoders").write_text("")
    with pytest.raises(ConfigurationError) as error:
        exported_encoder(cache["archive"])
    assert str(error.value) == (
        f"TFT_CACHE={tmp_path}/cache holds a file {tmp_path}/cache/encoders where its encoders "
        "folder goes; remove it, or point it at another folder"
    )


def test_the_exports_line_names_the_cache_entry_not_the_staging_folder(cache, caplog, monkeypatch):
    fake_export = encoder_cache.export_encoder

    def export_saying_where(archive_file, output_dir, **options):
        # The real export ends with this line, naming the folder it was given.
        fake_export(archive_file, output_dir)
        encoder_export.logger.info("Wrote the encoder of %s to %s", archive_file, output_dir)
        return output_dir

    monkeypatch.setattr(encoder_cache, "export_encoder", export_saying_where)
    with caplog.at_level(logging.INFO):
        directory = exported_encoder(cache["archive"])
    said = [r.getMessage() for r in caplog.records if r.name == encoder_export.logger.name]
    assert said == [f"Wrote the encoder of {cache['archive']} to {directory}"]
    assert STAGING_PREFIX in cache["exports"][0]  # where it was written: gone now
    assert not os.path.exists(cache["exports"][0])
    assert encoder_export.logger.filters == []  # and only while the cache writes an entry
