"""What the frameworks print while a model is imported, held back at the importer's boundary.

torch, onnx, JAX and MLIR report through every channel there is: Python warnings (an LSTM's
``UserWarning``), their loggers (torch logs the FX graph of data-dependent control flow, fake-tensor
tracebacks and deserialisation tracebacks at WARNING and ERROR), ``print`` to ``sys.stdout`` and
``sys.stderr`` (a model file's own), and C++ writing straight to file descriptors 1 and 2 (MLIR's
diagnostics, protobuf). :func:`framework_output` captures all of them for one import and nothing
else: it changes no filter, logger level or handler for the rest of the process.

When the import fails with bad input (:class:`WinohdlError`) the capture is not printed: the error is
one line, and it says what the framework said, in a few words (the capture is a note on the exception,
which ``--debug``'s traceback shows). Otherwise (success, or a bug) it is given back as it would have
come, the text written out again and the warnings issued again.
"""

from __future__ import annotations

import io
import logging
import os
import sys
import tempfile
import warnings
from contextlib import ExitStack, contextmanager

from winohdl.core.errors import WinohdlError

MAX_NOTE = 20_000   # characters of held-back output kept on an error for --debug (the end: the traceback's)


@contextmanager
def framework_output():
    """Within the block, hold back warnings, console log records, ``sys.stdout``/``sys.stderr`` and file
    descriptors 1 and 2; after it, on a :class:`WinohdlError` keep them as a note on it (not printed),
    otherwise give them back."""
    out, err = io.StringIO(), io.StringIO()
    fds, captured = {}, []
    try:
        with ExitStack() as stack:
            captured = stack.enter_context(warnings.catch_warnings(record=True))
            warnings.simplefilter("always")          # recorded, not turned into errors or deduplicated here
            fds = stack.enter_context(_descriptors())
            stack.enter_context(_console_handlers(out, err))
            stack.enter_context(_python_streams(out, err))
            yield
    except WinohdlError as exc:                      # bad input: its one line is all the user sees, and
        _note(exc, out.getvalue(), err.getvalue(), fds, captured)   # --debug's traceback shows the rest
        raise
    except BaseException:
        _give_back(out.getvalue(), err.getvalue(), fds, captured)   # a bug: nothing is hidden
        raise
    _give_back(out.getvalue(), err.getvalue(), fds, captured)


def _note(exc: BaseException, out: str, err: str, fds: dict, captured) -> None:
    """What was held back, as a note on ``exc``: in its traceback (``--debug``), never in its one line."""
    text = out + fds.get(1, "") + err + fds.get(2, "") + "".join(
        warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line) for w in captured)
    if text:
        exc.add_note("printed during the import, held back:\n" + text[-MAX_NOTE:])


def _give_back(out: str, err: str, fds: dict, captured) -> None:
    for stream, text in ((sys.stdout, out + fds.get(1, "")), (sys.stderr, err + fds.get(2, ""))):
        if text:
            stream.write(text)
            stream.flush()
    for w in captured:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)


@contextmanager
def _python_streams(out: io.StringIO, err: io.StringIO):
    """``sys.stdout`` and ``sys.stderr`` into ``out`` and ``err`` (a model file's ``print``)."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


@contextmanager
def _console_handlers(out: io.StringIO, err: io.StringIO):
    """Every console handler (a plain ``logging.StreamHandler``, as torch installs on its loggers; not a
    file's) writing into ``out`` or ``err`` instead of the stream it was made with."""
    loggers = [logging.getLogger()] + [v for v in list(logging.Logger.manager.loggerDict.values())
                                       if isinstance(v, logging.Logger)]
    handlers = {h for lg in loggers for h in lg.handlers if type(h) is logging.StreamHandler}
    saved = {h: h.stream for h in handlers}
    for h, stream in saved.items():
        h.setStream(out if stream in (sys.stdout, sys.__stdout__) else err)
    try:
        yield
    finally:
        for h, stream in saved.items():
            h.setStream(stream)


@contextmanager
def _descriptors():
    """File descriptors 1 and 2 into temporary files (what C++ writes); yields their text by descriptor,
    filled when the block ends (a descriptor that is not open is left alone)."""
    texts: dict[int, str] = {}
    saved = {}
    for s in (sys.stdout, sys.stderr):
        _flush(s)
    with ExitStack() as stack:
        for fd in (1, 2):
            try:
                copy = os.dup(fd)
            except OSError:
                continue
            tmp = stack.enter_context(tempfile.TemporaryFile())
            os.dup2(tmp.fileno(), fd)
            saved[fd] = (copy, tmp)
        try:
            yield texts
        finally:
            for fd, (copy, tmp) in saved.items():
                os.dup2(copy, fd)
                os.close(copy)
                tmp.seek(0)
                text = tmp.read().decode(errors="replace")
                if text:
                    texts[fd] = text


def _flush(stream) -> None:
    try:
        stream.flush()
    except (OSError, ValueError, AttributeError):   # a closed or odd stream: nothing buffered to keep
        pass
