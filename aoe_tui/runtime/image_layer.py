"""Per-arena image layers: Debian packages baked offline on top of the cached base image, built once.

An arena whose guests need more than the base (First Contact: nginx,
PostgreSQL 15, Redis and the tools to fight with) names a layer as its
territories' `image`. The layer is the base image's filesystem plus those
packages, installed at build time from Debian's archive (never during a
match: a guest has no route out), with the stacks' own units disabled so
each territory's provisioning starts only its own. It is cached like the
base: its directory is named by a hash of the base recipe's hash and the
layer recipe, `image.json` is written last, and a build runs once under the
image build lock (a second caller waits, then finds it).

Building: copy the base raw image (sparse), loop-mount it, `apt-get install`
in a chroot (policy-rc.d forbids starting services), disable the units, clean
apt's caches, unmount. The kernel and initrd are the base's.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from aoe_tui.domain.errors import AoeError
from aoe_tui.runtime.image import MANIFEST, ImageInfo, Progress, build_image
from aoe_tui.runtime.paths import images_dir

LAYERS_DIR = "layers"
RAW = "layer.raw"


@dataclass(frozen=True)
class ArenaSegment:
    """The arena NIC of each territory: its host octet in the arena's /24 (MAC 52:54:00:77:00:<octet>)."""

    host_octets: tuple[tuple[str, int], ...]

    def octet(self, territory_id: str) -> int | None:
        return dict(self.host_octets).get(territory_id)


@dataclass(frozen=True)
class LayerRecipe:
    name: str
    packages: tuple[str, ...]
    disabled_units: tuple[str, ...] = ()
    segment: ArenaSegment | None = None

    def digest(self, base_hash: str) -> str:
        payload = json.dumps(
            {"base": base_hash, "name": self.name, "packages": self.packages, "disabled": self.disabled_units},
            sort_keys=True,
        ).encode()
        return hashlib.sha256(payload).hexdigest()[:16]


FIRST_CONTACT = LayerRecipe(
    name="first-contact",
    packages=(
        "nginx",
        "postgresql-15",
        "postgresql-client-15",
        "redis-server",
        "redis-tools",
        "nftables",
        "dnsutils",
        "nmap",
        "tcpdump",
        "lsof",
        "strace",
        "vim",
        "netcat-openbsd",
        "iputils-ping",
    ),
    disabled_units=("nginx.service", "postgresql.service", "redis-server.service", "nftables.service"),
    segment=ArenaSegment((("gatekeeper", 10), ("archivist", 11), ("courier", 12))),
)

LAYERS: dict[str, LayerRecipe] = {FIRST_CONTACT.name: FIRST_CONTACT}


def layer_for(image_names: set[str | None]) -> LayerRecipe | None:
    """The layer a manifest's territories name (one per match), or None for the base image."""
    named = sorted(name for name in image_names if name in LAYERS)
    if len(named) > 1:
        raise AoeError(f"territories name different image layers ({', '.join(named)}); a match boots one image")
    return LAYERS[named[0]] if named else None


def ensure_image(image_names: set[str | None], progress: Progress | None = None) -> ImageInfo:
    """The image a match whose territories name `image_names` boots: the base, or its layer (First Contact's),
    each built first when missing or stale (minutes, told to `progress`). Every command that boots a match gets
    here, so none stops on an empty cache."""
    layer = layer_for(image_names)
    return build_layer(layer, progress=progress) if layer is not None else build_image(progress=progress)


def layer_dir(recipe: LayerRecipe, base: ImageInfo) -> Path:
    return images_dir() / LAYERS_DIR / f"{recipe.name}-{recipe.digest(base.recipe_hash)}"


