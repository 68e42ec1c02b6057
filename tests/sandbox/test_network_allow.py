"""shell.sandbox_network_allow: what the proxy lets through, decided before and after the
name is resolved (never by the command). No test here touches the network."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_server.compose import build_runtime
from lsp_server.config.tree import Config
from lsp_server.home.dirs import Dirs
from lsp_server.sandbox.netallow import (
    NetworkAllowList,
    blocked_line,
    parse_allow_list,
    split_host_port,
)


def allow(*entries: str) -> NetworkAllowList:
    problems: list[str] = []
    parsed = NetworkAllowList(parse_allow_list(entries, problems))
    assert problems == []
    return parsed


def test_entries_parse() -> None:
    assert split_host_port("Registry.NPMJS.org") == ("registry.npmjs.org", None)
    assert split_host_port("pypi.org:443") == ("pypi.org", 443)
    assert split_host_port("[::1]:8080") == ("::1", 8080)
    assert split_host_port("::1") == ("::1", None)
    problems: list[str] = []
    assert parse_allow_list(["x:0", "x:http", "[::1", ":80"], problems) == ()
    assert len(problems) == 4 and all("sandbox_network_allow" in p for p in problems)


def test_unlisted_names_are_refused_before_resolving() -> None:
    rules = allow("pypi.org", "files.example.org:443", "*.npmjs.org")
    assert rules.refusal("pypi.org", 443) is None
    assert rules.refusal("pypi.org", 8080) is None  # no port: any port
    assert rules.refusal("files.example.org", 443) is None
    assert rules.refusal("files.example.org", 80) == "not in sandbox_network_allow"
    assert rules.refusal("registry.npmjs.org", 443) is None
    assert rules.refusal("npmjs.org", 443) == "not in sandbox_network_allow"
    assert rules.refusal("evilnpmjs.org", 443) == "not in sandbox_network_allow"
    assert rules.refusal("blocked.invalid", 443) == "not in sandbox_network_allow"


@pytest.mark.parametrize(
    "address",
    ["127.0.0.1", "10.1.2.3", "192.168.0.1", "172.16.0.1", "169.254.169.254", "100.64.0.1",
     "::1", "fe80::1", "fd00:ec2::254", "0.0.0.0"],
)  # fmt: skip
def test_a_listed_name_that_resolves_inward_is_refused(address: str) -> None:
    rules = allow("internal.example")
    usable, why = rules.usable("internal.example", 443, [address])
    assert usable == []
    assert why is not None and address in why


def test_a_literal_address_is_allowed_when_listed_as_one() -> None:
    rules = allow("127.0.0.1:8080", "internal.example", "10.0.0.5")
    assert rules.refusal("127.0.0.1", 8080) is None
    assert rules.usable("127.0.0.1", 8080, []) == (["127.0.0.1"], None)
    assert rules.refusal("127.0.0.1", 8081) == "not in sandbox_network_allow"
    # A listed name may use an inward address only when that address is listed too.
    assert rules.usable("internal.example", 443, ["10.0.0.5", "10.0.0.6"]) == (["10.0.0.5"], None)
    assert rules.usable("internal.example", 443, ["93.184.215.14"]) == (["93.184.215.14"], None)
    assert rules.usable("internal.example", 443, [])[1] == "the name does not resolve"


def test_the_blocked_line_names_host_port_and_the_way_out() -> None:
    assert blocked_line("example.org", 443, "not in sandbox_network_allow") == (
        'blocked: example.org:443 (not in sandbox_network_allow); ask with sandbox: "network"'
    )
    assert blocked_line("::1", 80, "x").startswith("blocked: [::1]:80 (x)")


def test_a_bad_entry_is_reported_when_the_runtime_is_built(tmp_path: Path) -> None:
    config = Config()
    config.shell.sandbox_network_allow = ["pypi.org", "x:http"]
    problems: list[str] = []
    dirs = Dirs(state=tmp_path / "state", config=tmp_path / "config")
    build_runtime([tmp_path], config, dirs=dirs, problems=problems, long_lived=False)
    assert problems == [
        "shell.sandbox_network_allow: 'x:http': the port must be 1-65535; entry ignored"
    ]
