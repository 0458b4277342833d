"""The protocol versions mcp-matrix speaks, and the keys of the 2026-07-28 per-request ``_meta``.

The handshake era (2024-11-05 .. 2025-11-25) negotiates a version in ``initialize``; the
stateless era (2026-07-28) sends it, the client's capabilities and identity in every request's
``params._meta`` under these keys.
https://modelcontextprotocol.io/specification/2026-07-28/changelog
"""

from __future__ import annotations

LATEST_PROTOCOL = "2025-11-25"  # the newest handshake-era version
MODERN_PROTOCOL = "2026-07-28"  # the stateless era (per-request _meta, no initialize)
HANDSHAKE_PROTOCOLS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_PROTOCOLS = (MODERN_PROTOCOL,)
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
UNSUPPORTED_PROTOCOL_VERSION = -32022  # 2026-07-28: data {supported: [...], requested}
