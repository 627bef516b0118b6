"""The harness bundle: every real harness of `recipe.toml`, installed once on the host, given to guests as a disk.

The harnesses are hundreds of MB each (native binaries of 180-420 MB, a Node
runtime, a Python environment with litellm). Copying them into every guest of
every match would cost minutes per match, so they are installed on the host from
their registries by exact version into one folder, frozen into a read-only ext4
image, and that image is attached to each harness agent's guest as a second,
read-only disk (serial `aoe-harnesses`, mounted at `GUEST_MOUNT`). The image is
cached under the recipe's hash: a changed recipe is a new bundle.

Layout inside the image: `npm/<adapter>/node_modules/...` (npm's own install),
`pypi/<adapter>/` (pip's `--target` install), `node/` (the host's Node runtime
and the C++ libraries it links, for the JavaScript harnesses: the guest's own
Debian has none recent enough), and `bin/<executable>`, a small shell wrapper per
harness that sets its runtime's paths and executes it. A harness is run as
`GUEST_MOUNT/bin/<executable>`.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from aoe_tui.agents.harnesses.base import RecipeEntry, read_recipe
from aoe_tui.domain.errors import AoeError
from aoe_tui.runtime.domain_xml import HARNESS_DISK_SERIAL
from aoe_tui.runtime.paths import cache_root

Progress = Callable[[str], None]

GUEST_MOUNT = "/opt/aoe-harnesses"
IMAGE = "bundle.ext4"
MANIFEST = "bundle.json"
FORMAT = 1  # bump when the layout or the wrappers change: a new hash, a new bundle
INSTALL_TIMEOUT_S = 1800
GUEST_PYTHON = "/usr/bin/python3"  # the guest's Debian Python (3.11, as the host's pip installs for)


@dataclass(frozen=True)
class Bundle:
    image: Path
    recipe_hash: str
    size_bytes: int  # the harnesses' files (the image is sparse around them)
    build_seconds: float
    versions: dict[str, str]  # adapter id -> package@version


def recipe_hash(recipe_path: Path) -> str:
    digest = hashlib.sha256(f"aoe-harness-bundle/{FORMAT}\0".encode())
    digest.update(recipe_path.read_bytes())
    return digest.hexdigest()[:16]


def bundles_dir() -> Path:
    return cache_root() / "harnesses"


def cached_bundle(recipe_path: Path) -> Bundle | None:
    folder = bundles_dir() / recipe_hash(recipe_path)
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not (folder / IMAGE).is_file():
        return None
    return Bundle(
        folder / IMAGE, manifest["recipe_hash"], manifest["size_bytes"], manifest["build_seconds"], manifest["versions"]
    )


def build_bundle(recipe_path: Path, force: bool = False, progress: Progress | None = None) -> Bundle:
    """The cached bundle for this recipe, built first when missing (or forced); one build at a time."""
    say = progress or (lambda _line: None)
    if not force and (bundle := cached_bundle(recipe_path)) is not None:
        return bundle
    root = bundles_dir()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not force and (bundle := cached_bundle(recipe_path)) is not None:
            return bundle
        return _build(recipe_path, read_recipe(recipe_path), root, say)


def _build(recipe_path: Path, entries: tuple[RecipeEntry, ...], root: Path, say: Progress) -> Bundle:
    digest = recipe_hash(recipe_path)
    work = root / f".build-{digest}-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    tree = work / "tree"
    (tree / "bin").mkdir(parents=True)
    started = time.monotonic()
    try:
        if any(entry.registry == "npm" for entry in entries):
            say("harness bundle: copying the host's Node runtime")
            _copy_node(tree / "node")
        for number, entry in enumerate(entries, 1):
            say(
                f"harness bundle [{number}/{len(entries)}]: {entry.adapter_id}: installing {entry.spec} from {entry.registry}"
            )
            began = time.monotonic()
            _install(entry, tree)
            _write_wrapper(entry, tree / "bin" / entry.executable)
            say(
                f"harness bundle [{number}/{len(entries)}]: {entry.adapter_id} installed in {time.monotonic() - began:.0f} s"
            )
        size = _tree_bytes(tree)
        say(f"harness bundle: writing a read-only disk of {size / 2**20:.0f} MiB")
        _make_image(tree, work / IMAGE, size)
        shutil.rmtree(tree)
        seconds = time.monotonic() - started
        versions = {entry.adapter_id: entry.spec for entry in entries}
        (work / MANIFEST).write_text(
            json.dumps(
                {"recipe_hash": digest, "size_bytes": size, "build_seconds": round(seconds, 1), "versions": versions},
                indent=2,
            )
            + "\n"
        )
        final = root / digest
        shutil.rmtree(final, ignore_errors=True)
        os.rename(work, final)
        say(f"harness bundle {digest} built in {seconds:.0f} s: {final / IMAGE}")
        _remove_stale(root, digest, say)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    bundle = cached_bundle(recipe_path)
    assert bundle is not None
    return bundle


def _remove_stale(root: Path, current: str, say: Progress) -> None:
    """The bundles of earlier recipes (about 2 GiB each) and builds abandoned by a dead process: nothing reads
    them again once the recipe changed (a guest still running from one keeps its open file until it stops).
    Called under the build lock, so no other build is in progress."""
    for folder in root.iterdir():
        stale_bundle = folder.is_dir() and re.fullmatch(r"[0-9a-f]{16}", folder.name) and folder.name != current
        if stale_bundle or (folder.is_dir() and folder.name.startswith(".build-")):
            mib = _tree_bytes(folder) / 2**20
            shutil.rmtree(folder, ignore_errors=True)
            say(f"harness bundle: removed {folder.name} ({mib:.0f} MiB), left from an earlier recipe or build")


def _install(entry: RecipeEntry, tree: Path) -> None:
    if entry.registry == "npm":
        target = tree / "npm" / entry.adapter_id
        target.mkdir(parents=True)
        command = ["npm", "install", "--prefix", str(target), "--no-audit", "--no-fund", "--loglevel=error", entry.spec]
    elif entry.registry == "pypi":
        target = tree / "pypi" / entry.adapter_id
        command = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        command += ["--no-warn-script-location", "--target", str(target), entry.spec]
    else:
        raise AoeError(f"harness {entry.adapter_id}: unknown registry {entry.registry!r} (npm or pypi)")
    try:
        result = subprocess.run(
            command, capture_output=True, text=True, errors="replace", timeout=INSTALL_TIMEOUT_S, env=_install_env()
        )
    except FileNotFoundError:
        raise AoeError(f"harness bundle: {command[0]} is not installed (needed for {entry.spec})") from None
    except subprocess.TimeoutExpired:
        raise AoeError(
            f"harness bundle: installing {entry.spec} from {entry.registry} took over {INSTALL_TIMEOUT_S} s"
        ) from None
    if result.returncode != 0:
        raise AoeError(f"harness bundle: {entry.spec} from {entry.registry} failed: {_error_line(result)}")


def _install_env() -> dict[str, str]:
    """The operator's own environment: their registry, proxy and certificate settings are what reaches npm and PyPI."""
    return {**os.environ, "npm_config_update_notifier": "false", "PIP_NO_INPUT": "1"}


