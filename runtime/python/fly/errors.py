"""The exceptions of the binding.

Every failure of libflyrt becomes a FlyError carrying the library's own
sentence (flyrtLastError) and its status; the checks done in Python (the
device an array lives on, what kind of object an argument is) raise the
same class with the status libflyrt would have used, so that one
`except fly.FlyError` covers a launch.
"""
from __future__ import annotations

import enum


class Status(enum.IntEnum):
    """FlyrtStatus of fly/runtime.h, value for value."""

    SUCCESS = 0
    INVALID_VALUE = 1
    IO = 2
    BAD_BUNDLE = 3
    VERSION = 4
    NOT_FOUND = 5
    NO_IMAGE = 6
    ARGUMENTS = 7
    LAUNCH_RULE = 8
    NO_DRIVER = 9
    NO_DEVICE = 10
    DRIVER = 11
    OUT_OF_MEMORY = 12
    LAUNCH_REFUSED = 13


class FlyError(RuntimeError):
    """A failure of libflyrt, or of a check the binding makes before calling it.

    message      the sentence saying what went wrong (libflyrt's flyrtLastError())
    status       a Status (a CompileError has its own, see there)
    status_name  "FLYRT_ERROR_ARGUMENTS": the C name, as flyrtStatusName gives it
    """

    def __init__(self, message: str, status: int = Status.INVALID_VALUE,
                 status_name: str | None = None) -> None:
        if status_name is None:
            status_name = status_name_of(status)
        super().__init__(f"{status_name}: {message}")
        self.message = message
        self.status = Status(status) if status in Status._value2member_map_ else status
        self.status_name = status_name


class KernelNotFoundError(FlyError, AttributeError):
    """No such kernel or specialisation (FLYRT_ERROR_NOT_FOUND). It is also an
    AttributeError, so that `mod.no_such_kernel` behaves as a missing
    attribute does (hasattr, getattr with a default)."""


class CompileError(FlyError):
    """flyc refused the source or the options.

    diagnostics  everything the compiler reported, as `flyc compile` prints it
    status       1: errors in the source; 2: bad options (flyc's exit status)
    """

    def __init__(self, diagnostics: str, status: int) -> None:
        name = "FLYC_ERROR_SOURCE" if status == 1 else "FLYC_ERROR_OPTIONS"
        text = diagnostics.strip() or f"the compile failed with status {status}"
        super().__init__(text, status, name)
        self.status = status  # flyc's, not a Status
        self.diagnostics = diagnostics


class CompileWarning(UserWarning):
    """Warnings of a compile that succeeded (fly.compile)."""


class LibraryNotFoundError(OSError):
    """libflyrt or libflyc could not be found or loaded; the message lists the
    places searched and the variable that names the library's path."""


def status_name_of(status: int) -> str:
    """The C name of a status, without calling into the library (which may be
    the thing missing)."""
    try:
        s = Status(status)
    except ValueError:
        return "FLYRT_ERROR_UNKNOWN"
    return "FLYRT_SUCCESS" if s is Status.SUCCESS else f"FLYRT_ERROR_{s.name}"
