"""Which technologies a program, a file name or a file's content reveals.

Names are the ones a reader expects ("SQLite", "systemd", "Node.js"); the
analysis lists them sorted so two runs over one transcript always agree.
"""

from __future__ import annotations

import posixpath
import re

_PROGRAMS = {
    "python": "Python",
    "pip": "Python",
    "pytest": "Python",
    "sqlite3": "SQLite",
    "systemctl": "systemd",
    "journalctl": "systemd",
    "systemd-run": "systemd",
    "systemd-analyze": "systemd",
    "node": "Node.js",
    "nodejs": "Node.js",
    "npm": "Node.js",
    "npx": "Node.js",
    "pnpm": "Node.js",
    "yarn": "Node.js",
    "go": "Go",
    "cargo": "Rust",
    "rustc": "Rust",
    "java": "Java",
    "ruby": "Ruby",
    "php": "PHP",
    "nginx": "nginx",
    "redis-server": "Redis",
    "redis-cli": "Redis",
    "psql": "PostgreSQL",
    "postgres": "PostgreSQL",
    "docker": "Docker",
    "podman": "Podman",
    "deno": "Deno",
    "bun": "Bun",
}
_EXTENSIONS = {
    ".py": "Python",
    ".js": "Node.js",
    ".mjs": "Node.js",
    ".ts": "Node.js",
    ".go": "Go",
    ".rs": "Rust",
    ".service": "systemd",
    ".timer": "systemd",
    ".socket": "systemd",
    ".sqlite": "SQLite",
    ".sqlite3": "SQLite",
    ".db": "SQLite",
}
_CONTENT_PATTERNS = [
    (re.compile(r"^\s*(import|from)\s+sqlite3\b", re.MULTILINE), "SQLite"),
    (re.compile(r"^#!.*\bpython", re.MULTILINE), "Python"),
    (re.compile(r"^#!.*\bnode\b", re.MULTILINE), "Node.js"),
    (re.compile(r"^\[(Unit|Service|Install)\]\s*$", re.MULTILINE), "systemd"),
    (re.compile(r"require\(['\"](better-)?sqlite3?['\"]\)"), "SQLite"),
]
_VERSIONED = re.compile(r"^(python|pip|node|ruby|php|java)[\d.]*$")


def program_name(word: str) -> str:
    """`/nix/store/...-python3-3.14/bin/python3.11` -> `python`; versions and directories dropped."""
    base = posixpath.basename(word)
    match = _VERSIONED.match(base)
    return match.group(1) if match else base


def technology_of_program(word: str) -> str | None:
    return _PROGRAMS.get(program_name(word))


def technologies_of_file(path: str, content: str | None = None) -> set[str]:
    found = {tech for ext, tech in _EXTENSIONS.items() if path.endswith(ext)}
    if content:
        found |= technologies_of_content(content)
    return found


def technologies_of_content(content: str) -> set[str]:
    return {tech for pattern, tech in _CONTENT_PATTERNS if pattern.search(content)}
