# The Python kernel driver of agent-tools `eval`.
#
# Run by the host as `python -c <this file>`. The protocol is newline-delimited
# JSON: requests arrive on fd 3, replies leave on fd 4. The cell's own stdout
# and stderr stay on fd 1 and 2 (so output of subprocesses and C extensions is
# captured too); the driver only writes small markers there, so the host knows
# where each cell's output begins and ends (its frame) and where a display sits.
#
# Everything of the driver lives inside `_Kernel`, so the user's namespace
# (a fresh `__main__`) holds only what the cells define.

import builtins
import json
import os
import sys
import threading


class _Kernel:
    MAX_IMAGE_PX = 1568  # the host's IMAGE_MAX_SIDE: figures are drawn within it
    TABLE_ROWS = 40
    TABLE_COLS = 20
    LINE_MAGICS = ("pip", "cd", "pwd", "env", "time", "timeit", "matplotlib")
    CELL_MAGICS = ("bash", "sh", "timeit", "capture", "writefile")

    def __init__(self):
        import queue
        import types

        self.to_host = 4
        self.write_lock = threading.Lock()
        self.requests = queue.Queue()
        self.calls = {}
        self.call_seq = 0
        self.call_lock = threading.Lock()
        self.cell = 0
        self.display_seq = 0
        self.capture_stack = []
        self.loop = None
        self.prev_dir = None
        for fd in (3, 4):
            os.set_inheritable(fd, False)
        # Interrupts are KeyboardInterrupt even when the harness was started
        # with SIGINT ignored (a background job of a shell): Python keeps an
        # inherited SIG_IGN, and the cell could then never be interrupted.
        import signal

        signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            os.close(5)  # the interrupt pipe is for the JavaScript kernel only
        except OSError:
            pass
        main = types.ModuleType("__main__")
        main.__builtins__ = builtins
        sys.modules["__main__"] = main
        self.ns = main.__dict__
        sys.argv = [""]
        if "" not in sys.path:
            sys.path.insert(0, "")
        # Agg for this process and any Python it starts; plt.show() is
        # routed to display by the import hook below.
        os.environ["MPLBACKEND"] = "Agg"
        sys.meta_path.insert(0, _PyplotHook(self))
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.reconfigure(line_buffering=True, errors="backslashreplace")
            except Exception:
                pass
        # A flood written through sys.stdout/sys.stderr is capped here, before
        # the pipe (output written to fd 1 and 2 directly is capped by the host).
        self.gates = [_StreamGate(sys.stdout, self), _StreamGate(sys.stderr, self)]
        sys.stdout, sys.stderr = self.gates
        builtins.display = self.display
        builtins.tool = self.tool
        builtins.ToolError = ToolError
        builtins._agent_kernel = self

    # ---- protocol ----------------------------------------------------------

    def send(self, msg):
        data = (json.dumps(msg, separators=(",", ":"), default=str) + "\n").encode()
        with self.write_lock:
            view = memoryview(data)
            while view:
                n = os.write(self.to_host, view)
                view = view[n:]

    def read_requests(self):
        with os.fdopen(3, "rb") as f:
            for line in f:
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if msg.get("type") == "tool_result":
                    slot = self.calls.get(msg.get("id"))
                    if slot is not None:
                        slot[1] = msg
                        slot[0].set()
                else:
                    self.requests.put(msg)
        self.requests.put(None)

    def marker(self, kind, *parts):
        tail = ";".join(str(p) for p in parts)
        return ("\x1b]agent-eval;%s;%s\x07" % (kind, tail)).encode()

    def flush_streams(self):
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            try:
                stream.flush()
            except Exception:
                pass

    def serve(self):
        threading.Thread(target=self.read_requests, name="agent-eval-reader", daemon=True).start()
        self.send(
            {
                "type": "ready",
                "language": "python",
                "version": sys.version.split()[0],
                "executable": sys.executable,
                "pid": os.getpid(),
            }
        )
        while True:
            try:
                msg = self.requests.get()
            except KeyboardInterrupt:
                continue  # a late interrupt between cells
            if msg is None:
                self.flush_streams()
                os._exit(0)
            if msg.get("type") == "inspect":
                self.answer_inspect(msg)
            elif msg.get("type") == "exec":
                self.done_sent = False
                while True:
                    try:
                        if not self.done_sent:
                            self.run_cell(msg)
                        break
                    except KeyboardInterrupt:
                        # An interrupt that landed after the cell itself ended
                        # (while its output was being finished): finish it again.
                        msg = dict(msg, code="raise KeyboardInterrupt")

    # ---- what the kernel holds ---------------------------------------------

    def answer_inspect(self, msg):
        try:
            variables, total = self.user_variables(int(msg.get("max") or 100))
            reply = {"type": "inspect", "variables": variables, "total": total}
        except BaseException as e:  # a stray interrupt too: the kernel stays up
            reply = {"type": "inspect", "variables": [], "total": 0, "error": "%s: %s" % (type(e).__name__, e)}
        self.send(reply)

    def user_variables(self, limit):
        """The names the cells defined, in definition order: modules, what was
        imported from them, and `_`-names (the kernel's and the user's
        private ones) are left out; at most `limit` are described."""
        import inspect
        import types

        out, total = [], 0
        for name, value in list(self.ns.items()):
            if name.startswith("_") or isinstance(value, types.ModuleType):
                continue
            if (inspect.isroutine(value) or inspect.isclass(value)) and getattr(value, "__module__", None) != "__main__":
                continue
            total += 1
            if len(out) < limit:
                out.append(self.describe_variable(name, value))
        return out, total

    def describe_variable(self, name, value):
        import inspect

        cls = type(value)
        module = getattr(cls, "__module__", "") or ""
        kind = cls.__qualname__ if module in ("builtins", "__main__") else "%s.%s" % (module.split(".")[0], cls.__qualname__)
        detail = None
        try:
            if inspect.isclass(value):
                kind, detail = "class", "%s%s" % (name, _signature(value))
            elif inspect.isroutine(value):
                detail = "%s%s" % (name, _signature(value))
            elif value is None or isinstance(value, (bool, int, float, complex)):
                detail = "= %s" % _cap_text(repr(value), 60)
            elif isinstance(value, str) and len(value) <= 60:
                detail = "= %r" % (value,)
            elif isinstance(getattr(value, "shape", None), tuple):
                detail = "shape (%s)" % ", ".join(str(n) for n in value.shape)
            elif hasattr(cls, "__len__"):
                detail = "len %d" % len(value)
        except Exception:
            pass
        return {"name": name, "type": kind, "detail": detail}

    # ---- cells -------------------------------------------------------------

    def run_cell(self, msg):
        self.cell = msg["cell"]
        self.display_seq = 0
        self.capture_stack = []
        status, error = "ok", None
        # Open the cell's frame: what was written before is not this cell's.
        self.flush_streams()
        for fd in (1, 2):
            try:
                os.write(fd, self.marker("begin", self.cell))
            except OSError:
                pass
        for gate in self.gates:
            gate.open(self.cell, msg.get("max_output_bytes") or 0)
        try:
            try:
                self.run_code(msg["code"], "<cell %d>" % self.cell, echo=True)
            finally:
                self.emit_figures()
                for gate in self.gates:
                    gate.close()
        except KeyboardInterrupt as e:
            status, error = "interrupted", self.format_error(e)
        except _MagicError as e:
            status, error = "error", "MagicError: %s" % e
        except BaseException as e:  # SystemExit too: the kernel stays up
            status, error = "error", self.format_error(e)
        self.flush_streams()
        for fd in (1, 2):
            try:
                os.write(fd, self.marker("end", self.cell))
            except OSError:
                pass
        self.send({"type": "done", "cell": self.cell, "status": status, "error": error})
        self.done_sent = True

    def run_code(self, code, filename, echo):
        import ast
        import linecache

        src = self.rewrite(code)
        linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
        flags = ast.PyCF_ONLY_AST | getattr(ast, "PyCF_ALLOW_TOP_LEVEL_AWAIT", 0)
        tree = compile(src, filename, "exec", flags)
        last = None
        if echo and tree.body and isinstance(tree.body[-1], ast.Expr) and not _ends_with_semicolon(src):
            last = ast.Expression(tree.body.pop().value)
        run_flags = getattr(ast, "PyCF_ALLOW_TOP_LEVEL_AWAIT", 0)
        self.run_compiled(compile(tree, filename, "exec", run_flags))
        if last is not None:
            value = self.run_compiled(compile(last, filename, "eval", run_flags))
            if value is not None:
                self.ns["_"] = value
                self.emit_display(self.render(value), echo=True)

    def run_compiled(self, code):
        import inspect

        if code.co_flags & inspect.CO_COROUTINE:
            import asyncio

            if self.loop is None or self.loop.is_closed():
                self.loop = asyncio.new_event_loop()
            return self.loop.run_until_complete(eval(code, self.ns))
        return eval(code, self.ns)

    def format_error(self, e):
        import traceback

        tb = e.__traceback__
        # Drop the driver's own frames: the traceback starts at the user's.
        while tb is not None and not tb.tb_frame.f_code.co_filename.startswith("<cell "):
            tb = tb.tb_next
        return "".join(traceback.format_exception(type(e), e, tb)).rstrip()

    # ---- display -----------------------------------------------------------

    def display(self, *objs, **_kwargs):
        """Show each object in the cell's result, where it is called."""
        for obj in objs:
            self.emit_display(self.render(obj))

    def emit_display(self, rendered, echo=False):
        if self.capture_stack:
            self.capture_stack[-1].outputs.append(rendered)
            return
        self.display_seq += 1
        self.flush_streams()
        msg = {"type": "display", "cell": self.cell, "seq": self.display_seq, "echo": echo}
        msg.update(rendered)
        self.send(msg)
        if not echo:
            os.write(1, self.marker("display", self.cell, self.display_seq))

    def render(self, obj):
        """A dict with `text` and `images` (mime, base64) for one object."""
        try:
            return self._render(obj)
        except Exception as e:  # a broken _repr_ must not break the cell
            return {"text": "%s  (display failed: %s)" % (_safe_repr(obj), e), "images": []}

    def _render(self, obj):
        import base64

        if isinstance(obj, ToolResult):
            imgs = [{"mime": m, "data": base64.b64encode(d).decode()} for m, d in obj.images]
            return {"text": str(obj) or None, "images": imgs}
        cls = type(obj)
        module = getattr(cls, "__module__", "") or ""
        if (module == "pandas" or module.startswith("pandas.")) and cls.__name__ in ("DataFrame", "Series"):
            return {"text": self.table(obj), "images": []}
        if module.startswith("matplotlib.") and cls.__name__ == "Figure":
            png, original = self.figure_png(obj)
            try:
                import matplotlib.pyplot as plt

                plt.close(obj)
            except Exception:
                pass
            return {"text": None, "images": [self.png_item(png, original)]}
        for name in ("_repr_png_", "_repr_jpeg_"):
            method = getattr(obj, name, None)
            if callable(method) and not isinstance(obj, type):
                data = method()
                if isinstance(data, tuple):
                    data = data[0]
                if data:
                    if isinstance(data, str):
                        data = base64.b64decode(data)
                    mime = "image/png" if name == "_repr_png_" else "image/jpeg"
                    return {"text": None, "images": [self.image_item(data, mime)]}
        method = getattr(obj, "_repr_markdown_", None)
        if callable(method) and not isinstance(obj, type):
            md = method()
            if isinstance(md, tuple):
                md = md[0]
            if md:
                return {"text": md, "images": []}
        method = getattr(obj, "_repr_html_", None)
        if callable(method) and not isinstance(obj, type):
            html = method()
            if isinstance(html, tuple):
                html = html[0]
            if html:
                return {"text": html_to_text(html), "images": []}
        if isinstance(obj, (dict, list, tuple, set)) and len(repr(obj)) > 100:
            import pprint

            return {"text": pprint.pformat(obj, width=100, sort_dicts=False), "images": []}
        return {"text": _safe_repr(obj), "images": []}

    def table(self, obj):
        """A pandas DataFrame or Series as a plain-text table with its shape."""
        rows = self.TABLE_ROWS
        if type(obj).__name__ == "DataFrame":
            n, m = obj.shape
            head = "DataFrame: %d rows × %d columns" % (n, m)
            body = obj.to_string(max_rows=rows, min_rows=min(rows, 20), max_cols=self.TABLE_COLS, max_colwidth=60)
            notes = []
            if n > rows:
                notes.append("first 10 and last 10 of %d rows shown" % n)
            if m > self.TABLE_COLS:
                notes.append("%d of %d columns shown" % (self.TABLE_COLS, m))
            tail = ("\n(" + "; ".join(notes) + " — use .head(), .iloc[...] or .to_string() for more)") if notes else ""
            return head + "\n" + body + tail
        n = len(obj)
        name = "" if obj.name is None else " %r" % (obj.name,)
        head = "Series%s: %d rows, dtype %s" % (name, n, obj.dtype)
        body = obj.to_string(max_rows=rows, min_rows=min(rows, 20))
        tail = ("\n(first 10 and last 10 of %d rows shown — use .head(), .iloc[...] or .to_string() for more)" % n) if n > rows else ""
        return head + "\n" + body + tail

    # ---- images ------------------------------------------------------------

    def png_item(self, data, original=None):
        item = self.image_item(data, "image/png")
        if original:
            item["original"] = original
        return item

    def image_item(self, data, mime):
        """An image as it is: the host fits it into the answer's budget
        (1568 px a side, 1 MiB), downscaling it or saving it to a file."""
        import base64

        return {"mime": mime, "data": base64.b64encode(data).decode()}

    def figure_png(self, fig):
        """The figure as PNG within MAX_IMAGE_PX a side, and its natural size
        in pixels when it had to be drawn smaller."""
        import io

        w, h = fig.get_size_inches()
        natural = (int(round(w * fig.dpi)), int(round(h * fig.dpi)))
        dpi = min(float(fig.dpi), self.MAX_IMAGE_PX / max(w, h, 0.01))
        for _ in range(3):
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
            data = buf.getvalue()
            pw, ph = _png_size(data)
            if max(pw, ph) <= self.MAX_IMAGE_PX:
                break
            dpi *= 0.95 * self.MAX_IMAGE_PX / max(pw, ph)
        original = {"width": natural[0], "height": natural[1]} if dpi < float(fig.dpi) else None
        return data, original

    def emit_figures(self):
        """Every open matplotlib figure, as images; then they are closed."""
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is None:
            return
        try:
            nums = plt.get_fignums()
        except Exception:
            return
        for num in nums:
            try:
                fig = plt.figure(num)
                self.emit_display({"text": None, "images": [self.png_item(*self.figure_png(fig))]})
            except Exception as e:
                print("figure %s could not be rendered: %s" % (num, e), file=sys.stderr)
        try:
            plt.close("all")
        except Exception:
            pass

    # ---- the tool bridge ---------------------------------------------------

    def tool(self, name, args=None, **kwargs):
        """Call one of the run's tools, exactly as the model would: tool("read", {"path": "a.py"})."""
        if args is None:
            args = kwargs
        elif kwargs:
            args = dict(args, **kwargs)
        with self.call_lock:
            self.call_seq += 1
            call_id = self.call_seq
        slot = [threading.Event(), None]
        self.calls[call_id] = slot
        try:
            self.send({"type": "tool_call", "cell": self.cell, "id": call_id, "name": str(name), "args": args})
            slot[0].wait()
        finally:
            self.calls.pop(call_id, None)
        reply = slot[1]
        if reply.get("ok"):
            return ToolResult(reply)
        raise ToolError(reply.get("kind", "failed"), reply.get("message", "failed: the tool call failed"))

    # ---- IPython idioms ----------------------------------------------------

    def rewrite(self, code):
        """IPython idioms rewritten into plain Python calls on this kernel."""
        import re

        lines = code.split("\n")
        first = 0
        while first < len(lines) and not lines[first].strip():
            first += 1
        if first < len(lines) and lines[first].lstrip().startswith("%%"):
            head = lines[first].strip()[2:]
            name, _, rest = head.partition(" ")
            if name not in self.CELL_MAGICS:
                raise _MagicError(self.unknown_magic("%%" + name))
            body = "\n".join(lines[first + 1 :])
            return "_agent_kernel.cell_magic(%r, %r, %r)\n" % (name, rest.strip(), body)
        if "%" not in code and "!" not in code:
            return code
        try:  # a cell that already compiles has no magics (a `%` line inside a string)
            import ast

            compile(code, "<check>", "exec", ast.PyCF_ONLY_AST | getattr(ast, "PyCF_ALLOW_TOP_LEVEL_AWAIT", 0))
            return code
        except SyntaxError:
            pass
        out = []
        target = r"[A-Za-z_][\w\.]*(?:\s*,\s*[A-Za-z_][\w\.]*)*"
        for line in lines:
            m = re.match(r"(\s*)(%s)\s*=\s*!(.*)$" % target, line)
            if m:
                out.append("%s%s = _agent_kernel.getoutput(%r)" % (m.group(1), m.group(2), m.group(3)))
                continue
            m = re.match(r"(\s*)(%s)\s*=\s*%%(\w+)\s?(.*)$" % target, line)
            if m:
                self.check_line_magic(m.group(3))
                out.append("%s%s = _agent_kernel.line_magic(%r, %r)" % (m.group(1), m.group(2), m.group(3), m.group(4)))
                continue
            m = re.match(r"(\s*)!(.*)$", line)
            if m:
                out.append("%s_agent_kernel.system(%r)" % (m.group(1), m.group(2)))
                continue
            m = re.match(r"(\s*)%%(\S*)", line)
            if m:
                raise _MagicError("cell magic %%%%%s must be on the first line of the cell" % m.group(2))
            m = re.match(r"(\s*)%(\w+)\s?(.*)$", line)
            if m:
                self.check_line_magic(m.group(2))
                out.append("%s_agent_kernel.line_magic(%r, %r)" % (m.group(1), m.group(2), m.group(3)))
                continue
            out.append(line)
        return "\n".join(out)

    def unknown_magic(self, name):
        return (
            "%s is not supported here; supported: line magics %s; cell magics (first line) %s; "
            "shell lines `!cmd` and `x = !cmd`. Write plain Python for anything else."
            % (
                name,
                ", ".join("%" + m for m in self.LINE_MAGICS),
                ", ".join("%%" + m for m in self.CELL_MAGICS),
            )
        )

    def check_line_magic(self, name):
        if name not in self.LINE_MAGICS:
            raise _MagicError(self.unknown_magic("%" + name))

    def expand(self, text, depth=2):
        """IPython's variable expansion in shell lines: {expr} and $name ($$ is a literal $)."""
        import re

        frame = sys._getframe(depth)
        scope = dict(self.ns)
        scope.update(frame.f_locals)

        def brace(m):
            try:
                return str(eval(m.group(1), scope))
            except Exception:
                return m.group(0)

        def dollar(m):
            if m.group(0) == "$$":
                return "$"
            name = m.group(1)
            return str(scope[name]) if name in scope else m.group(0)

        text = re.sub(r"(?<!\{)\{([^{}]+)\}(?!\})", brace, text)
        return re.sub(r"\$\$|\$([A-Za-z_]\w*)", dollar, text)

    def system(self, cmd):
        import subprocess

        cmd = self.expand(cmd)
        self.flush_streams()
        subprocess.run(cmd, shell=True, executable="/bin/sh" if os.path.exists("/bin/sh") else None)

    def getoutput(self, cmd):
        import subprocess

        cmd = self.expand(cmd)
        self.flush_streams()
        out = subprocess.run(cmd, shell=True, stdout=subprocess.PIPE, text=True, errors="replace").stdout
        return ShellLines(out.splitlines())

    def line_magic(self, name, arg):
        arg = self.expand(arg)
        return getattr(self, "magic_" + name)(arg.strip())

    def magic_matplotlib(self, arg):
        # `%matplotlib inline` and friends: figures already come back as images.
        return None

    def magic_pwd(self, arg):
        return os.getcwd()

    def magic_cd(self, arg):
        if arg == "-":
            if self.prev_dir is None:
                raise _MagicError("%cd -: no previous directory")
            target = self.prev_dir
        else:
            target = os.path.expanduser(arg or "~")
        here = os.getcwd()
        os.chdir(target)
        self.prev_dir = here
        print(os.getcwd())

    def magic_env(self, arg):
        if not arg:
            return dict(os.environ)
        if "=" in arg:
            key, _, value = arg.partition("=")
        elif " " in arg:
            key, _, value = arg.partition(" ")
        else:
            if arg not in os.environ:
                raise _MagicError("%%env: %s is not set" % arg)
            return os.environ[arg]
        key, value = key.strip(), value.strip()
        os.environ[key] = value
        print("env: %s=%s" % (key, value))

    def magic_time(self, stmt):
        import ast
        import time

        src = self.rewrite(stmt)
        try:
            code, is_expr = compile(src, "<cell %d>" % self.cell, "eval"), True
        except SyntaxError:
            code, is_expr = compile(src, "<cell %d>" % self.cell, "exec"), False
        del ast
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            value = eval(code, self.ns)
        finally:
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            print("CPU times: total: %s\nWall time: %s" % (_fmt_time(cpu), _fmt_time(wall)))
        return value if is_expr else None

    def _timeit(self, stmt, setup, opts):
        import statistics
        import timeit

        timer = timeit.Timer(stmt, setup, globals=self.ns)
        number = opts.get("n")
        repeat = opts.get("r", 7)
        if number is None:
            number, took = timer.autorange()
            # Keep the whole measurement to a few seconds.
            if took * repeat > 5:
                repeat = max(1, int(5 / max(took, 1e-9)))
        runs = [t / number for t in timer.repeat(repeat=repeat, number=number)]
        mean = statistics.mean(runs)
        dev = statistics.pstdev(runs) if len(runs) > 1 else 0.0
        print(
            "%s ± %s per loop (mean ± std. dev. of %d run%s, %d loop%s each)"
            % (_fmt_time(mean), _fmt_time(dev), repeat, "" if repeat == 1 else "s", number, "" if number == 1 else "s")
        )

    def _timeit_opts(self, arg):
        import shlex

        words = shlex.split(arg)
        opts, rest = {}, []
        i = 0
        while i < len(words):
            w = words[i]
            if w in ("-n", "-r") and i + 1 < len(words):
                opts[w[1]] = int(words[i + 1])
                i += 2
                continue
            if w.startswith("-n") and w[2:].isdigit() or w.startswith("-r") and w[2:].isdigit():
                opts[w[1]] = int(w[2:])
            else:
                rest.append(w)
            i += 1
        return opts, " ".join(rest)

    def magic_timeit(self, arg):
        opts, stmt = self._timeit_opts(arg)
        if not stmt:
            raise _MagicError("%timeit needs a statement: %timeit sum(range(100))")
        self._timeit(self.rewrite(stmt), "pass", opts)

    def cell_magic(self, name, arg, body):
        if name in ("bash", "sh"):
            import subprocess

            self.flush_streams()
            shell = "bash" if name == "bash" else "sh"
            rc = subprocess.run([shell], input=body.encode()).returncode
            if rc:
                print("(%s exited with status %d)" % (shell, rc), file=sys.stderr)
            return None
        if name == "timeit":
            opts, setup = self._timeit_opts(arg)
            self._timeit(body, setup or "pass", opts)
            return None
        if name == "writefile":
            import shlex

            words = shlex.split(arg)
            append = "-a" in words or "--append" in words
            paths = [w for w in words if w not in ("-a", "--append")]
            if len(paths) != 1:
                raise _MagicError("%%writefile needs one path: %%writefile [-a] path")
            path = os.path.expanduser(paths[0])
            existed = os.path.exists(path)
            with open(path, "a" if append else "w") as f:
                f.write(body if body.endswith("\n") else body + "\n")
            print("%s %s" % ("Appending to" if append else ("Overwriting" if existed else "Writing"), paths[0]))
            return None
        if name == "capture":
            return self.capture(arg, body)
        raise _MagicError(self.unknown_magic("%%" + name))

    def capture(self, arg, body):
        import contextlib
        import io

        words = arg.split()
        var = next((w for w in words if not w.startswith("-")), None)
        out, err = io.StringIO(), io.StringIO()
        captured = CapturedIO(out, err)
        self.capture_stack.append(captured)
        try:
            with contextlib.ExitStack() as stack:
                if "--no-stdout" not in words:
                    stack.enter_context(contextlib.redirect_stdout(out))
                if "--no-stderr" not in words:
                    stack.enter_context(contextlib.redirect_stderr(err))
                self.run_code(body, "<cell %d>" % self.cell, echo=False)
        finally:
            self.capture_stack.pop()
        if var:
            self.ns[var] = captured
        return None

    def magic_pip(self, arg):
        import shlex
        import subprocess

        argv = shlex.split(arg)
        before = _distributions()
        self.flush_streams()
        rc = subprocess.run([sys.executable, "-m", "pip"] + argv).returncode
        if not argv or argv[0] not in ("install", "uninstall"):
            return None
        after = _distributions()
        changed = [n for n in set(before) | set(after) if before.get(n, (None,))[0] != after.get(n, (None,))[0]]
        tops = set()
        for n in changed:
            tops |= before.get(n, (None, set()))[1] | after.get(n, (None, set()))[1]
        purged = []
        for mod in list(sys.modules):
            if mod.split(".")[0] in tops:
                del sys.modules[mod]
                purged.append(mod)
        import importlib

        importlib.invalidate_caches()
        self.flush_streams()
        if rc:
            print("(pip exited with status %d)" % rc, file=sys.stderr)
        if changed:
            names = sorted(after.get(n, before.get(n))[2] for n in changed)
            print(
                "Changed distributions: %s; %d module%s purged from sys.modules%s, so the next import loads the new code."
                % (
                    ", ".join(names),
                    len(purged),
                    "" if len(purged) == 1 else "s",
                    (" (" + ", ".join(sorted(m for m in purged if "." not in m)) + ")") if purged else "",
                )
            )
        return None


