"""Player text is stripped of terminal sequences and controls, bounded, and never raises."""

import random

import pytest

from aoe_tui.domain.untrusted import DEFAULT_LIMIT, clean_text, clean_value

HOSTILE = [
    ("\x1b]0;pwned title\x07after", "after"),
    ("\x1b]2;title\x1b\\after", "after"),
    ("before\x1b[2Jafter", "beforeafter"),
    ("\x1b[1;31mred\x1b[0m", "red"),
    ("\x9b2Jx", "x"),
    ("\x9d0;t\x9cx", "x"),
    ("\x1bPdevice\x1b\\x", "x"),
    ("a\rb", "a\nb"),
    ("a\r\nb", "a\nb"),
    ("bell\x07 back\x08 nul\x00 del\x7f c1\x85", "bell back nul del c1"),
    ("tab\tnew\nline", "tab\tnew\nline"),
    ("\x1b]0;unterminated title forever", ""),
    ("\x1b]0;unterminated\nnext line", "\nnext line"),
    ("lone escape\x1b", "lone escape"),
    ("\x1bcreset", "reset"),
]


@pytest.mark.parametrize("raw,expected", HOSTILE)
def test_sequences_and_controls_are_stripped(raw, expected):
    assert clean_text(raw) == expected


def test_markup_and_unicode_are_kept_verbatim():
    text = "GET /health returned body '[/]' [link=https://x]y[/link] [bold red]boom ls [/usr/bin] — ünïcode ✓"
    assert clean_text(text) == text


def test_huge_text_keeps_head_and_tail_within_the_limit():
    text = "HEAD" + "x" * 5_000_000 + "TAIL"
    cleaned = clean_text(text)
    assert len(cleaned) <= DEFAULT_LIMIT
    assert cleaned.startswith("HEAD") and cleaned.endswith("TAIL")
    cut = int(cleaned.split("…[")[1].split(" chars cut]")[0])
    assert len(cleaned) - len(f"…[{cut} chars cut]…") + cut == len(text)


@pytest.mark.parametrize("limit", [0, 1, 5, 30, 100])
def test_tiny_limits_never_raise(limit):
    cleaned = clean_text("y" * 1000, limit)
    assert "chars cut" in cleaned


def test_random_bytes_never_raise_and_leave_no_controls():
    rng = random.Random(17)
    for _ in range(300):
        raw = "".join(
            chr(rng.choice([rng.randrange(0, 0xA0), rng.randrange(0xA0, 0x3000)])) for _ in range(rng.randrange(0, 200))
        )
        cleaned = clean_text(raw, 150)
        assert not any(ord(c) < 0x20 and c not in "\n\t" or 0x7F <= ord(c) <= 0x9F for c in cleaned)
        assert len(cleaned) <= 150


def test_non_strings_are_made_text():
    class Hostile:
        def __str__(self):
            raise RuntimeError("no")

    assert clean_text(b"\x1b[2Jbytes\xff") == "bytes\ufffd"
    assert clean_text(None) == "None"
    assert clean_text(Hostile()) == "<unprintable Hostile>"


def test_values_are_cleaned_recursively_and_other_types_kept():
    value = {"body\x1b[2J": ["\x1b]0;t\x07ok", {"n": 3, "s": "a\x9bJb"}], "flag": True, "none": None}
    assert clean_value(value) == {"body": ["ok", {"n": 3, "s": "ab"}], "flag": True, "none": None}
