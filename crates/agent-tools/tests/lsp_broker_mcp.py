"""Several MCP clients on one checkout, for `lsp_broker.rs`.

Usage: python lsp_broker_mcp.py PLAN.json

Starts `plan["clients"]` `agent-tools mcp` servers (the plan's command,
args, env) through the official MCP Python SDK, one after the other; asks
each, concurrently, the plan's `lsp` calls; records the process groups of
the basedpyright servers carrying the plan's marker variable; SIGKILLs the
first client's server; asks the others again; closes them. Prints one JSON
report; the assertions live in the Rust test.
"""

import asyncio
import contextlib
import json
import os
import signal
import sys

from mcp import Client
from mcp.client.stdio import StdioServerParameters


def children():
    """This process's live children."""
    out = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                rest = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(rest[1]) == os.getpid() and rest[0] not in ("Z", "X"):
            out.add(int(name))
    return out


def server_groups(var, marker):
    """Process groups of marked basedpyright servers."""
    groups = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                env = f.read().split(b"\0")
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if f"{var}={marker}".encode() in env and b"langserver.index.js" in cmd:
            groups.add(os.getpgid(int(name)))
    return sorted(groups)


def text(result):
    body = "\n".join(c.text for c in result.content if hasattr(c, "text"))
    return ("error: " if result.is_error else "") + body


async def ask_all(client, calls):
    return [text(await client.call_tool("lsp", args)) for args in calls]


async def main(plan):
    params = StdioServerParameters(
        command=plan["command"], args=plan["args"], env=plan["env"], cwd=plan["cwd"]
    )
    report = {}
    async with contextlib.AsyncExitStack() as stack:
        clients, pids = [], []
        for _ in range(plan["clients"]):
            before = children()
            client = Client(params, read_timeout_seconds=plan["timeout"])
            await stack.enter_async_context(client)
            (pid,) = children() - before
            clients.append(client)
            pids.append(pid)
        report["first"] = await asyncio.gather(*(ask_all(c, plan["calls"]) for c in clients))
        report["groups"] = server_groups(plan["marker_var"], plan["marker"])
        os.kill(pids[0], signal.SIGKILL)
        report["after_kill"] = await asyncio.gather(
            *(ask_all(c, plan["calls"]) for c in clients[1:])
        )
        report["groups_after_kill"] = server_groups(plan["marker_var"], plan["marker"])
        # Closed last to first: the killed client's session (the first)
        # ends with an error, the others close cleanly.
        try:
            await stack.aclose()
        except BaseException as e:  # the killed client's broken pipe
            report["close_error"] = type(e).__name__
    print(json.dumps(report))


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        asyncio.run(main(json.load(f)))
