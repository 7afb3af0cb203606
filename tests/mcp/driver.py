"""Drive `agent-tools mcp` with the official MCP Python SDK and report what happened.

Usage: python driver.py PLAN.json

The plan (written by the Rust tests in tests/tests/mcp*.rs) names the server
command and a list of steps; this script runs them in one session through
`mcp.Client` over stdio and prints one JSON document with what each step
observed. The assertions live in the Rust tests: this script only drives the
real client and records.

Plan keys:
  command, args, env, cwd      how to start the server
  elicitation                  list of answers the client gives to elicitation
                               requests, in order (absent: the client declares
                               no elicitation capability)
  steps                        list of steps:
    {"op": "list_tools"}
    {"op": "call", "tool": NAME, "args": {...}, "progress": bool,
     "cancel_after": SECONDS, "timeout": SECONDS}
    {"op": "processes"}        the server's pid and every descendant pid
    {"op": "sleep", "seconds": S}
    {"op": "await_log", "logger": NAME, "timeout": S}
                               wait until a log notification from NAME came
                               (every one is recorded in report["log"])
"""

import asyncio
import json
import os
import sys
import time

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
import mcp_types as types


def proc_table():
    """pid -> ppid of every process."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        rest = stat.rsplit(")", 1)[1].split()
        if rest[0] in ("Z", "X"):
            continue
        table[int(name)] = int(rest[1])
    return table


def descendants(root_pid):
    table = proc_table()
    out, frontier = [], [root_pid]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in table.items():
            if ppid == parent:
                out.append(pid)
                frontier.append(pid)
    return sorted(out)


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except OSError:
        return False


def content_json(block):
    if isinstance(block, types.TextContent):
        return {"type": "text", "text": block.text}
    if isinstance(block, types.ImageContent):
        import base64

        data = base64.b64decode(block.data)
        return {
            "type": "image",
            "mimeType": block.mime_type,
            "bytes": len(data),
            "png_signature": data[:8] == b"\x89PNG\r\n\x1a\n",
        }
    return {"type": getattr(block, "type", "unknown")}


def staged_edit_id(result):
    """The `edit_N` id an ast_edit result names."""
    sc = result.structured_content or {}
    if isinstance(sc, dict) and isinstance(sc.get("edit_id"), str):
        return sc["edit_id"]
    import re

    for block in result.content:
        m = re.search(r"edit_[A-Za-z0-9_]+", getattr(block, "text", "") or "")
        if m:
            return m.group(0)
    return None


async def run(plan):
    report = {"steps": [], "elicitations": [], "log": []}
    log_arrived = asyncio.Event()

    async def on_log(params):
        report["log"].append(
            {"level": params.level, "logger": params.logger, "data": params.data}
        )
        log_arrived.set()
    answers = list(plan.get("elicitation") or [])

    async def on_elicit(context, params):
        report["elicitations"].append(
            {
                "message": params.message,
                "schema": getattr(params, "requested_schema", None),
            }
        )
        if not answers:
            return types.ElicitResult(action="cancel")
        a = answers.pop(0)
        return types.ElicitResult(action=a["action"], content=a.get("content"))

    server = StdioServerParameters(
        command=plan["command"],
        args=plan.get("args", []),
        env=plan.get("env"),
        cwd=plan.get("cwd"),
    )
    kwargs = {"logging_callback": on_log}
    if "elicitation" in plan:
        kwargs["elicitation_callback"] = on_elicit
    server_pid = None
    last_edit_id = None
    seen_pids = set()
    started = time.monotonic()
    client = Client(server, read_timeout_seconds=plan.get("read_timeout", 120), **kwargs)
    async with client:
        report["protocol_version"] = client.protocol_version
        report["server_name"] = client.server_info.name if client.server_info else None
        kids = [p for p, pp in proc_table().items() if pp == os.getpid()]
        server_pid = kids[0] if len(kids) == 1 else None
        report["server_pid"] = server_pid
        for step in plan["steps"]:
            op = step["op"]
            out = {"op": op}
            t0 = time.monotonic()
            if op == "list_tools":
                r = await client.list_tools()
                out["tools"] = [t.model_dump(by_alias=True, exclude_none=True) for t in r.tools]
            elif op == "call":
                progress = []
                args = step.get("args", {})
                if args.get("edit_id") == "$LAST_EDIT_ID":
                    # The id of the edit staged by the last ast_edit step.
                    args = dict(args, edit_id=last_edit_id)
                    out["resolved_edit_id"] = last_edit_id

                async def on_progress(value, total, message):
                    progress.append({"progress": value, "total": total, "message": message})

                cb = on_progress if step.get("progress") else None
                out["cancelled"] = False
                try:
                    if "cancel_after" in step:
                        with anyio.move_on_after(step["cancel_after"]) as scope:
                            r = await client.call_tool(step["tool"], args, progress_callback=cb)
                        if scope.cancelled_caught:
                            out["cancelled"] = True
                            r = None
                    else:
                        r = await client.call_tool(
                            step["tool"],
                            args,
                            read_timeout_seconds=step.get("timeout"),
                            progress_callback=cb,
                        )
                    if r is not None:
                        out["is_error"] = bool(r.is_error)
                        out["content"] = [content_json(c) for c in r.content]
                        out["structured"] = r.structured_content
                        if step["tool"] == "ast_edit":
                            last_edit_id = staged_edit_id(r)
                except Exception as e:  # a protocol error: record it
                    out["protocol_error"] = f"{type(e).__name__}: {e}"
                out["progress"] = progress
            elif op == "processes":
                out["server_pid"] = server_pid
                out["descendants"] = descendants(server_pid) if server_pid else []
                seen_pids.update(out["descendants"])
            elif op == "sleep":
                await asyncio.sleep(step["seconds"])
            elif op == "await_log":
                deadline = time.monotonic() + step["timeout"]
                found = False
                while not found and time.monotonic() < deadline:
                    found = any(m["logger"] == step["logger"] for m in report["log"])
                    if not found:
                        log_arrived.clear()
                        with anyio.move_on_after(max(0.0, deadline - time.monotonic())):
                            await log_arrived.wait()
                out["found"] = found
            else:
                raise SystemExit(f"unknown step {op}")
            out["seconds"] = round(time.monotonic() - t0, 3)
            report["steps"].append(out)
            if server_pid:
                seen_pids.update(descendants(server_pid))
        close_started = time.monotonic()
    # The SDK closes the server's stdin and waits up to 2 s for it to exit
    # on its own before it terminates the process tree; a fast close means
    # the server cleaned up by itself.
    report["close_seconds"] = round(time.monotonic() - close_started, 3)
    report["session_seconds"] = round(time.monotonic() - started, 3)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        left = [p for p in sorted(seen_pids) if alive(p)]
        if not left and not (server_pid and alive(server_pid)):
            break
        await asyncio.sleep(0.05)
    report["seen_descendants"] = sorted(seen_pids)
    report["alive_after_close"] = [p for p in sorted(seen_pids) if alive(p)]
    report["server_alive_after_close"] = bool(server_pid and alive(server_pid))
    return report


def main():
    with open(sys.argv[1]) as f:
        plan = json.load(f)
    report = anyio.run(run, plan)
    json.dump(report, sys.stdout, default=str)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