def cached_layer(recipe: LayerRecipe, base: ImageInfo) -> ImageInfo | None:
    directory = layer_dir(recipe, base)
    try:
        manifest = json.loads((directory / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    digest = recipe.digest(base.recipe_hash)
    info = ImageInfo(directory / RAW, directory / "vmlinuz", directory / "initrd.img", digest)
    if manifest.get("recipe_hash") != digest or not all(p.is_file() for p in (info.path, info.kernel, info.initrd)):
        return None
    return info


def require_layer(recipe: LayerRecipe, base: ImageInfo) -> ImageInfo:
    info = cached_layer(recipe, base)
    if info is None:
        raise AoeError(
            f"image layer {recipe.name} missing or out of date under {images_dir() / LAYERS_DIR}; "
            f"build it with `aoe image build --layer {recipe.name}`"
        )
    return info


def build_layer(recipe: LayerRecipe, force: bool = False, progress: Progress | None = None) -> ImageInfo:
    """The cached layer, built first (and the base before it) when missing, stale or forced."""
    say = progress or (lambda _line: None)
    base = build_image(progress=say)
    if not force and (info := cached_layer(recipe, base)) is not None:
        say(f"layer {recipe.name} {info.recipe_hash} is current: {info.path}")
        return info
    root = images_dir() / LAYERS_DIR
    root.mkdir(parents=True, exist_ok=True)
    with open(images_dir().parent / "image-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not force and (info := cached_layer(recipe, base)) is not None:
            return info
        return _build(recipe, base, root, say)


def _build(recipe: LayerRecipe, base: ImageInfo, root: Path, say: Progress) -> ImageInfo:
    digest = recipe.digest(base.recipe_hash)
    work = root / f".build-{recipe.name}-{digest}-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    started = time.monotonic()
    try:
        say(f"layer {recipe.name}: copying base {base.recipe_hash}")
        _run(["cp", "--sparse=always", str(base.path), str(work / RAW)])
        shutil.copyfile(base.kernel, work / "vmlinuz")
        shutil.copyfile(base.initrd, work / "initrd.img")
        _install(recipe, work / RAW, work / "mnt", say)
        (work / "mnt").rmdir()
        _run(["sync", str(work / RAW)])
        (work / MANIFEST).write_text(
            json.dumps(
                {
                    "recipe_hash": digest,
                    "layer": recipe.name,
                    "base": base.recipe_hash,
                    "packages": list(recipe.packages),
                    "built_at": time.time(),
                },
                indent=2,
            )
            + "\n"
        )
        final = layer_dir(recipe, base)
        shutil.rmtree(final, ignore_errors=True)
        os.rename(work, final)
        say(f"layer {recipe.name} {digest} built in {time.monotonic() - started:.0f} s: {final / RAW}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return require_layer(recipe, base)


def _install(recipe: LayerRecipe, raw: Path, mnt: Path, say: Progress) -> None:
    mnt.mkdir()
    with ExitStack() as mounts:
        _mount(mounts, ["mount", "-o", "loop", str(raw), str(mnt)], mnt)
        for special in ("proc", "sys", "dev"):  # plain binds, made private: no unmount ever reaches the host's
            _mount(mounts, ["mount", "--bind", f"/{special}", str(mnt / special)], mnt / special)
            _run(["mount", "--make-private", str(mnt / special)])
        policy = mnt / "usr/sbin/policy-rc.d"
        policy.write_text("#!/bin/sh\nexit 101\n")  # nothing starts inside the build
        policy.chmod(0o755)
        resolv = mnt / "etc/resolv.conf"
        saved = resolv.read_bytes() if resolv.is_file() and not resolv.is_symlink() else None
        resolv.unlink(missing_ok=True)
        shutil.copyfile("/etc/resolv.conf", resolv)
        env = {"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C"}
        try:
            say(f"layer {recipe.name}: apt-get install {' '.join(recipe.packages)}")
            _run(["chroot", str(mnt), "apt-get", "update", "-q"], env, say)
            _run(
                ["chroot", str(mnt), "apt-get", "install", "-y", "-q", "--no-install-recommends", *recipe.packages],
                env,
                say,
            )
            for unit in recipe.disabled_units:
                _run(["chroot", str(mnt), "systemctl", "disable", "--quiet", unit], env, say)
            _run(["chroot", str(mnt), "apt-get", "clean"], env, say)
        finally:
            shutil.rmtree(mnt / "var/lib/apt/lists", ignore_errors=True)
            (mnt / "var/lib/apt/lists/partial").mkdir(parents=True, exist_ok=True)
            policy.unlink(missing_ok=True)
            resolv.unlink(missing_ok=True)
            if saved is not None:
                resolv.write_bytes(saved)


def _mount(stack: ExitStack, command: list[str], target: Path) -> None:
    _run(command)
    stack.callback(lambda: _unmount(target))


def _unmount(target: Path) -> None:
    """A plain unmount (the loop mount's writes must be on disk before the image is renamed into place);
    lazy only if something still holds it."""
    if subprocess.run(["umount", str(target)], capture_output=True).returncode != 0:
        subprocess.run(["umount", "-l", str(target)], capture_output=True)


def _run(command: list[str], env: dict[str, str] | None = None, say: Progress | None = None) -> None:
    result = subprocess.run(command, capture_output=True, text=True, errors="replace", env=env)
    if say is not None:
        for line in (result.stdout + result.stderr).splitlines()[-5:]:
            say(f"{command[0]}: {line}")
    if result.returncode != 0:
        tail = (result.stderr.strip() or result.stdout.strip() or "no output").splitlines()[-1]
        raise AoeError(f"image layer: {' '.join(command[:4])} failed with exit {result.returncode}: {tail}")
