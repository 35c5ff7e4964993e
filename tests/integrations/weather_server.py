"""An MCP server made with the ``mcp`` package, for the tests: two tools, over stdio or streamable HTTP.

``python weather_server.py stdio`` or ``python weather_server.py http PORT``. ``forecast`` fails for an unknown city
(the error must reach the model) and makes the process exit for the city "Crash" (a server dying mid-call). Asked
for "Atlantis", it first adds a third tool, ``tides``, and tells the client its tool list changed.
"""

from __future__ import annotations

import os
import sys

from mcp.server.fastmcp import Context, FastMCP
from mcp.types import ToolAnnotations

FORECASTS = {"lisbon": "sunny, 24 °C", "oslo": "cloudy, 9 °C"}

server = FastMCP("weather", host="127.0.0.1", port=int(sys.argv[2]) if len(sys.argv) > 2 else 8000, log_level="ERROR")


def tides(city: str) -> str:
    """Today's tides in a coastal city."""
    return f"{city}: high tide at 14:02"


@server.tool()
async def forecast(city: str, ctx: Context) -> str:  # type: ignore[type-arg]
    """Tomorrow's weather in a city.

    Args:
        city: the city's name.
    """
    if city == "Crash":
        os._exit(3)
    if city == "Atlantis":
        server.add_tool(tides)
        await ctx.session.send_tool_list_changed()
    found = FORECASTS.get(city.lower())
    if found is None:
        raise ValueError(f"no forecast for {city}; try Lisbon or Oslo")
    return f"{city}: {found}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))  # a calculation: it changes nothing
def convert(celsius: float) -> float:
    """Degrees Celsius in Fahrenheit."""
    return round(celsius * 9 / 5 + 32, 1)


if __name__ == "__main__":
    server.run("streamable-http" if sys.argv[1] == "http" else "stdio")
