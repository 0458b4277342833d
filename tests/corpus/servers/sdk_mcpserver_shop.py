"""A shop server on the official SDK's high-level server (``mcp.server.mcpserver.MCPServer``,
FastMCP's successor in mcp 2.x), written as its users write one: typed parameters, an enum,
optional values, a nested model. The corpus checks that its generated schemas raise no false
alarm in any client profile."""

from __future__ import annotations

from enum import Enum

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field

server = MCPServer("shop-sdk")


class Size(str, Enum):
    small = "small"
    large = "large"


class Address(BaseModel):
    street: str
    city: str
    postcode: str | None = None


@server.tool()
def price(item: str, size: Size = Size.small, quantity: int = Field(1, ge=1, le=99)) -> float:
    """The price of an item."""
    return 2.5 * quantity * (2 if size == Size.large else 1)


@server.tool()
def ship(item: str, to: Address, express: bool = False, note: str | None = None) -> str:
    """Ship an item to an address."""
    return f"shipping {item} to {to.city}{' (express)' if express else ''}"


if __name__ == "__main__":
    server.run()
