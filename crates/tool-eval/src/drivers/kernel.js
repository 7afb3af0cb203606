// The JavaScript (Node.js) kernel driver of agent-tools `eval`.
//
// Run by the host as `node -e <this file>`. The protocol is newline-delimited
// JSON: requests arrive on fd 3, replies leave on fd 4; fd 5 carries
// interrupts. The cell's own output stays on fd 1 and 2; the driver only writes
// small markers there (where a cell's output begins and ends, where a display
// sits).
//
// Cells run through the in-process inspector's Runtime.evaluate in REPL mode,
// the mode a browser console uses: top-level let/const/class persist (and may
// be declared again), and top-level await works. No port is opened.
'use strict';

(() => {
  const fs = require('fs');
  const path = require('path');
  const util = require('util');
  const inspector = require('inspector');
  const Module = require('module');
  const net = require('net');
  const { Worker } = require('worker_threads');

  // Our own copies of the protocol descriptors, close-on-exec, so programs the
  // cell starts do not inherit them.
  function reopen(fd, flags) {
    try {
      const copy = fs.openSync('/proc/self/fd/' + fd, flags);
      fs.closeSync(fd);
      return copy;
    } catch (_) {
      return fd;
    }
  }
  const fromHost = reopen(3, 'r');
  const toHost = reopen(4, 'w');
  const interrupts = reopen(5, 'r');

  const session = new inspector.Session();
  session.connect();
  const post = (method, params) =>
    new Promise((resolve, reject) =>
      session.post(method, params, (err, res) => (err ? reject(err) : resolve(res))));

  function send(msg) {
    const data = Buffer.from(JSON.stringify(msg) + '\n');
    let off = 0;
    while (off < data.length) {
      try {
        off += fs.writeSync(toHost, data, off);
      } catch (e) {
        if (e.code !== 'EAGAIN') throw e;
      }
    }
  }
  // The cell's output streams as the driver found them. On a pipe Node
  // queues writes and flushes them later, so the driver writes its markers
  // through the same streams (never around them): a marker then lands after
  // everything written before it, and a cell's `end` marker is only written
  // once its output left the queue.
  //
  // A flood is capped here, before it reaches the pipe: per cell and stream
  // the first `max_output_bytes` pass, then only the last `max_output_bytes`
  // are held (written at the cell's end) and the rest is counted in
  // `skipped` markers, at most every 200 ms (they also show the host the
  // cell is alive). Output of child processes bypasses this and is capped
  // by the host as it streams.
  function gate(stream) {
    const g = { stream, write: stream.write.bind(stream), cap: Infinity, passed: 0, held: [], heldBytes: 0, unreported: 0, reportedAt: 0, cell: 0 };
    stream.write = function (chunk, encoding, cb) {
      if (typeof encoding === 'function') {
        cb = encoding;
        encoding = undefined;
      }
      if (!cell || g.cap === Infinity) return g.write(chunk, encoding, cb);
      const isString = typeof chunk === 'string';
      const size = isString ? Buffer.byteLength(chunk, encoding) : chunk.byteLength;
      if (size === undefined) return g.write(chunk, encoding, cb);
      const room = g.cap - g.passed;
      if (size <= room) {
        g.passed += size;
        return g.write(chunk, encoding, cb);
      }
      let buf;
      if (isString) {
        // At least the last `cap` bytes of a long string are in its last `cap` characters.
        const start = Math.max(room, chunk.length - g.cap);
        buf = Buffer.from(chunk.slice(start), encoding);
        if (room > 0) g.write(chunk.slice(0, room), encoding);
        g.unreported += size - buf.length - Math.max(room, 0);
      } else {
        buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        if (room > 0) g.write(buf.subarray(0, room));
        buf = buf.subarray(Math.max(room, 0));
      }
      g.passed = g.cap;
      g.held.push(Buffer.from(buf));
      g.heldBytes += buf.length;
      while (g.held.length > 1 && g.heldBytes - g.held[0].length >= g.cap) {
        const old = g.held.shift();
        g.heldBytes -= old.length;
        g.unreported += old.length;
      }
      const now = Date.now();
      if (g.unreported > 0 && now - g.reportedAt >= 200) reportSkipped(g, now);
      if (cb) process.nextTick(cb);
      return true;
    };
    return g;
  }
  function reportSkipped(g, now) {
    g.write(marker('skipped', g.cell, g.unreported));
    g.unreported = 0;
    g.reportedAt = now;
  }
  function openGate(g, id, cap) {
    Object.assign(g, { cap: cap > 0 ? cap : Infinity, passed: 0, held: [], heldBytes: 0, unreported: 0, reportedAt: Date.now(), cell: id });
  }
  // The held tail, trimmed to the cap, after the count of what was left out.
  function closeGate(g) {
    if (g.heldBytes > g.cap) {
      const excess = g.heldBytes - g.cap;
      g.held[0] = g.held[0].subarray(excess);
      g.heldBytes -= excess;
      g.unreported += excess;
    }
    if (g.unreported > 0) reportSkipped(g, Date.now());
    if (g.heldBytes > 0) g.write(Buffer.concat(g.held));
    g.cap = Infinity;
    g.held = [];
    g.heldBytes = 0;
  }
  const cellStdout = gate(process.stdout);
  const cellStderr = gate(process.stderr);
  function writeTo(g, text) {
    return new Promise((resolve) => {
      try {
        g.write(text, () => resolve());
      } catch (_) {
        resolve();
      }
    });
  }
  const marker = (...parts) => '\x1b]agent-eval;' + parts.join(';') + '\x07';

  // ---- interrupts -----------------------------------------------------------
  // The host sends SIGINT and then a byte on fd 5. If the main thread is free,
  // its SIGINT handler ends the cell and acknowledges; if it is stuck in
  // synchronous code, the worker terminates the running script through the
  // inspector (the variables survive).
  const ack = new Int32Array(new SharedArrayBuffer(4));
  // The worker reads the pipe asynchronously (never blocked in a read), so
  // process.exit in a cell, which stops workers, is not held up by it.
  const workerSource = `
    const { workerData, parentPort } = require('worker_threads');
    const net = require('net');
    const inspector = require('inspector');
    const session = new inspector.Session();
    session.connectToMainThread();
    const fs = require('fs');
    // The main thread's CPU time in clock ticks (utime + stime), or null.
    function mainCpu() {
      try {
        const stat = fs.readFileSync('/proc/self/task/' + process.pid + '/stat', 'utf8');
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return Number(f[11]) + Number(f[12]);
      } catch (_) {
        return null;
      }
    }
    let asked = 0;
    const pipe = new net.Socket({ fd: workerData.fd, readable: true, writable: false });
    pipe.on('data', (bytes) => {
      for (let i = 0; i < bytes.length; i++) {
        asked += 1;
        // Wait for the main thread's SIGINT handler. Only a main thread that
        // keeps running (its CPU time grows) without handling it is stuck in
        // synchronous code: terminating anything else would kill the next
        // callback it runs (the handler itself, on a loaded machine that is
        // slow to schedule it) instead of the cell.
        const start = Date.now();
        const cpu0 = mainCpu();
        let seen;
        while ((seen = Atomics.load(workerData.ack, 0)) < asked) {
          Atomics.wait(workerData.ack, 0, seen, 50);
          if (Atomics.load(workerData.ack, 0) >= asked) break;
          const waited = Date.now() - start;
          if (waited < 250) continue;
          const cpu = mainCpu();
          if (cpu === null || cpu0 === null || cpu - cpu0 >= 5 || waited > 60000) {
            session.post('Runtime.terminateExecution');
            break;
          }
        }
      }
    });
    pipe.on('error', () => {});
    parentPort.postMessage('ready');`;
  // Started before the kernel says it is ready, so the first cell's idle
  // budget does not run while it boots (on a loaded machine that takes longer
  // than a short budget: the interrupt then came before the cell began, found
  // nothing to stop, and the cell ran on unstoppable). A cell runs only once
  // the watchdog is connected (else a first cell that never yields could not
  // be stopped: the main thread would be stuck before the worker exists). An
  // interrupt sent before it reads waits in the pipe.
  let watchdogReady = null;
  function startWatchdog() {
    if (watchdogReady) return watchdogReady;
    const worker = new Worker(workerSource, { eval: true, workerData: { fd: interrupts, ack } });
    worker.unref();
    worker.on('error', () => {});
    watchdogReady = new Promise((resolve) => {
      worker.once('message', resolve);
      worker.once('error', resolve);
      worker.once('exit', resolve);
      setTimeout(resolve, 5000).unref();
    });
    return watchdogReady;
  }

  let cell = null; // the running cell's state
  // `ack` counts the SIGINTs this thread handled; the worker compares it with
  // the interrupt bytes it read.
  process.on('SIGINT', () => {
    Atomics.add(ack, 0, 1);
    Atomics.notify(ack, 0);
    if (cell && cell.interrupt) cell.interrupt();
  });
  process.on('uncaughtException', (e) => {
    writeTo(cellStderr, 'Uncaught (in a callback): ' + ((e && e.stack) || util.inspect(e)) + '\n');
  });
  process.on('unhandledRejection', (e) => {
    writeTo(cellStderr, 'Unhandled promise rejection: ' + ((e && e.stack) || util.inspect(e)) + '\n');
  });

  // ---- what cells see -----------------------------------------------------
  const base = path.join(process.cwd(), '[eval]');
  globalThis.require = Module.createRequire(base);
  globalThis.module = { exports: {}, require: globalThis.require, id: '[eval]', filename: base };
  globalThis.exports = globalThis.module.exports;
  globalThis.__dirname = process.cwd();
  globalThis.__filename = base;
  const { pathToFileURL } = require('url');
  Object.defineProperty(globalThis, '__agent_import', {
    value: (spec) => {
      if (typeof spec === 'string' && (spec.startsWith('./') || spec.startsWith('../') || spec.startsWith('/'))) {
        spec = pathToFileURL(path.resolve(process.cwd(), spec)).href;
      } else if (typeof spec === 'string' && Module.builtinModules.includes(spec)) {
        spec = 'node:' + spec;
      } else if (typeof spec === 'string' && !spec.includes(':')) {
        // Bare specifiers resolve from the current directory, as require does.
        try {
          spec = pathToFileURL(Module.createRequire(path.join(process.cwd(), '[eval]')).resolve(spec)).href;
        } catch (_) {}
      }
      return import(spec);
    },
  });

  const pending = new Map();
  let callSeq = 0;
  class ToolResult {
    constructor(reply) {
      this.text = reply.text || '';
      this.images = (reply.images || []).map((i) => ({ mime: i.mime, data: Buffer.from(i.data, 'base64') }));
      this.structured = reply.structured === undefined ? null : reply.structured;
    }
    toString() {
      return this.text;
    }
    [util.inspect.custom]() {
      return this.text;
    }
  }
  // The message already starts with the kind in words ("refused: …"): the
  // kind is said once.
  class ToolError extends Error {
    constructor(kind, message) {
      super(message);
      this.name = 'ToolError';
      this.kind = kind;
    }
  }
  globalThis.ToolError = ToolError;
  /** Call one of the run's tools exactly as the model would: await tool("read", {path: "a.js"}). */
  globalThis.tool = (name, args = {}) =>
    new Promise((resolve, reject) => {
      const id = ++callSeq;
      pending.set(id, { resolve, reject });
      send({ type: 'tool_call', cell: cell ? cell.id : 0, id, name: String(name), args });
    });

  function isImage(v) {
    if (!(v instanceof Uint8Array) || v.length < 8) return null;
    if (v[0] === 0x89 && v[1] === 0x50 && v[2] === 0x4e && v[3] === 0x47) return 'image/png';
    if (v[0] === 0xff && v[1] === 0xd8) return 'image/jpeg';
    return null;
  }
  // The host fits an image into the answer's budget (downscaling it or saving
  // it to a file), so it goes as it is.
  function imageItem(mime, bytes) {
    const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
    return { mime, data: buf.toString('base64') };
  }
  function render(v) {
    if (v instanceof ToolResult) {
      return { text: v.text || null, images: v.images.map((i) => imageItem(i.mime, i.data)) };
    }
    const mime = isImage(v);
    if (mime) return { text: null, images: [imageItem(mime, v)] };
    if (v && typeof v === 'object' && typeof v.mime === 'string' && v.mime.startsWith('image/') && v.data) {
      const bytes = typeof v.data === 'string' ? Buffer.from(v.data, 'base64') : v.data;
      return { text: null, images: [imageItem(v.mime, bytes)] };
    }
    if (typeof v === 'string') return { text: v, images: [] };
    return { text: util.inspect(v, { depth: 4, maxArrayLength: 100, maxStringLength: 10000, breakLength: 100 }), images: [] };
  }
  function emitDisplay(rendered, echo) {
    if (!cell) return;
    cell.seq += 1;
    send(Object.assign({ type: 'display', cell: cell.id, seq: cell.seq, echo: !!echo }, rendered));
    if (!echo) writeTo(cellStdout, marker('display', cell.id, cell.seq));
  }
  /** Show each value in the cell's result, where it is called. */
  globalThis.display = (...values) => {
    for (const v of values) emitDisplay(render(v), false);
  };

  // ---- cells --------------------------------------------------------------
  const captureKey = '__agent_capture_' + process.pid;
  async function materialize(remote) {
    if (remote.objectId) {
      await post('Runtime.callFunctionOn', {
        objectId: remote.objectId,
        functionDeclaration: `function () { 'use strict'; globalThis[${JSON.stringify(captureKey)}] = this; }`,
      });
      const v = globalThis[captureKey];
      delete globalThis[captureKey];
      return v;
    }
    if (remote.type === 'undefined') return undefined;
    if ('unserializableValue' in remote) {
      const u = remote.unserializableValue;
      if (u.endsWith('n')) return BigInt(u.slice(0, -1));
      return u === '-0' ? -0 : Number(u);
    }
    return remote.value;
  }
  function trimStack(stack, id) {
    const lines = String(stack).split('\n');
    const out = [];
    for (const line of lines) {
      if (/^\s+at /.test(line) && (line.includes('node:inspector') || line.includes('[eval]') || line.includes('__agent_'))) break;
      out.push(line);
    }
    return out.join('\n');
  }
  async function describeError(details, code, id) {
    let value;
    try {
      value = details.exception ? await materialize(details.exception) : undefined;
    } catch (_) {}
    let text;
    if (value instanceof Error) {
      text = trimStack(value.stack || String(value), id);
      if (value instanceof SyntaxError || !/\n\s+at /.test(text)) {
        const lineNo = details.lineNumber + 1;
        const src = code.split('\n')[details.lineNumber];
        text += `\n    at cell${id}.js:${lineNo}` + (src !== undefined ? `\n  ${lineNo} | ${src}` : '');
        if (/Cannot use import statement/.test(text)) {
          text += "\n(static import is for modules: write `const m = await import('pkg')` or `const m = require('pkg')`)";
        }
      }
    } else if (details.exception) {
      text = 'Uncaught ' + util.inspect(value);
    } else {
      text = details.text || 'error';
    }
    return text;
  }
  // import() inside a REPL-mode script has no module loader; route it to ours.
  const rewriteImports = (code) => code.replace(/(^|[^\w$.])import\s*\(/g, '$1__agent_import(');

  async function runCell(msg) {
    const id = msg.cell;
    await startWatchdog();
    let interrupted;
    const interruptedP = new Promise((resolve) => (interrupted = resolve));
    cell = { id, seq: 0, interrupt: () => interrupted('interrupted') };
    // Open the cell's frame: what was written before is not this cell's.
    writeTo(cellStdout, marker('begin', id));
    writeTo(cellStderr, marker('begin', id));
    openGate(cellStdout, id, msg.max_output_bytes);
    openGate(cellStderr, id, msg.max_output_bytes);
    let status = 'ok';
    let error = null;
    try {
      const r = await Promise.race([
        post('Runtime.evaluate', {
          expression: rewriteImports(msg.code) + `\n//# sourceURL=cell${id}.js`,
          replMode: true,
          awaitPromise: true,
          objectGroup: 'cell',
        }),
        interruptedP,
      ]);
      if (r === 'interrupted') {
        status = 'interrupted';
        error = 'Interrupted: the cell was still waiting (on a promise or timer) when it was interrupted; ' +
          'pending callbacks may still run later';
      } else if (r.exceptionDetails) {
        status = 'error';
        error = await describeError(r.exceptionDetails, msg.code, id);
      } else {
        const value = await materialize(r.result);
        if (value !== undefined) {
          globalThis._ = value;
          emitDisplay(render(value), true);
        }
      }
    } catch (e) {
      if (/terminated/i.test(String(e && e.message))) {
        status = 'interrupted';
        error = 'Interrupted: the running script was terminated';
      } else {
        status = 'error';
        error = String((e && e.stack) || e);
      }
    }
    session.post('Runtime.releaseObjectGroup', { objectGroup: 'cell' }, () => {});
    cell = null;
    closeGate(cellStdout);
    closeGate(cellStderr);
    // Close the frame once the cell's queued output has gone out (an
    // interrupt meanwhile has nothing left to stop).
    await Promise.all([writeTo(cellStdout, marker('end', id)), writeTo(cellStderr, marker('end', id))]);
    send({ type: 'done', cell: id, status, error });
  }

  // ---- what the kernel holds ---------------------------------------------
  // The names the cells defined: top-level let/const/class (the REPL's lexical
  // scope) and properties they added to globalThis. The kernel's own globals,
  // `_`-names, modules and the functions taken from them are left out.
  let baseGlobals = null;
  function moduleValues() {
    const exports = new Set();
    for (const m of Object.values(require.cache)) if (m && m.exports) exports.add(m.exports);
    const loaded = new Set(process.moduleLoadList || []);
    for (const name of Module.builtinModules) {
      if (!loaded.has('NativeModule ' + name)) continue;
      try {
        exports.add(require(name));
      } catch (_) {}
    }
    const members = new Set();
    for (const e of exports) {
      if (e === null || (typeof e !== 'object' && typeof e !== 'function')) continue;
      for (const k of Object.keys(e)) {
        try {
          if (typeof e[k] === 'function') members.add(e[k]);
        } catch (_) {}
      }
    }
    return { exports, members };
  }
  function params(fn) {
    const src = Function.prototype.toString.call(fn);
    const m = /^class\b/.test(src) ? /constructor\s*\(([^)]*)\)/.exec(src) : /^[^(=]*\(([^)]*)\)/.exec(src);
    if (m) return m[1].replace(/\s+/g, ' ').trim();
    const arrow = /^\s*(?:async\s+)?([\w$]+)\s*=>/.exec(src);
    return arrow ? arrow[1] : /^class\b/.test(src) ? '' : '…';
  }
  function describeVariable(name, v) {
    const cap = (t, n) => (t.length <= n ? t : t.slice(0, n - 1) + '…');
    if (v === null) return { name, type: 'null', detail: null };
    switch (typeof v) {
      case 'undefined':
        return { name, type: 'undefined', detail: null };
      case 'number':
      case 'boolean':
        return { name, type: typeof v, detail: '= ' + String(v) };
      case 'bigint':
        return { name, type: 'bigint', detail: cap('= ' + String(v) + 'n', 62) };
      case 'string':
        return { name, type: 'string', detail: v.length <= 60 ? '= ' + JSON.stringify(v) : 'length ' + v.length };
      case 'symbol':
        return { name, type: 'symbol', detail: cap(String(v), 60) };
      case 'function': {
        const isClass = /^class\b/.test(Function.prototype.toString.call(v));
        return { name, type: isClass ? 'class' : 'function', detail: cap(name + '(' + params(v) + ')', 80) };
      }
    }
    let type = 'Object';
    try {
      type = (v.constructor && v.constructor.name) || 'Object';
    } catch (_) {}
    let detail = null;
    try {
      if (Array.isArray(v) || ArrayBuffer.isView(v)) detail = 'length ' + v.length;
      else if (v instanceof Map || v instanceof Set) detail = 'size ' + v.size;
      else if (v instanceof ArrayBuffer) detail = v.byteLength + ' bytes';
      else if (type === 'Object') detail = Object.keys(v).length + ' keys';
    } catch (_) {}
    return { name, type, detail };
  }
  async function userVariables(limit) {
    const { names } = await post('Runtime.globalLexicalScopeNames', {});
    const lexical = names.filter((n) => !n.startsWith('_'));
    const seen = new Set(lexical);
    const added = Object.getOwnPropertyNames(globalThis).filter((n) => !baseGlobals.has(n) && !n.startsWith('_') && !seen.has(n));
    // Lexical bindings are reachable only from a REPL-mode script.
    const reads = lexical.map((n) => `try { o.push([${JSON.stringify(n)}, ${n}]); } catch (_) {}`).join('\n');
    const r = await post('Runtime.evaluate', {
      expression: `(() => { const o = []; ${reads}\nreturn o; })()`,
      replMode: true,
      awaitPromise: true,
      objectGroup: 'inspect',
    });
    const pairs = r.exceptionDetails ? [] : (await materialize(r.result)) || [];
    session.post('Runtime.releaseObjectGroup', { objectGroup: 'inspect' }, () => {});
    for (const n of added) pairs.push([n, globalThis[n]]);
    const { exports, members } = moduleValues();
    const out = [];
    let total = 0;
    for (const [name, v] of pairs) {
      if ((v !== null && typeof v === 'object' && (exports.has(v) || Object.prototype.toString.call(v) === '[object Module]')) ||
          (typeof v === 'function' && (exports.has(v) || members.has(v)))) continue;
      total += 1;
      if (out.length < limit) out.push(describeVariable(name, v));
    }
    return { variables: out, total };
  }
  async function answerInspect(msg) {
    let reply;
    try {
      reply = Object.assign({ type: 'inspect' }, await userVariables(msg.max || 100));
    } catch (e) {
      reply = { type: 'inspect', variables: [], total: 0, error: String((e && e.message) || e) };
    }
    send(reply);
  }

  // Cells run one after another; bridged results arrive while one runs.
  const queue = [];
  let running = false;
  async function pump() {
    if (running) return;
    running = true;
    while (queue.length) await runCell(queue.shift());
    running = false;
  }
  function handle(msg) {
    if (msg.type === 'exec') {
      queue.push(msg);
      pump();
    } else if (msg.type === 'inspect') {
      answerInspect(msg);
    } else if (msg.type === 'tool_result') {
      const p = pending.get(msg.id);
      if (!p) return;
      pending.delete(msg.id);
      if (msg.ok) p.resolve(new ToolResult(msg));
      else p.reject(new ToolError(msg.kind || 'failed', msg.message || 'failed: the tool call failed'));
    }
  }

  const input = new net.Socket({ fd: fromHost, readable: true, writable: false });
  let buffered = '';
  input.setEncoding('utf8');
  input.on('data', (chunk) => {
    buffered += chunk;
    let nl;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (!line.trim()) continue;
      let msg;
      try {
        msg = JSON.parse(line);
      } catch (_) {
        continue;
      }
      handle(msg);
    }
  });
  input.on('end', () => process.exit(0));
  input.on('error', () => process.exit(0));

  baseGlobals = new Set(Object.getOwnPropertyNames(globalThis));
  startWatchdog().then(() =>
    send({ type: 'ready', language: 'javascript', version: process.version, executable: process.execPath, pid: process.pid }));
})();
