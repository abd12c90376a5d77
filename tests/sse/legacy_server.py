"""A legacy HTTP+SSE MCP server (the 2024-11-05 transport) for tests/legacy_sse.rs, built on the
official Python SDK's SSE server: `GET /sse` streams events (`endpoint` first), messages are
POSTed to `/messages/?session_id=...`; `POST /sse` is refused with 405, as such servers do.
Usage: legacy_server.py PORT_FILE; the URL of its stream goes to PORT_FILE once it listens.
"""
import os
import socket
import sys

import uvicorn
from mcp.server import MCPServer

server = MCPServer("legacy-sse")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return f"legacy echo: {text}"


def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    # Listening before the URL is published: a client that comes early waits in the backlog.
    sock.listen(64)
    app = server.sse_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning")
    uv = uvicorn.Server(config)
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(f"http://127.0.0.1:{port}/sse")
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    uv.run(sockets=[sock])


if __name__ == "__main__":
    main()
