"""Issue 27, item 3, in process: the Host/Origin allow-list of `vaultmem mcp --http` (flags
and [mcp] of vaultmem.toml, parsed at the boundary, bad values refused with exit 5) and
`GET /health`, which needs no token and tells nothing about notes. The real ASGI app
(http_app) through httpx's ASGI transport; the real server behind a proxy is
test_team_service.py."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import Cli
from vaultmem.config import McpSettings, parse_allowed_host, parse_allowed_origin, parse_config
from vaultmem.errors import InvalidInput
from vaultmem.mcp.http import allow_list, exposure_notice, http_app, own_and_given

PUBLIC = "memory.example.test"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("memory.example.com", "memory.example.com"),
        ("Memory.Example.COM", "memory.example.com"),
        ("memory.example.com:8443", "memory.example.com:8443"),
        ("memory.example.com:*", "memory.example.com:*"),
        ("10.0.0.5:08765", "10.0.0.5:8765"),
        ("[::1]:8765", "[::1]:8765"),
        ("vault_mem", "vault_mem"),  # a container's name
        ("https://memory.example.com", None),  # an origin, not a host
        ("memory.example.com/mcp", None),
        ("*.example.com", None),  # no name wildcards: each name is allowed by itself
        ("::1", None),  # IPv6 goes in brackets, as in a Host header
        ("x:0", None),
        ("x:65536", None),
        ("x:", None),
        ("a b", None),
        ("", None),
    ],
)
def test_allowed_hosts_parse_as_a_host_header_carries_them(value: str, expected: str | None) -> None:
    if expected is None:
        with pytest.raises(InvalidInput, match="NAME, NAME:PORT or NAME:"):
            parse_allowed_host(value)
    else:
        assert parse_allowed_host(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("https://memory.example.com", "https://memory.example.com"),
        ("HTTPS://Memory.Example.com:443/", "https://memory.example.com"),  # as a browser sends it
        ("http://memory.example.com:80", "http://memory.example.com"),
        ("https://memory.example.com:8443", "https://memory.example.com:8443"),
        ("http://localhost:*", "http://localhost:*"),
        ("memory.example.com", None),  # a host, not an origin
        ("ftp://memory.example.com", None),
        ("https://memory.example.com/app", None),
        ("https://user@memory.example.com", None),
        ("https://", None),
    ],
)
def test_allowed_origins_parse_as_an_origin_header_carries_them(value: str, expected: str | None) -> None:
    if expected is None:
        with pytest.raises(InvalidInput, match="no path"):
            parse_allowed_origin(value)
    else:
        assert parse_allowed_origin(value) == expected


def test_the_mcp_table_of_vaultmem_toml() -> None:
    good = parse_config(
        tomllib.loads(
            '[mcp]\nallowed_hosts = ["Memory.Example.com"]\nallowed_origins = ["https://memory.example.com/"]'
        )
    )
    assert good.mcp == McpSettings(("memory.example.com",), ("https://memory.example.com",))
    assert good.warnings == ()
    bad = parse_config(tomllib.loads('[mcp]\nallowed_hosts = "x"\nallowed_origins = ["https://ok", "x"]\nport = 1'))
    assert bad.mcp.allowed_origins == ("https://ok",)
    assert [p.split(":")[0] for p in bad.mcp.problems] == ["mcp.allowed_hosts", "mcp.allowed_origins"]
    assert set(bad.mcp.problems) < set(bad.warnings)  # other commands warn
    assert "unknown key mcp.port in vaultmem.toml" in bad.warnings
    with pytest.raises(InvalidInput, match=r"vaultmem.toml: mcp.allowed_hosts: expected a list"):
        allow_list(bad.mcp, "127.0.0.1", 8765)  # `mcp --http` refuses to start


def test_the_allow_list_is_the_servers_own_address_the_toml_and_the_flags() -> None:
    settings = McpSettings(("memory.example.com",), ("https://memory.example.com",))
    allowed = allow_list(settings, "127.0.0.1", 8765, ["other.example.com:*"], ["https://other.example.com"])
    assert allowed.hosts == (
        "127.0.0.1:8765", "localhost:8765", "[::1]:8765", "memory.example.com", "other.example.com:*",
    )  # fmt: skip
    assert allowed.origins[-2:] == ("https://memory.example.com", "https://other.example.com")
    assert allowed.host("other.example.com:443") and not allowed.host("other.example.com")
    assert not allowed.host("other.example.com:443x") and not allowed.host("memory.example.com:8765")
    assert allowed.origin(None) and not allowed.origin("http://memory.example.com")
    with pytest.raises(InvalidInput, match=r"^--allow-origin: 'memory\.example\.com' is not an origin"):
        allow_list(McpSettings(), "127.0.0.1", 8765, [], ["memory.example.com"])
    with pytest.raises(InvalidInput, match=r"^--allow-host: 'https://x' .* belongs in the origins"):
        allow_list(McpSettings(), "127.0.0.1", 8765, ["https://x"])


def test_every_interface_without_names_is_accepted_and_says_what_it_answers() -> None:
    everywhere = own_and_given("0.0.0.0", 8765)
    assert everywhere.hosts == ("127.0.0.1:8765", "localhost:8765", "[::1]:8765")  # never "0.0.0.0:8765"
    notice = exposure_notice("0.0.0.0", 8765, everywhere)
    assert notice is not None and "127.0.0.1:8765, localhost:8765, [::1]:8765" in notice and "--allow-host" in notice
    assert exposure_notice("0.0.0.0", 8765, own_and_given("0.0.0.0", 8765, [PUBLIC])) is None
    assert exposure_notice("127.0.0.1", 8765, own_and_given("127.0.0.1", 8765)) is None
    assert own_and_given("::1", 9000).hosts[0] == "[::1]:9000"


def _requests(vault: Path, calls: list[tuple[str, str, dict[str, str]]], host: str = PUBLIC) -> list[Any]:
    """Each (method, path, headers) against the real ASGI app (no lifespan: /mcp is only
    refused here, never served)."""
    import httpx

    allowed = own_and_given("127.0.0.1", 8765, [PUBLIC], [f"https://{PUBLIC}"])
    app = http_app(vault, "127.0.0.1", 8765, allowed=allowed)

    async def main() -> list[Any]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=f"http://{host}") as client:
            return [await client.request(m, p, headers=h) for m, p, h in calls]

    return anyio.run(main)


def test_health_needs_no_token_and_tells_nothing_about_notes(vault: Path, cli: Cli) -> None:
    secret = cli.ok("note", "create", "--title", "Alice secret plan", "--type", "fact", "--scope", "private",
                    "--body=zebra", ghost="alice")  # fmt: skip
    cli.ok("token", "add", "alice")
    first, browser = _requests(vault, [("GET", "/health", {}), ("GET", "/health", {"Origin": f"https://{PUBLIC}"})])
    assert first.status_code == browser.status_code == 200
    assert first.headers["cache-control"] == "no-store"
    # no watcher here (autostart is off in tests): served, each call opening the indexes
    assert first.json() == {"status": "degraded", "watcher": "none", "model": "off", "tokens": "ok", "vault": "ok"}
    text = first.text.lower()
    for told in ("alice", "bob", "secret", "private", str(vault).lower(), secret["id"].lower(), "note"):
        assert told not in text


def test_health_is_503_when_no_call_could_be_served(vault: Path, cli: Cli) -> None:
    cli.ok("token", "add", "alice")
    (vault / ".vaultmem-tokens.json").write_text("{not json")
    refused, health = _requests(vault, [("POST", "/mcp", {"Authorization": "Bearer vmt_x"}), ("GET", "/health", {})])
    assert refused.status_code == 401
    assert health.status_code == 503
    assert health.json()["status"] == "unavailable" and health.json()["tokens"] == "unreadable"


def test_an_unknown_host_or_origin_is_refused_on_every_path(vault: Path, cli: Cli) -> None:
    token = cli.ok("token", "add", "alice")["token"]
    auth = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    evil_origin = {**auth, "Origin": "https://evil.example"}
    http_origin = {**auth, "Origin": f"http://{PUBLIC}"}  # allowed: https:// only
    ok_paths = _requests(vault, [("GET", "/health", evil_origin), ("POST", "/mcp", http_origin)])
    assert [r.status_code for r in ok_paths] == [403, 403]
    assert json.loads(ok_paths[0].text)["error"]["code"] == "forbidden"
    rebound = _requests(vault, [("GET", "/health", {}), ("POST", "/mcp", auth), ("GET", "/x", {})], "evil.example")
    assert [r.status_code for r in rebound] == [421, 421, 421]  # before the token is looked at
    upper = _requests(vault, [("GET", "/health", {})], PUBLIC.upper())
    assert upper[0].status_code == 200  # host names are case-insensitive


def test_bad_allow_values_stop_the_server_before_it_starts(vault: Path, cli: Cli) -> None:
    assert cli("mcp", "--allow-host", PUBLIC, json_=False).exit_code == 2  # stdio: no Host to check
    bad_flag = cli("mcp", "--http", "--allow-origin", PUBLIC, json_=False)
    assert bad_flag.exit_code == 5 and "--allow-origin" in bad_flag.stderr
    config = vault / "vaultmem.toml"
    text = config.read_text()
    assert "\n# allowed_hosts = " in text  # the template's [mcp], commented out
    config.write_text(text.replace("\n# allowed_hosts = ", '\nallowed_hosts = ["https://memory.example.com"]\n# '))
    bad_toml = cli("mcp", "--http", json_=False)
    assert bad_toml.exit_code == 5 and "vaultmem.toml: mcp.allowed_hosts" in bad_toml.stderr
