// Compile every tool's inputSchema from a `tools/list` answer (read as JSON
// on stdin: the Inspector CLI's output) with Ajv as the MCP TypeScript SDK
// ships it, in Ajv's default strict mode plus ajv-formats (JSON Schema's own
// formats), and print one JSON report: for each tool, the errors that refuse
// its schema and the warnings Ajv logs about it. The assertions live in the
// Rust tests (tests/tests/mcp_inspector.rs).
//
// Usage: node strict_schemas.cjs NODE_MODULES < tools-list.json

const path = require("path");
const modules = process.argv[2];
// Ajv as the SDK resolves it: the prefix's top-level ajv may be another
// package's older major (eslint brings ajv 6).
const sdk = { paths: [path.join(modules, "@modelcontextprotocol/sdk")] };
const Ajv = require(require.resolve("ajv", sdk)).default;
const addFormats = require(require.resolve("ajv-formats", sdk)).default;

let input = "";
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", () => {
  const tools = JSON.parse(input).tools;
  const report = {};
  for (const tool of tools) {
    const warnings = [];
    const logger = {
      log() {},
      warn: (...a) => warnings.push(a.join(" ")),
      error: (...a) => warnings.push(a.join(" ")),
    };
    const ajv = new Ajv({ logger });
    addFormats(ajv);
    let error = null;
    try {
      ajv.compile(tool.inputSchema);
    } catch (e) {
      error = e.message;
    }
    report[tool.name] = { error, warnings };
  }
  process.stdout.write(JSON.stringify(report) + "\n");
});
