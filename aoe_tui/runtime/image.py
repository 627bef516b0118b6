"""Build and cache the one base image every territory boots from.

The image is built in a private temporary directory and renamed into place
only when complete, with `image.json` written last, so an interrupted build
can never leave something that looks like a valid image.
"""

from __future__ import annotations

import json
import fcntl
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable

from aoe_tui.domain.errors import AoeError
from aoe_tui.runtime.guest_recipe import GuestRecipe
from aoe_tui.runtime.paths import images_dir

Progress = Callable[[str], None]
MANIFEST = "image.json"
# The unpacked rootfs plus the raw image need about this much room while building.
_NEEDED_FREE_MIB = 2500
_FETCH_FAILURE_MARKERS = (
    "Failed to fetch",
    "Unable to locate package",
    "Temporary failure resolving",
    "Could not resolve",
    "has no installation candidate",
    "Unable to fetch",
)


@dataclass(frozen=True)
class ImageInfo:
    path: Path
    kernel: Path
    initrd: Path
    recipe_hash: str


def image_dir(recipe: GuestRecipe | None = None) -> Path:
    return images_dir() / (recipe or GuestRecipe()).digest()


def cached_image(recipe: GuestRecipe | None = None) -> ImageInfo | None:
    """The finished image for this recipe, or None when it is missing or stale."""
    recipe = recipe or GuestRecipe()
    directory = image_dir(recipe)
    try:
        manifest = json.loads((directory / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    if manifest.get("recipe_hash") != recipe.digest():
        return None
    info = ImageInfo(directory / "base.raw", directory / "vmlinuz", directory / "initrd.img", recipe.digest())
    if not all(p.is_file() for p in (info.path, info.kernel, info.initrd)):
        return None
    return info


def image_mib(info: ImageInfo) -> int:
    """The base image's virtual size (a raw file: its length), the least any guest disk can be."""
    return -(-info.path.stat().st_size // (1024 * 1024))


def require_image(recipe: GuestRecipe | None = None) -> ImageInfo:
    info = cached_image(recipe)
    if info is None:
        raise AoeError(f"guest image missing or out of date under {images_dir()}; build it with `aoe image build`")
    return info


def build_image(force: bool = False, progress: Progress | None = None, recipe: GuestRecipe | None = None) -> ImageInfo:
    """Return the cached image, building it first when missing, stale or forced."""
    recipe = recipe or GuestRecipe()
    say = progress or (lambda _line: None)
    if not force and (info := cached_image(recipe)) is not None:
        say(f"image {recipe.digest()} is current: {info.path}")
        return info
    root = images_dir()
    root.mkdir(parents=True, exist_ok=True)
    with open(root.parent / "image-build.lock", "w") as lock:  # released when closed, even if this dies
        # Two matches (or two test workers) started together build once: the second waits, then finds it.
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say("another process is building the guest image; waiting for it")
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not force and (info := cached_image(recipe)) is not None:
                say(f"image {recipe.digest()} is current: {info.path}")
                return info
        return _build(recipe, root, say)


def _build(recipe: GuestRecipe, root: Path, say: Progress) -> ImageInfo:
    """Assemble the image in a scratch folder and move it into place (the caller holds the build lock)."""
    _check_free_space(root)
    work = root / f".build-{recipe.digest()}-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    try:
        started = time.monotonic()
        _assemble(recipe, work, say)
        final = image_dir(recipe)
        if final.exists():
            shutil.rmtree(final)
        os.rename(work, final)
        say(f"image {recipe.digest()} built in {time.monotonic() - started:.0f} s: {final / 'base.raw'}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return require_image(recipe)


def _assemble(recipe: GuestRecipe, work: Path, say: Progress) -> None:
    rootfs = work / "rootfs"
    say(f"mmdebstrap {recipe.suite} ({len(recipe.packages)} packages)")
    _run_logged(recipe.mmdebstrap_command(rootfs), say, work, package="mmdebstrap")
    say("customizing root filesystem")
    recipe.apply(rootfs)
    kernel, initrd = _boot_files(rootfs)
    shutil.copyfile(kernel, work / "vmlinuz")
    shutil.copyfile(initrd, work / "initrd.img")
    raw = work / "base.raw"
    say(f"mkfs.ext4 -d: {recipe.disk_mib} MiB raw image")
    with open(raw, "wb") as handle:
        handle.truncate(recipe.disk_mib * 1024 * 1024)
    _run_logged(
        ["mkfs.ext4", "-q", "-F", "-L", "aoe-root", "-d", str(rootfs), str(raw)], say, work, package="e2fsprogs"
    )
    shutil.rmtree(rootfs)
    manifest = {
        "recipe_hash": recipe.digest(),
        "suite": recipe.suite,
        "packages": list(recipe.packages),
        "kernel": kernel.name,
        "built_at": time.time(),
    }
    (work / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")


def _boot_files(rootfs: Path) -> tuple[Path, Path]:
    kernels = sorted((rootfs / "boot").glob("vmlinuz-*"))
    initrds = sorted((rootfs / "boot").glob("initrd.img-*"))
    if not kernels or not initrds:
        raise AoeError(
            f"guest image: no kernel/initrd under {rootfs / 'boot'} (is linux-image-cloud-amd64 in the recipe?)"
        )
    return kernels[-1], initrds[-1]


def _run_logged(command: list[str], say: Progress, work: Path, package: str) -> None:
    """Run a build tool, streaming its lines as progress and translating known failures."""
    tool = command[0]
    if shutil.which(tool) is None:
        raise AoeError(f"{tool} is not installed; install it with `apt-get install {package}`")
    tail: list[str] = []
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            line = line.rstrip()
            tail = (tail + [line])[-40:]
            say(f"{tool}: {line}")
    if process.returncode == 0:
        return
    output = "\n".join(tail)
    if "No space left on device" in output:
        raise AoeError(
            f"{tool}: disk full while building the image in {work.parent}; free space and rerun `aoe image build`"
        )
    if any(marker in output for marker in _FETCH_FAILURE_MARKERS):
        reason = next(
            (line for line in reversed(tail) if any(m in line for m in _FETCH_FAILURE_MARKERS)),
            tail[-1] if tail else "",
        )
        raise AoeError(
            f"{tool} could not fetch packages from the Debian mirror ({reason.strip()}); check the network and rerun `aoe image build`"
        )
    last = tail[-1] if tail else "no output"
    raise AoeError(f"{tool} failed with exit {process.returncode}: {last}")


def _check_free_space(root: Path) -> None:
    free_mib = shutil.disk_usage(root).free // (1024 * 1024)
    if free_mib < _NEEDED_FREE_MIB:
        raise AoeError(
            f"disk full: {root} has {free_mib} MiB free, building the guest image needs {_NEEDED_FREE_MIB} MiB"
        )
