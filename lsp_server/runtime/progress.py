"""$/progress reporting for long calls, when the client gave a work-done token."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

ProgressSender = Callable[[str | int, dict[str, Any]], None]


class Progress:
    def __init__(self, token: str | int | None, send: ProgressSender | None, title: str) -> None:
        self._token = token
        self._send = send
        self._title = title
        self._begun = False

    @property
    def enabled(self) -> bool:
        return self._token is not None and self._send is not None

    def _emit(self, value: dict[str, Any]) -> None:
        if self._token is not None and self._send is not None:
            self._send(self._token, value)

    async def report(self, message: str, percentage: int | None = None) -> None:
        if not self.enabled:
            return
        if not self._begun:
            self._begun = True
            self._emit({"kind": "begin", "title": self._title, "cancellable": True})
        value: dict[str, Any] = {"kind": "report", "message": message[:200]}
        if percentage is not None:
            value["percentage"] = max(0, min(100, percentage))
        self._emit(value)

    def end(self, message: str | None = None) -> None:
        if self._begun:
            self._emit({"kind": "end", **({"message": message} if message else {})})
            self._begun = False
