// Preloaded into the conformance suite (node --require) for server mode: the suite has no option
// for an access token, and `toolreg mcp --http` refuses requests without one. This gives every
// HTTP request the suite makes (the SDK client's fetch and its raw undici requests share undici's
// global dispatcher) `Authorization: Bearer $TOOLREG_MCP_TOKEN`, as a configured client would
// send it. Host and Origin pass untouched, so the DNS-rebinding scenario tests what it means to.
const { Agent, setGlobalDispatcher } = require("undici");

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
