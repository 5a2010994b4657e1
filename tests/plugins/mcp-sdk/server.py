"""An MCP server written as the official Python SDK's README writes one (`MCPServer`).

Tools for the black-box tests: `add` (claims to be read-only: bingo must not believe it),
`steps` (reports progress), `wait` (runs until cancelled; writes `cancelled` into
`$MCP_SDK_MARKS/<marker>` when the SDK cancels it), `crash` (exits), `spawn` (a child in its own session), `pid`, `shout` (logs
through the server's log), `weather` (structured content), `fail` (raises), `confirm`
(elicits), `sample` (asks for sampling). A prompt `greet` with a completable argument. Needs the `mcp` package. With
`--http PORT` it serves Streamable HTTP on 127.0.0.1:PORT/mcp instead of stdio.
"""

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import Completion, SamplingMessage, TextContent, ToolAnnotations
from pydantic import BaseModel

server = MCPServer("mcp-sdk")
MARKS = Path(os.environ.get("MCP_SDK_MARKS", "."))


@server.tool(annotations=ToolAnnotations(readOnlyHint=True, destructiveHint=False))
def add(a: int, b: int) -> str:
    """Adds two numbers."""
    return f"{a} + {b} = {a + b}"


@server.tool()
async def steps(count: int, ctx: Context) -> str:
    """Reports progress `count` times, then answers."""
    for step in range(1, count + 1):
        await ctx.report_progress(step, count, f"step {step} of {count}")
    return f"took {count} steps"


@server.tool()
async def wait(marker: str, ctx: Context) -> str:
    """Runs until it is cancelled, its live line saying so."""
    (MARKS / marker).write_text("started")
    await ctx.report_progress(0, None, "waiting to be cancelled")
    try:
        await asyncio.sleep(3600)
    except BaseException:
        (MARKS / marker).write_text("cancelled")
        raise
    return "never"


@server.tool()
def crash() -> str:
    """Exits at once, as a crashing server does."""
    print("mcp-sdk: crashing on purpose", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool()
def spawn() -> str:
    """Starts a child that would outlive the server (in a session of its own, so no group
    kill reaches it); its pid."""
    child = subprocess.Popen(["sleep", "600"], start_new_session=True)
    return str(child.pid)


@server.tool()
def pid() -> str:
    """The server's process id."""
    return str(os.getpid())


@server.tool()
async def shout(text: str, ctx: Context) -> str:
    """Logs `text` through MCP logging, then answers."""
    await ctx.info(f"shouting {text}")
    return text.upper()


class Weather(BaseModel):
    city: str
    celsius: float


@server.tool()
def weather(city: str) -> Weather:
    """Structured content."""
    return Weather(city=city, celsius=21.5)


@server.tool()
def fail() -> str:
    """Always fails."""
    raise ValueError("this tool always fails")


class Answer(BaseModel):
    ok: bool


@server.tool()
async def confirm(ctx: Context) -> str:
    """Asks the person through elicitation."""
    result = await ctx.elicit("Really go on?", Answer)
    return f"elicitation {result.action}" + (f": ok={result.data.ok}" if result.action == "accept" else "")


@server.tool()
async def sample(ctx: Context) -> str:
    """Asks the client for a completion (sampling/createMessage)."""
    message = SamplingMessage(role="user", content=TextContent(type="text", text="hi"))
    try:
        result = await ctx.session.create_message(messages=[message], max_tokens=5)
    except Exception as exc:
        return f"sampling failed: {exc}"
    return f"sampled from {result.model}: {result.content.text}"


@server.prompt()
def greet(name: str) -> str:
    """Greets someone by name."""
    return f"Please write a short greeting for {name}."


@server.completion()
async def complete(ref, argument, context):
    if argument.name == "name":
        names = ["Alice", "Albert", "Bob"]
        return Completion(values=[n for n in names if n.startswith(argument.value)])
    return None


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":  # Streamable HTTP on 127.0.0.1:PORT/mcp
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
