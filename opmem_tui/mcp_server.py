"""`opmem mcp`: the recall tools over MCP stdio (the official `mcp` package, low-level server).

The tools, their schemas and their replies come from the one registry (backend/recall), the
core.md resource from the memory's one renderer (backend/recall/core_block); this module only
speaks the protocol. Every call is read-only and its reply fits the configured budget
(`[recall] max_reply_bytes`).
"""

from __future__ import annotations

import importlib.metadata
import json
import sys
import threading
import traceback
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from .backend.model import OpmemError
from .backend.recall.context import Recall
from .backend.recall.core_block import core_block
from .backend.recall.registry import TOOLS, call_json

SERVER_NAME = "opmem"
INSTRUCTIONS = (
    "opmem keeps every agent session as a git repository and distils them into memory. "
    "Pointers such as 'session:<id>' (in core.md and in every result; core.md gives a short "
    "unique prefix of the id, as git's short hashes) open with memory_open_session; a project's history and the turns behind its commits with "
    "memory_git_log / memory_git_show; memory_search finds what was said or done; memory_usage "
    "sums the tokens and cost the agents recorded. The resource "
    "opmem://core.md is the compact memory block. Every tool is read-only; long replies are paged."
)
CORE_URI = "opmem://core.md"
CORE_RESOURCE = types.Resource(
    name="core.md",
    title="opmem core memory",
    uri=CORE_URI,
    description=(
        "The compact memory block (<= 2 KB) for this server's project, or the global one: recent "
        "events and current facts, each line ending in the session it came from."
    ),
    mime_type="text/markdown",
)
_ANNOTATIONS = types.ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


def _version() -> str:
    try:
        return importlib.metadata.version("opmem")
    except importlib.metadata.PackageNotFoundError:
        return "0"


def build_server(recall: Recall) -> Server[Any]:
    """An MCP server answering with `recall`'s store, scope and budget."""
    lock = threading.Lock()  # one call at a time: the store objects are shared

    def run_tool(name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        with lock:
            try:
                return call_json(recall, name, arguments)
            except Exception as exc:  # a bug must not take the server down
                traceback.print_exc(file=sys.stderr)
                error = {"code": "internal_error", "message": f"{type(exc).__name__}: {exc}"}
                return json.dumps({"error": error}, ensure_ascii=False)[: recall.max_reply_bytes], True

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=tool.name,
                    description=tool.description,
                    input_schema=dict(tool.input_schema),
                    annotations=_ANNOTATIONS,
                )
                for tool in TOOLS.values()
            ]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        text, is_error = await anyio.to_thread.run_sync(run_tool, params.name, dict(params.arguments or {}))
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=is_error)

    def read_core() -> str:
        with lock:
            try:
                return core_block(recall)
            except OpmemError as exc:
                raise MCPError(types.INTERNAL_ERROR, str(exc)) from None

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[CORE_RESOURCE])

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        if str(params.uri) != CORE_URI:
            raise MCPError(types.INVALID_PARAMS, f"no resource {str(params.uri)!r}; there is {CORE_URI}")
        text = await anyio.to_thread.run_sync(read_core)
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=CORE_URI, mime_type="text/markdown", text=text)]
        )

    return Server(
        SERVER_NAME,
        version=_version(),
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


def serve(recall: Recall) -> None:
    """Serve MCP on stdin/stdout until the client closes the pipe."""
    server = build_server(recall)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
