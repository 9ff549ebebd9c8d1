"""Writing a conversion over an output that may hold the user's edits.

Users convert once, then live with the output: they fix the marked lines by
hand and run the same command again when the torch project moves on. So
ms-migrate remembers what it wrote to each output file (the *base*, kept in
the cache root under ``runs/written/``, whatever the tool's version), and a
re-run settles each output file as ``git merge-file`` would:

- the file is missing, or still what was written last time: write the new
  conversion;
- the file was edited and the conversion did not change: keep the file;
- both changed: merge three-way (base = the last conversion, ours = the
  edited file, theirs = the new conversion, with ``merge3``); where both
  changed the same lines, the file holds both sides between git-style
  markers (``<<<<<<< your edit`` / ``=======`` / ``>>>>>>> new conversion``)
  and the file is reported as conflicted until they are gone;
- no base (the cache was deleted, or the file was never written by
  ms-migrate) and the file differs from the conversion: refuse, unless
  ``--force``.

A notebook whose merge conflicts, or a copied file both sides changed, is
left as the user edited it (markers would break a notebook's JSON; a copied
file's base is kept as a digest only) and reported as conflicted.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass

from transpiler.batch.source_io import write_atomic

START, MIDDLE, END = "<<<<<<< your edit", "=======", ">>>>>>> new conversion"
WRITTEN = "written"  # below the cache root's runs/ directory
_HEADER = b"ms-migrate base 1 "

# what happened to an output file; the first ones change it
NEW, UPDATED, FORCED, MERGED, CONFLICTED = "new", "updated", "forced", "merged", "conflicted"
SAME, KEPT, REFUSED = "same", "kept", "refused"
CHANGES = frozenset({NEW, UPDATED, FORCED, MERGED, CONFLICTED})


@dataclass(frozen=True)
class Settled:
    action: str  # one of the names above
    message: str = ""  # for people: what was done, or why not
    cacheable: bool = True  # the cache may vouch for the file as it is now


@dataclass(frozen=True)
class Base:
    digest: str
    content: bytes | None  # None: a copied file, kept as its digest only


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=20).hexdigest()


class Bases:
    """What ms-migrate last wrote to each output path."""

    def __init__(self, directory: str):
        self.directory = directory

    def _path(self, target: str) -> str:
        name = hashlib.blake2b(os.path.realpath(target).encode("utf-8", "surrogateescape"), digest_size=20).hexdigest()
        return os.path.join(self.directory, name[:2], name)

    def get(self, target: str) -> Base | None:
        try:
            with open(self._path(target), "rb") as handle:
                data = handle.read()
        except OSError:
            return None
        if not data.startswith(_HEADER) or b"\n" not in data:
            return None
        header, _, content = data.partition(b"\n")
        fields = header[len(_HEADER):].split()
        if len(fields) != 2 or fields[1] not in (b"content", b"digest"):
            return None
        digest = fields[0].decode("ascii", "replace")
        if fields[1] == b"digest":
            return Base(digest, None)
        return Base(digest, content) if _digest(content) == digest else None

    def put(self, target: str, data: bytes, keep_content: bool) -> None:
        kind = b"content" if keep_content else b"digest"
        record = _HEADER + _digest(data).encode("ascii") + b" " + kind + b"\n" + (data if keep_content else b"")
        try:
            write_atomic(self._path(target), record)
        except OSError:
            pass  # only costs a --force (or a merge that cannot be made) on the next run


def bases_directory(runs_directory: str) -> str:
    return os.path.join(runs_directory, WRITTEN)


def has_markers(text: str) -> bool:
    lines = text.split("\n")
    return any(line.rstrip("\r") == START for line in lines) and any(line.rstrip("\r") == END for line in lines)


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    last = lines.pop()
    return [line + "\n" for line in lines] + ([last] if last else [])


def merge(base: str, ours: str, theirs: str) -> tuple[str, int]:
    """Three-way merge of texts: the result and its number of conflicts."""
    import merge3

    # a last line without a newline would run into a conflict marker
    unended = not ours.endswith("\n")
    texts = [text if text.endswith("\n") or not text else text + "\n" for text in (base, ours, theirs)]
    merger = merge3.Merge3(*[_lines(text) for text in texts])
    conflicts = sum(1 for group in merger.merge_groups() if group[0] == "conflict")
    newline = "\r\n" if texts[2].count("\r\n") * 2 > texts[2].count("\n") else "\n"
    merged = "".join(merger.merge_lines(name_a="your edit", name_b="new conversion", start_marker="<<<<<<<",
                                        mid_marker="=======", end_marker=">>>>>>>"))
    if newline == "\r\n":  # markers carry the file's line ending
        merged = "\n".join(line + "\r" if line in (START, MIDDLE, END) else line for line in merged.split("\n"))
    if unended and not conflicts and merged.endswith("\n"):
        merged = merged[:-1]
    return merged, conflicts


def _decode(data: bytes, encoding: str | None) -> str | None:
    if b"\x00" in data:
        return None
    try:
        return data.decode(encoding or "utf-8")
    except (UnicodeDecodeError, LookupError):
        return None


def settle(target: str, data: bytes, *, bases: Bases | None, kind: str, encoding: str | None, force: bool,
           dry_run: bool, mode_from: str | None) -> Settled:
    """Write ``data`` (the new conversion, or a copied file) to ``target``
    without losing what the user changed there. Raises OSError when the
    file cannot be read or written."""

    def write(content: bytes, mode: str | None = mode_from) -> None:
        if not dry_run:
            write_atomic(target, content, mode_from=mode)

    def remember() -> None:
        if bases is not None and not dry_run:
            bases.put(target, data, keep_content=kind != "copy")

    if bases is None:  # no record kept (a library caller): plain overwrite
        write(data)
        return Settled(UPDATED)
    try:
        with open(target, "rb") as handle:
            current = handle.read()
    except FileNotFoundError:
        write(data)
        remember()
        return Settled(NEW)
    base = bases.get(target)
    if current == data:
        if base is None or base.digest != _digest(data):
            remember()
        return Settled(SAME)
    if base is None:
        if force:
            write(data)
            remember()
            return Settled(FORCED, "overwritten (--force)")
        return Settled(REFUSED, "exists, differs from the conversion and ms-migrate has no record of writing it; "
                                "use --force to overwrite it", cacheable=False)
    if _digest(current) == base.digest:  # not edited since it was written
        write(data)
        remember()
        return Settled(UPDATED)
    # the user edited the file
    if _digest(data) == base.digest:  # and the conversion is what it was
        text = _decode(current, encoding)
        if text is not None and has_markers(text):
            return Settled(CONFLICTED, f"still holds conflict markers ({START} ... {END}); resolve them",
                           cacheable=False)
        return Settled(KEPT)
    texts = [_decode(part, encoding) if part is not None else None for part in (base.content, current, data)]
    if None in texts:
        return Settled(CONFLICTED, "your edit and a new version both changed this file, which cannot be merged as "
                                   "text; it is left as you edited it (delete it to take the new version)",
                       cacheable=False)
    merged, conflicts = merge(*texts)
    if kind == "notebook" and (conflicts or not _valid_json(merged)):
        return Settled(CONFLICTED, "your edit and the new conversion changed the same cells; the notebook is left as "
                                   "you edited it (see the new conversion with --diff, or delete it to take it)",
                       cacheable=False)
    encoded = merged.encode(encoding or "utf-8")
    if encoded != current:
        write(encoded, mode=target)
    remember()
    if conflicts:
        where = "place" if conflicts == 1 else "places"
        return Settled(CONFLICTED, f"{conflicts} {where} where your edit and the new conversion changed the same "
                                   f"lines: the file holds both, between {START} / {MIDDLE} / {END} markers; "
                                   "resolve them", cacheable=False)
    return Settled(MERGED, "merged your edits into the new conversion")


def _valid_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True