def _distributions():
    """{normalized name: (version, top-level modules, display name)} of installed distributions."""
    import re

    try:
        from importlib import metadata
    except ImportError:
        return {}
    out = {}
    for dist in metadata.distributions():
        try:
            name = dist.metadata["Name"]
        except Exception:
            continue
        if not name:
            continue
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in out:
            continue  # shadowed: the first on sys.path is the one imports see
        tops = set()
        text = None
        try:
            text = dist.read_text("top_level.txt")
        except Exception:
            pass
        if text:
            tops |= {t.strip() for t in text.split() if t.strip()}
        for f in dist.files or ():
            parts = f.parts
            if not parts or parts[0].endswith((".dist-info", ".egg-info", ".data")) or parts[0] in ("..", "__pycache__"):
                continue
            if len(parts) == 1:
                stem = parts[0].split(".")[0]
                if parts[0].endswith((".py", ".so", ".pyd")) and stem:
                    tops.add(stem)
            else:
                tops.add(parts[0])
        out[key] = (dist.version, tops, name)
    return out


def _ends_with_semicolon(src):
    lines = [line for line in src.rstrip().split("\n")]
    last = lines[-1].split("#")[0].rstrip() if lines else ""
    return last.endswith(";")


def _signature(fn):
    import inspect

    try:
        return _cap_text(str(inspect.signature(fn)), 80)
    except (TypeError, ValueError):
        return "(…)"


