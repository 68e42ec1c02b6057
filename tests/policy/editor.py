"""A pytest-lsp client that plays the user in the editor: it declares the approvals
capability and answers every `toolhost/approve` through a script the test sets."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.helpers import make_test_client

Answer = dict[str, Any]
Script = Callable[[dict[str, Any]], Awaitable[Answer]]


class Editor:
    def __init__(self) -> None:
        self.prompts: list[dict[str, Any]] = []
        self.prompted = asyncio.Condition()
        self.script: Script = self.answer({"decision": "allow_once"})
        self.settings: dict[str, Any] | None = None
        """What workspace/configuration answers for the section `toolhost`."""
        self.messages: list[str] = []
        """window/showMessage texts."""
        self.untrusted_configs: list[dict[str, Any]] = []
        """toolhost/configUntrusted notifications."""
        self.config_noticed = asyncio.Event()

    @staticmethod
    def answer(result: Answer) -> Script:
        async def respond(params: dict[str, Any]) -> Answer:
            return result

        return respond

    async def wait_for_prompts(self, count: int) -> None:
        async with self.prompted:
            await self.prompted.wait_for(lambda: len(self.prompts) >= count)

    def client_factory(self) -> Callable[[], LanguageClient]:
        def factory() -> LanguageClient:
            client = make_test_client()

            @client.feature("toolhost/approve")
            async def approve(params: dict[str, Any]) -> Answer:
                async with self.prompted:
                    self.prompts.append(params)
                    self.prompted.notify_all()
                return await self.script(params)

            @client.feature("workspace/configuration")
            def configuration(params: types.ConfigurationParams) -> list[Any]:
                return [self.settings for _ in params.items]

            @client.feature("toolhost/configUntrusted")
            def config_untrusted(params: Any) -> None:
                self.untrusted_configs.append(params)
                self.config_noticed.set()

            @client.feature("window/showMessage")
            def show_message(params: types.ShowMessageParams) -> None:
                self.messages.append(params.message)

            return client

        return factory


APPROVALS = {"approvals": True}
