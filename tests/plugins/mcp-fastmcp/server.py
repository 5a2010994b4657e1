"""An MCP server written as fastmcp's README writes one: a tool that reports progress, one
that multiplies, and a prompt. Needs the `fastmcp` package."""

from fastmcp import Context, FastMCP

mcp = FastMCP("mcp-fastmcp")


@mcp.tool
def multiply(a: float, b: float) -> float:
    """Multiplies two numbers."""
    return a * b


@mcp.tool
async def count_to(n: int, ctx: Context) -> str:
    """Counts to n, reporting progress."""
    for i in range(1, n + 1):
        await ctx.report_progress(progress=i, total=n)
    return f"counted to {n}"


@mcp.prompt
def summarize(topic: str) -> str:
    """Asks for a summary of a topic."""
    return f"Summarize {topic} in one sentence."


if __name__ == "__main__":
    mcp.run(show_banner=False)
