// Preloaded into the conformance suite (node --require) for server mode: the suite has no option
// for an access token, and `toolreg mcp --http` refuses requests without one. This gives every
// HTTP request the suite makes (the SDK client's fetch and its raw undici requests share undici's
// global dispatcher; the header probes of http-header-validation use node:http) `Authorization:
// Bearer $TOOLREG_MCP_TOKEN`, as a configured client would send it. Host and Origin pass
// untouched, so the DNS-rebinding scenario tests what it means to.
const { Agent, setGlobalDispatcher } = require("undici");
const http = require("node:http");
const { syncBuiltinESMExports } = require("node:module");

const token = process.env.TOOLREG_MCP_TOKEN;
if (!token) throw new Error("conformance/bearer.cjs: TOOLREG_MCP_TOKEN is not set");
const auth = `Bearer ${token}`;

function withAuth(headers) {
  if (headers == null) return { authorization: auth };
  if (Array.isArray(headers)) return [...headers, "authorization", auth];
  if (typeof headers[Symbol.iterator] === "function" && typeof headers !== "string") {
    const flat = [];
    for (const [k, v] of headers) flat.push(k, v);
    return [...flat, "authorization", auth];
  }
  return { ...headers, authorization: auth };
}

setGlobalDispatcher(new Agent().compose((dispatch) => (opts, handler) => dispatch({ ...opts, headers: withAuth(opts.headers) }, handler)));

// node:http: request(options[, cb]), request(url[, options][, cb]); get alike (it does not go
// through the exported request, so both are wrapped). The caller's options object is not changed.
function withAuthArgs(args) {
  const at = args.findIndex((a) => a && typeof a === "object" && !(a instanceof URL));
  if (at >= 0) {
    const out = [...args];
    out[at] = { ...args[at], headers: withAuth(args[at].headers) };
    return out;
  }
  return [args[0], { headers: withAuth(undefined) }, ...args.slice(1)];
}
for (const name of ["request", "get"]) {
  const original = http[name];
  http[name] = function (...args) {
    return original.apply(this, withAuthArgs(args));
  };
}
// The suite is an ES module: its `import` of node:http sees the wrapped functions only after this.
syncBuiltinESMExports();
