"""Tar members written by hand, for the tests of untrusted archives."""

import gzip
import io
import tarfile
from typing import List, Optional, Tuple

Member = Tuple[tarfile.TarInfo, Optional[bytes]]


def file_member(name: str, data: bytes = b"data\n") -> Member:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def entry_member(name: str, kind: bytes, target: str = "") -> Member:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info, None


def write_tar(path, members: List[Member]) -> str:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return str(path)


def write_bomb(path, name: str, size: int, before: List[Member] = ()) -> str:
    """
    A `.tar.gz` whose member `name` is `size` bytes of zeros (after the members `before`),
    written in a moment: gzip streams may follow one another, so one compressed MiB of zeros
    (1 KB) is written `size` / 1 MiB times instead of compressing the zeros.
    """
    mib = 2**20
    assert size % mib == 0
    head = b""
    for info, data in [*before, (_sized(name, size), None)]:
        head += info.tobuf(tarfile.GNU_FORMAT, "utf-8", "surrogateescape")
        if data:
            head += data + bytes(-len(data) % tarfile.BLOCKSIZE)
    zeros = gzip.compress(bytes(mib), compresslevel=9)
    with open(path, "wb") as handle:
        handle.write(gzip.compress(head))
        for _ in range(size // mib):
            handle.write(zeros)
        handle.write(gzip.compress(bytes(2 * tarfile.BLOCKSIZE)))  # the archive's end
    return str(path)


def _sized(name: str, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = size
    return info
