"""A libvirt save image (`virDomainSave`) with another domain definition in its header.

A warm start restores many guests from one saved template, each under its own
name, UUID, disk, console log and forwards. libvirt refuses a restore whose
definition differs from the saved one in name or UUID (its ABI check), even
though QEMU's migration stream does not depend on either; so each clone gets a
copy of the image whose header holds its own definition, and libvirt restores
that copy without any second definition to compare.

The header is libvirt's `virQEMUSaveHeader` (qemu_saveimage.h): a 16-byte
magic, five little-endian uint32 (version, data_len, was_running, compressed,
cookieOffset) and 14 unused ones, then `data_len` bytes holding the domain
XML, a NUL, the migration cookie and a NUL, padded with NULs; QEMU's stream
follows. The padding is what lets a longer definition fit: the cookie moves,
`data_len` and everything after it stay as they are.
"""

from __future__ import annotations

import shutil
import struct
from pathlib import Path
from typing import BinaryIO

from aoe_tui.domain.errors import AoeError

MAGIC = b"LibvirtQemudSave"
HEADER = struct.Struct("<16s5I56s")
COPY_CHUNK = 1 << 20


def domain_xml(image: Path) -> str:
    """The domain definition in `image`'s header."""
    with open(image, "rb") as source:
        data = source.read(_read_header(source, image)[1])
    return data[: data.find(b"\0")].decode()


def copy_with_definition(image: Path, target: Path, xml: str) -> None:
    """Copy `image` to `target` with `xml` as its domain definition (the cookie and QEMU's stream unchanged)."""
    with open(image, "rb") as source, open(target, "wb") as out:
        fields = _read_header(source, image)
        data_len = fields[1]
        data = source.read(data_len)
        cookie_offset = fields[4]
        cookie = data[cookie_offset : data.index(b"\0", cookie_offset) + 1] if cookie_offset else b""
        region = xml.encode() + b"\0"
        fields[4] = len(region) if cookie else 0
        region += cookie
        if len(region) > data_len:
            raise AoeError(
                f"{image}: the new domain definition ({len(xml)} bytes) does not fit the save image's "
                f"{data_len}-byte header; rebuild the warm-start template"
            )
        out.write(HEADER.pack(MAGIC, *fields, b"\0" * 56))
        out.write(region.ljust(data_len, b"\0"))
        shutil.copyfileobj(source, out, COPY_CHUNK)


def _read_header(source: BinaryIO, image: Path) -> list[int]:
    """[version, data_len, was_running, compressed, cookie_offset], the file positioned after the header."""
    raw = source.read(HEADER.size)
    if len(raw) < HEADER.size or raw[:16] != MAGIC:
        raise AoeError(f"{image}: not a complete libvirt save image")
    fields = list(HEADER.unpack(raw)[1:6])
    if fields[3]:
        raise AoeError(f"{image}: a compressed save image (format {fields[3]}); only raw images are restored")
    return fields
