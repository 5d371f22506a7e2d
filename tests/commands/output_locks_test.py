"""
One command at a time writes an output (`tft_allennlp.common.output_paths`): `tft-align` and
`tft-show` refuse an output file, and `tft-export` an output directory, that a live command is
writing (holding its lock), in one line naming it and that command's process, and leave it as
it was; once that command has ended, the same command writes it.
"""

import json
import os

from tests import FIXTURES_ROOT
from tests.allennlp_cli import forked_allennlp
from tests.held_locks import held_elsewhere
from tft_allennlp.common.folder_lock import HOST, LOCK_FILE, lock_name
from tft_allennlp.common.output_paths import check_output_directory

CORPUS = FIXTURES_ROOT / "paraphrase/aligned.jsonl"


def test_an_output_that_a_live_command_writes_is_refused_in_one_line(tmp_path):
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("sentence1\tsentence2\nA man plays.\tA man is playing.\n")
    aligned, page, export = tmp_path / "out.jsonl", tmp_path / "page.html", tmp_path / "export"
    commands = {
        "tft-align": ([str(pairs), str(aligned)], tmp_path, lock_name(str(aligned)), aligned),
        "tft-show": ([str(CORPUS), str(page)], tmp_path, lock_name(str(page)), page),
        # The archive is never read: the output is checked first.
        "tft-export": ([str(tmp_path / "model.tar.gz"), str(export)], export, LOCK_FILE, export),
    }
    for command, (arguments, folder, name, output) in commands.items():
        with held_elsewhere(folder, name, f"allennlp {command}") as pid:
            before = sorted(os.listdir(tmp_path))
            owner = json.loads((folder / name).read_text())
            (result,) = forked_allennlp([command, *arguments], as_program=True)
            assert result.returncode == 1, result.stderr[-3000:]
            (line,) = [line for line in result.stderr.splitlines() if line.strip()]
            line, log = line.rsplit(" (traceback: ", 1)
            os.remove(log.rstrip(")"))
            assert line == (
                f"{command}: {output}: in use by allennlp {command}, process {pid} on {HOST}, "
                f"since {owner['since']}; wait until it ends, or write elsewhere"
            )
            assert sorted(os.listdir(tmp_path)) == before
        assert not os.path.exists(folder / name)
    # Once the owner has gone, the same output is written.
    (result,) = forked_allennlp(["tft-show", str(CORPUS), str(page)])
    assert result.returncode == 0, result.stderr[-3000:]
    assert page.read_text().startswith("<!DOCTYPE html>")
    assert sorted(os.listdir(tmp_path)) == ["page.html", "pairs.tsv"]


def test_a_lock_file_is_no_ones_content(tmp_path):
    # A directory that holds only the lock of a command that died writing it is empty.
    (tmp_path / LOCK_FILE).write_text('{"host": "elsewhere", "pid": 1}')
    (tmp_path / lock_name("out.jsonl")).write_text("")
    check_output_directory(str(tmp_path), force=False)
