"""What every request passes on both network fronts (HTTP in `openxiv.service.http`, MCP over HTTP in
`openxiv.service.mcp`): header deadline and size (`headers`), body size, read deadline and text that
is text (`body`), tokens and Host/Origin checks (`access`), and the ASGI types and JSON error they
answer with (`asgi`). Neither front imports the other; both import these."""
