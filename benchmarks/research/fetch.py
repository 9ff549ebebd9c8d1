"""Getting a source's code into the work directory, outside the repository.

- ``pypi``: ``pip download --no-deps name==pin`` (the wheel, or the sdist when
  there is no wheel), unpacked into ``WORK/src/name-pin`` (an sdist without
  its top directory, so ``root`` means the same for both).
- ``github``: the snapshot is a git directory ``SOURCES/owner+name/repo`` (where
  the fetch tool puts it; ``git clone --bare`` or a clone's ``.git`` placed there
  works too); the pinned commit is extracted with ``git archive <pin> | tar -x``
  into ``WORK/src/owner+name-<pin[:12]>``.

``get_source`` returns the directory that holds the source's ``root``, or
raises ``SourceMissing`` with what to do.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile

from benchmarks.research import safe_name
from benchmarks.research.spec import Source
from benchmarks.zoo.fetch import fetch_torchvision


class SourceMissing(Exception):
    """The source cannot be had; the message says how to get it."""


def get_source(source: Source, work: str, sources_dir: str) -> str:
    """The unpacked source's top directory (``source.root`` is relative to it)."""
    if source.kind == "pypi":
        return _pypi(source, work)
    if source.kind == "github":
        return _github(source, work, sources_dir)
    raise SourceMissing(f"unknown source kind {source.kind!r} (pypi or github)")


def snapshot_dir(source: Source, sources_dir: str) -> str:
    """Where a GitHub source's git directory is expected."""
    base = os.path.join(sources_dir, safe_name(source.name))
    for candidate in (os.path.join(base, "repo"), os.path.join(base, "repo", ".git")):
        if os.path.isfile(os.path.join(candidate, "HEAD")):
            return candidate
    return os.path.join(base, "repo")


def _github(source: Source, work: str, sources_dir: str) -> str:
    target = os.path.join(work, "src", f"{safe_name(source.name)}-{source.pin[:12]}")
    if os.path.isfile(os.path.join(target, ".complete")):
        return target
    how = f"source not available: get github:{source.name} at {source.pin} into " \
          f"{os.path.join(sources_dir, safe_name(source.name), 'repo')}"
    git_dir = snapshot_dir(source, sources_dir)
    if not os.path.isfile(os.path.join(git_dir, "HEAD")):
        raise SourceMissing(how)
    has = subprocess.run(["git", "--git-dir", git_dir, "cat-file", "-e", f"{source.pin}^{{commit}}"],
                         capture_output=True)
    if has.returncode != 0:
        raise SourceMissing(how + " (the snapshot there lacks that commit)")
    shutil.rmtree(target, ignore_errors=True)
    os.makedirs(target)
    archive = subprocess.Popen(["git", "--git-dir", git_dir, "archive", source.pin], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    extract = subprocess.run(["tar", "-x", "-C", target], stdin=archive.stdout, capture_output=True)
    archive.stdout.close()
    if archive.wait() != 0 or extract.returncode != 0:
        # a snapshot may lack its largest files (images, weights): take every blob it has
        shutil.rmtree(target, ignore_errors=True)
        os.makedirs(target)
        _extract_present_blobs(git_dir, source.pin, target)
    open(os.path.join(target, ".complete"), "w").close()
    return target


def _extract_present_blobs(git_dir: str, commit: str, target: str) -> None:
    listing = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "-z", commit],
                             capture_output=True, check=True).stdout.decode()
    entries = []
    for record in listing.split("\0"):
        if not record:
            continue
        meta, path = record.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind == "blob" and mode != "120000":
            entries.append((sha, path))
    batch = subprocess.run(["git", "--git-dir", git_dir, "cat-file", "--batch"],
                           input="".join(f"{sha}\n" for sha, _ in entries).encode(), capture_output=True).stdout
    position = 0
    for sha, path in entries:
        end = batch.index(b"\n", position)
        header = batch[position:end].split()
        position = end + 1
        if len(header) < 3 or header[1] != b"blob":  # "<sha> missing"
            continue
        size = int(header[2])
        full = os.path.join(target, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as handle:
            handle.write(batch[position:position + size])
        position += size + 1


def _pypi(source: Source, work: str) -> str:
    target = os.path.join(work, "src", f"{source.name}-{source.pin}")
    if os.path.isfile(os.path.join(target, ".complete")):
        return target
    downloads = os.path.join(work, "downloads", f"{source.name}-{source.pin}")
    if not _archives(downloads):
        os.makedirs(downloads, exist_ok=True)
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", downloads, f"{source.name}=={source.pin}"],
            capture_output=True, text=True,
        )
        if done.returncode != 0 or not _archives(downloads):
            errors = [line for line in done.stderr.splitlines() if "ERROR" in line] or done.stderr.splitlines()[-1:]
            raise SourceMissing(f"source not available: pip download --no-deps {source.name}=={source.pin}: "
                                + " ".join(errors)[:200])
    archive = _archives(downloads)[0]
    shutil.rmtree(target, ignore_errors=True)
    os.makedirs(target)
    if archive.endswith(".whl") or archive.endswith(".zip"):
        with zipfile.ZipFile(archive) as handle:
            handle.extractall(target)
        if archive.endswith(".zip"):
            _strip_top(target)
    else:
        with tarfile.open(archive) as handle:
            handle.extractall(target, filter="data")
        _strip_top(target)
    open(os.path.join(target, ".complete"), "w").close()
    return target


def _archives(folder: str) -> list[str]:
    found = glob.glob(os.path.join(folder, "*.whl"))
    return found or [p for p in glob.glob(os.path.join(folder, "*")) if p.endswith((".tar.gz", ".zip", ".tar.bz2"))]


def _strip_top(target: str) -> None:
    # an sdist unpacks to one top directory name-version/
    entries = os.listdir(target)
    if len(entries) == 1 and os.path.isdir(os.path.join(target, entries[0])):
        top = os.path.join(target, entries[0])
        for entry in os.listdir(top):
            shutil.move(os.path.join(top, entry), os.path.join(target, entry))
        os.rmdir(top)


def fetch_torchvision_python(work: str) -> str:
    """The directory holding ``torchvision`` for the torch side (its Python part,
    as the zoo uses it): the zoo's pin, or where this machine's pip is capped
    below it, the newest 0.29 release it allows."""
    target = os.path.join(work, "torchvision-0.29")
    if os.path.isdir(os.path.join(target, "torchvision")):
        return target
    try:
        return fetch_torchvision(work)
    except subprocess.CalledProcessError:
        pass
    downloads = os.path.join(work, "wheels", "torchvision-0.29")
    os.makedirs(downloads, exist_ok=True)
    if not glob.glob(os.path.join(downloads, "torchvision-*.whl")):
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", downloads,
                        "torchvision>=0.29,<0.30"], check=True, capture_output=True)
    with zipfile.ZipFile(glob.glob(os.path.join(downloads, "torchvision-*.whl"))[0]) as wheel:
        wheel.extractall(target)
    return target