def _cap_text(text, n):
    return text if len(text) <= n else text[: n - 1] + "…"


def _safe_repr(obj):
    try:
        return repr(obj)
    except Exception as e:
        return "<%s object (repr failed: %s)>" % (type(obj).__name__, e)


def _fmt_time(seconds):
    if seconds >= 1:
        return "%.3g s" % seconds
    if seconds >= 1e-3:
        return "%.3g ms" % (seconds * 1e3)
    if seconds >= 1e-6:
        return "%.3g µs" % (seconds * 1e6)
    return "%.3g ns" % (seconds * 1e9)


def _png_size(data):
    if len(data) >= 24 and data[:8] == b"\x89PNG\r\n\x1a\n":
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    return 0, 0


def html_to_text(html):
    """Readable text from an HTML fragment: block tags break lines, table cells are separated."""
    from html.parser import HTMLParser

    class _Text(HTMLParser):
        BLOCK = {"p", "div", "br", "tr", "li", "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "pre", "ul", "ol"}

        def __init__(self):
            super().__init__(convert_charrefs=True)
            self.parts = []
            self.skip = 0
            self.cells = 0

        def handle_starttag(self, tag, attrs):
            if tag in ("style", "script"):
                self.skip += 1
            elif tag in self.BLOCK:
                self.parts.append("\n")
                self.cells = 0
            elif tag in ("td", "th"):
                if self.cells:
                    self.parts.append(" | ")
                self.cells += 1

        def handle_endtag(self, tag):
            if tag in ("style", "script"):
                self.skip = max(0, self.skip - 1)
            elif tag in self.BLOCK:
                self.parts.append("\n")

        def handle_data(self, data):
            if not self.skip:
                self.parts.append(data if data.strip() else " " if data else "")

    p = _Text()
    p.feed(html)
    p.close()
    text = "".join(p.parts)
    lines = [" ".join(line.split()) for line in text.split("\n")]
    return "\n".join(line for line in lines if line)


class ToolError(Exception):
    """A bridged tool call failed; `kind` is bad_arguments, refused, unknown_tool, …

    The message already starts with the kind in words ("refused: …"), so it is
    the whole text of the exception: the kind is said once."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind
        self.message = message


class ToolResult(str):
    """The text of a tool's result, with `.images` [(mime, bytes)] and `.structured` (JSON or None)."""

    def __new__(cls, reply):
        import base64

        self = super().__new__(cls, reply.get("text") or "")
        self.images = [(i["mime"], base64.b64decode(i["data"])) for i in reply.get("images") or []]
        self.structured = reply.get("structured")
        return self

    @property
    def text(self):
        return str(self)


class ShellLines(list):
    """The lines `x = !cmd` captured; `.s` joins them with spaces, `.n` with newlines."""

    @property
    def s(self):
        return " ".join(self)

    @property
    def n(self):
        return "\n".join(self)


class CapturedIO:
    """What `%%capture var` caught: `.stdout`, `.stderr`, `.outputs`; `.show()` replays it."""

    def __init__(self, out, err):
        self._out, self._err = out, err
        self.outputs = []

    @property
    def stdout(self):
        return self._out.getvalue()

    @property
    def stderr(self):
        return self._err.getvalue()

    def show(self):
        sys.stdout.write(self.stdout)
        sys.stderr.write(self.stderr)
        for rendered in self.outputs:
            builtins._agent_kernel.emit_display(rendered)

    def __repr__(self):
        return "<captured: %d bytes stdout, %d bytes stderr, %d outputs>" % (len(self.stdout), len(self.stderr), len(self.outputs))


class _StreamGate:
    """A cell's sys.stdout or sys.stderr, capped as it is written.

    Per cell the first `cap` bytes pass; after that only the last `cap` are
    held (written when the cell ends) and the rest is counted in `skipped`
    markers, at most every 200 ms (they also show the host the cell is
    alive). Between cells, and for bytes, it passes everything on. Any other
    attribute is the stream's own."""

    def __init__(self, stream, kernel):
        self._stream = stream
        self._kernel = kernel
        self._lock = threading.Lock()
        self._cap = None
        self._cell = 0

    def __getattr__(self, name):
        return getattr(self._stream, name)

    def open(self, cell, cap):
        with self._lock:
            self._cap = cap if cap > 0 else None
            self._cell, self._passed = cell, 0
            self._held, self._held_len, self._unreported, self._reported_at = [], 0, 0, 0.0

    def write(self, text):
        if self._cap is None or not isinstance(text, str):
            return self._stream.write(text)
        with self._lock:
            cap = self._cap
            if cap is None:
                return self._stream.write(text)
            rest = text
            room = cap - self._passed
            if room > 0:
                size = _nbytes(rest)
                if size <= room:
                    self._passed += size
                    return self._stream.write(rest)
                self._stream.write(rest[:room])
                rest = rest[room:]
            self._passed = cap
            if len(rest) > cap:
                self._unreported += _nbytes(rest[:-cap])
                rest = rest[-cap:]
            self._held.append(rest)
            self._held_len += len(rest)
            while len(self._held) > 1 and self._held_len - len(self._held[0]) >= cap:
                old = self._held.pop(0)
                self._held_len -= len(old)
                self._unreported += _nbytes(old)
            import time

            now = time.monotonic()
            if self._unreported and now - self._reported_at >= 0.2:
                self._report(now)
            return len(text)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def _report(self, now):
        self._stream.write(self._kernel.marker("skipped", self._cell, self._unreported).decode())
        self._unreported, self._reported_at = 0, now

    def close(self):
        """The held tail, trimmed to the cap, after the count of what was left out."""
        import time

        with self._lock:
            if self._cap is None:
                return
            if self._held_len > self._cap:
                excess = self._held_len - self._cap
                self._unreported += _nbytes(self._held[0][:excess])
                self._held[0] = self._held[0][excess:]
            if self._unreported:
                self._report(time.monotonic())
            if self._held:
                self._stream.write("".join(self._held))
            self._cap, self._held, self._held_len = None, [], 0


def _nbytes(text):
    return len(text) if text.isascii() else len(text.encode("utf-8", "backslashreplace"))


class _MagicError(Exception):
    pass


class _PyplotHook:
    """Routes plt.show() to display once matplotlib.pyplot is imported, wherever that happens."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.busy = False

    def find_spec(self, name, path=None, target=None):
        if name != "matplotlib.pyplot" or self.busy:
            return None
        import importlib.util

        self.busy = True
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self.busy = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader, kernel = spec.loader, self.kernel

        class _Loader:
            def create_module(self, spec):
                return loader.create_module(spec)

            def exec_module(self, module):
                loader.exec_module(module)
                try:
                    module.switch_backend("Agg")
                except Exception:
                    pass

                def show(*args, **kwargs):
                    kernel.emit_figures()

                module.show = show

        spec.loader = _Loader()
        return spec


_Kernel().serve()
