"""The one exception the client raises for a failed call."""

from __future__ import annotations

from typing import Any, Dict, Optional


class EmulatorError(Exception):
    """What the emulator answered when a call failed.

    ``status`` is the HTTP status (0 when no answer came at all, or a wait ran out of time),
    ``message`` the emulator's own explanation (prefixed with the call), and ``body`` the
    error body as the emulator sent it (``statusCode``, ``error``, ``message`` and, for some
    errors, ``problems``), when it sent one.
    """

    status: int
    message: str
    body: Optional[Dict[str, Any]]

    def __init__(self, status: int, message: str, body: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.body = body

    def __repr__(self) -> str:
        return f"EmulatorError(status={self.status!r}, message={self.message!r})"