def _error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The registry's own error: npm's first error line that says something (not its code or its log's path),
    else pip's (or anything's) last error line, else the last line."""
    lines = [line.strip() for line in (result.stderr + "\n" + result.stdout).splitlines() if line.strip()]
    useful = [
        line
        for line in lines
        if re.search(r"\berror\b|ERR!", line, re.IGNORECASE)
        and "complete log" not in line
        and not re.fullmatch(r"npm (error|ERR!)( code \S+)?", line)
    ]
    npm = [line for line in useful if line.startswith("npm ")]
    return (npm[0] if npm else useful[-1] if useful else lines[-1] if lines else f"exit {result.returncode}")[:300]


def _copy_node(target: Path) -> None:
    """The host's `node` and the shared libraries it needs beyond glibc (the guest runs the same Debian)."""
    node = shutil.which("node")
    if node is None:
        raise AoeError("harness bundle: node is not installed on this host (the JavaScript harnesses need Node >= 20)")
    (target / "bin").mkdir(parents=True)
    (target / "lib").mkdir()
    shutil.copy2(os.path.realpath(node), target / "bin" / "node")
    listing = subprocess.run(["ldd", node], capture_output=True, text=True).stdout
    for line in listing.splitlines():
        parts = line.split("=>")
        if len(parts) == 2 and (path := parts[1].split("(")[0].strip()) and ("libstdc++" in path or "libgcc_s" in path):
            shutil.copy2(os.path.realpath(path), target / "lib" / Path(path).name)


def _write_wrapper(entry: RecipeEntry, path: Path) -> None:
    mount = GUEST_MOUNT
    if entry.registry == "npm":
        body = (
            f'export PATH="{mount}/node/bin:$PATH" LD_LIBRARY_PATH="{mount}/node/lib"\n'
            f'exec "{mount}/npm/{entry.adapter_id}/node_modules/.bin/{entry.executable}" "$@"\n'
        )
    else:
        body = f'export PYTHONPATH="{mount}/pypi/{entry.adapter_id}"\nexec "{GUEST_PYTHON}" "{mount}/pypi/{entry.adapter_id}/bin/{entry.executable}" "$@"\n'
    path.write_text(f"#!/bin/sh\n# {entry.adapter_id}: {entry.spec}\n{body}")
    path.chmod(0o755)


def _tree_bytes(tree: Path) -> int:
    total = 0
    for folder, _dirs, files in os.walk(tree):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                pass
    return total


def _make_image(tree: Path, image: Path, size: int) -> None:
    """ext4 without a journal (it is never written), sized to the files plus room for inodes and metadata."""
    mib = int(size * 1.25 / 2**20) + 256
    result = subprocess.run(
        ["mke2fs", "-q", "-F", "-t", "ext4", "-O", "^has_journal", "-m", "0", "-L", HARNESS_DISK_SERIAL,
         "-E", "root_owner=0:0", "-d", str(tree), str(image), f"{mib}M"],
        capture_output=True, text=True, errors="replace",
    )  # fmt: skip
    if result.returncode != 0:
        raise AoeError(f"harness bundle: mke2fs failed: {_error_line(result)}")
