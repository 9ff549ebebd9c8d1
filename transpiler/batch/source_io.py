"""Reading source bytes into text and writing results back safely.

Decoding honours a BOM and a PEP 263 coding line; line endings are left to
libcst, which preserves them. Writes are atomic: a temporary file in the target
directory renamed into place, so an interrupted run leaves no half-written file.
"""

from __future__ import annotations

import io
import os
import secrets
import tokenize
from dataclasses import dataclass


class DecodeError(Exception):
    def __init__(self, message: str, line: int = 1, col: int = 1):
        super().__init__(message)
        self.line = line
        self.col = col


@dataclass(frozen=True)
class DecodedSource:
    text: str
    encoding: str
    bom: bool


def decode_source(data: bytes) -> DecodedSource:
    if b"\x00" in data[:8192]:
        raise DecodeError("binary content (NUL byte); not a Python source file")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise DecodeError(f"bad coding declaration: {exc.msg}", exc.lineno or 1) from None
    bom = encoding == "utf-8-sig"
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        line, col = _position_of_offset(data, getattr(exc, "start", 0))
        raise DecodeError(f"cannot decode as {encoding}: {exc}", line, col) from None
    return DecodedSource(text=text, encoding=encoding, bom=bom)


def encode_source(text: str, source: DecodedSource) -> bytes:
    return text.encode(source.encoding)


def _position_of_offset(data: bytes, offset: int) -> tuple[int, int]:
    before = data[:offset]
    line = before.count(b"\n") + 1
    col = offset - (before.rfind(b"\n") + 1) + 1
    return line, col


def write_atomic(path: str, data: bytes, mode_from: str | None = None) -> None:
    """Write ``path`` through a temporary file renamed into place. The file
    gets the permission bits of ``mode_from``, else those a plain ``open``
    would give it (0666 less the umask), not a temporary file's 0600."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = _temporary(directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if mode_from is not None:
            try:
                os.chmod(tmp, os.stat(mode_from).st_mode & 0o7777)
            except OSError:
                pass
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _temporary(directory: str) -> tuple[int, str]:
    """A new file in ``directory``, created as ``open`` creates files (the
    umask applies), unlike tempfile.mkstemp's 0600."""
    while True:
        path = os.path.join(directory, f".ms-migrate-{secrets.token_hex(6)}.tmp")
        try:
            return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666), path
        except FileExistsError:
            continue
