"""stdout and stderr as dpcalc writes them: a failed write of the output is an `OutputError`
(exit 74), a closed pipe stays BrokenPipeError (141), and a warning that cannot be written is
dropped (the result and its exit code do not depend on it). Set up by dpcalc.cli.app.main."""

from __future__ import annotations

import io
import os
from typing import Any, TextIO

from dpcalc.cli.errors import OutputError


def flush_or_silence(stream: TextIO | None) -> None:
    """Flush `stream`; when that fails (a closed pipe, a full disk), point it at /dev/null so that
    nothing buffered is reported again as the interpreter flushes at exit."""
    if stream is None:  # started closed
        return
    try:
        stream.flush()
        return
    except ValueError:  # already closed
        return
    except OSError:
        pass
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, stream.fileno())
        finally:
            os.close(devnull)
        stream.flush()
    except (OSError, ValueError):
        pass


class _Stdout(io.FileIO):
    """stdout's file descriptor, whose failed write says it is the output's (OutputError: exit
    74). A closed pipe stays BrokenPipeError (141), a would-block write what it is."""

    def write(self, data: Any, /) -> int:
        try:
            return super().write(data)
        except (BrokenPipeError, BlockingIOError):
            raise
        except OSError as error:
            raise OutputError("the output to stdout", error) from None


class _Stderr(io.FileIO):
    """stderr's file descriptor, where a failed write (closed, full) is dropped: warnings are
    lost, the result on stdout and the exit code are not."""

    def write(self, data: Any, /) -> int:
        try:
            return super().write(data)
        except OSError:
            return memoryview(data).nbytes


def checked_stdout(stream: TextIO) -> TextIO:
    """sys.stdout on a writer whose failures dpcalc tells apart (`_Stdout`), keeping its encoding
    and buffering; an in-memory stream (tests) is kept as it is.

    Characters the encoding cannot hold (`PYTHONIOENCODING=ascii` and a release named in
    another script) are replaced by "?" instead of failing; JSON is ASCII-escaped anyway. Under
    `python -u` / PYTHONUNBUFFERED sys.stdout hands each write to the file descriptor once and
    ignores a short write: a reader that goes away in the middle of a long output (`dpcalc ...
    --json | head -c 10`) would cut it without an error. This writer is buffered, so it writes
    the rest and raises BrokenPipeError; line buffering keeps the output as prompt as before.
    """
    try:
        raw = _Stdout(stream.fileno(), "w", closefd=False)
    except (AttributeError, OSError, ValueError):
        return stream
    unbuffered = isinstance(getattr(stream, "buffer", None), io.RawIOBase)
    return io.TextIOWrapper(
        io.BufferedWriter(raw), encoding=stream.encoding, errors=_lenient(stream.errors),
        line_buffering=bool(unbuffered or stream.line_buffering), write_through=getattr(stream, "write_through", False),
    )


def quiet_stderr(stream: TextIO | None) -> TextIO:
    """sys.stderr on a writer that drops what it cannot write (`_Stderr`). Started with stderr
    closed (`2>&-`), descriptor 2 is opened on /dev/null first, so that no file dpcalc opens
    takes its number."""
    encoding: str
    errors: str | None
    if stream is None:
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            if null != 2:
                os.dup2(null, 2)
                os.close(null)
        except OSError:
            pass
        encoding, errors = "utf-8", "backslashreplace"
    else:
        encoding, errors = stream.encoding, stream.errors
    try:
        raw = _Stderr(2 if stream is None else stream.fileno(), "w", closefd=False)
    except (AttributeError, OSError, ValueError):
        return stream if stream is not None else io.StringIO()
    return io.TextIOWrapper(io.BufferedWriter(raw), encoding=encoding, errors=_lenient(errors or "strict"),
                            line_buffering=True, write_through=True)


def _lenient(errors: str | None) -> str:
    """An encoding error handler that never fails on a character: "strict" becomes "replace"."""
    return "replace" if errors in (None, "strict") else errors
