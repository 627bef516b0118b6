"""A libvirt save image with another domain definition: the cookie moves, QEMU's stream stays byte for byte."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from aoe_tui.domain.errors import AoeError
from aoe_tui.runtime.save_image import HEADER, MAGIC, copy_with_definition, domain_xml

COOKIE = b"<cookie>\n  <cpu mode='custom'/>\n</cookie>\n"
STREAM = bytes(range(256)) * 4096  # stands in for QEMU's migration stream (1 MiB, every byte value)


def _image(path: Path, xml: bytes, data_len: int = 4096, compressed: int = 0) -> Path:
    """A save image laid out as libvirt writes one: header, XML NUL, cookie NUL, padding, stream."""
    data = (xml + b"\0" + COOKIE + b"\0").ljust(data_len, b"\0")
    path.write_bytes(HEADER.pack(MAGIC, 2, data_len, 1, compressed, len(xml) + 1, b"\0" * 56) + data + STREAM)
    return path


def test_a_longer_definition_fits_the_padding_and_the_rest_is_unchanged(tmp_path: Path) -> None:
    saved = _image(tmp_path / "template.save", b"<domain><name>aoe-warm-template</name></domain>")
    longer = "<domain><name>aoe-first-build-20261202-0600-builder-three</name></domain>"
    copy_with_definition(saved, tmp_path / "clone.save", longer)
    clone = (tmp_path / "clone.save").read_bytes()
    assert domain_xml(tmp_path / "clone.save") == longer
    version, data_len, was_running, compressed, cookie_offset = struct.unpack("<5I", clone[16:36])
    assert (version, data_len, was_running, compressed) == (2, 4096, 1, 0)
    data = clone[HEADER.size : HEADER.size + data_len]
    assert cookie_offset == len(longer) + 1 and data[cookie_offset:].startswith(COOKIE + b"\0")
    assert clone[HEADER.size + data_len :] == STREAM and len(clone) == len(saved.read_bytes())


def test_a_definition_too_long_for_the_header_is_refused_naming_the_image(tmp_path: Path) -> None:
    saved = _image(tmp_path / "template.save", b"<domain/>", data_len=128)
    with pytest.raises(AoeError, match=r"template\.save: the new domain definition .* does not fit"):
        copy_with_definition(saved, tmp_path / "clone.save", "<domain>" + "x" * 200 + "</domain>")


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"not a save image at all", "not a complete libvirt save image"), (None, "compressed save image")],
)
def test_what_is_not_a_raw_save_image_is_refused(tmp_path: Path, content: bytes | None, message: str) -> None:
    path = tmp_path / "other.save"
    if content is None:
        _image(path, b"<domain/>", compressed=1)
    else:
        path.write_bytes(content)
    with pytest.raises(AoeError, match=message):
        domain_xml(path)
