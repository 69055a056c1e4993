// An OAuth-protected MCP server for mcpx's authorization tests, assembled
// from the official TypeScript SDK's server-side pieces: mcpAuthRouter
// (RFC 8414 and RFC 9728 metadata, dynamic client registration, authorize
// with PKCE S256, token, revocation) and requireBearerAuth in front of a
// streamable HTTP MCP endpoint. Only the in-memory provider below is ours;
// it approves every authorization at once, so a test plays the browser by
// following the authorization URL with a plain HTTP client.
//
// Usage: node oauth-server.mjs
// Prints {"url": "http://127.0.0.1:PORT/mcp"} on stdout once listening.
// Env: OAUTH_TOKEN_TTL (access token lifetime in seconds, default 3600);
// OAUTH_STATIC_CLIENT ("id:secret", a confidential client registered
// beforehand, for configs that give auth.clientId); OAUTH_CIMD=1 (client
// IDs that are URLs are client ID metadata documents, fetched on first use,
// and the metadata says client_id_metadata_document_supported);
// OAUTH_NO_SCOPE_HINT=1 (the 401 challenge names no scope, so a client
// falls back to the resource metadata's scopes_supported); OAUTH_JWT=1
// (access tokens are JWTs, RFC 9068, signed RS256 with a key the metadata's
// jwks_uri publishes at /jwks: what a resource server such as
// `mcpx serve --http` with http.oauth checks).
//
// /open is the same MCP server without any authorization; /sse (with
// /messages) is it over the older HTTP+SSE transport, behind the same
// authorization as /mcp.
//
// Test controls (never part of a real server):
//   GET  /test/log     what clients sent: registrations, the raw query of
//                      each /authorize, the form of each /token and /revoke
//                      (grant types and parameter names, resource), counts
//   POST /test/expire  every access token stops working (401 on use)
//   POST /test/revoke  every token, refresh tokens included, is revoked
//   POST /test/config  JSON settings, merged into the current ones:
//                      iss ("omit", "correct", "wrong", "normalized": what
//                      the authorization response carries, RFC 9207; the
//                      issuer is http://127.0.0.1:PORT/ and "normalized"
//                      drops its final slash),
//                      issAdvertised (authorization_response_iss_parameter_supported),
//                      offlineAccess (offline_access in the authorization
//                      server's scopes_supported)
//   POST /test/rotate  (OAUTH_JWT) a new signing key, which /jwks serves
//                      from now on in place of the old one
//   POST /test/mint    (OAUTH_JWT) {"claims": {...}, "header": {...}}: a
//                      JWT signed with the current key, with these claims
//                      merged over a good token's ({"aud": ...} required)
//                      and these header fields; {"token": "..."}
//   POST /test/migrate {"to": "http://127.0.0.1:PORT"}: the resource moves
//                      to the authorization server of another instance of
//                      this program; its metadata names that issuer, the
//                      tokens this one issued get 401, and the other's are
//                      checked with it (GET /test/introspect?token=...)
import { randomUUID, randomBytes, generateKeyPairSync, sign as cryptoSign } from "node:crypto";
import express from "express";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { mcpAuthRouter, getOAuthProtectedResourceMetadataUrl } from "@modelcontextprotocol/sdk/server/auth/router.js";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import { InvalidGrantError, InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import { z } from "zod";

const ttl = Number(process.env.OAUTH_TOKEN_TTL || 3600);
const log = { registrations: [], registrationRequests: [], metadataDocuments: [], authorize: [], token: [], revoke: [], refreshes: 0, mcpAuthorized: 0 };
const clients = new Map();
const settings = { iss: "omit", issAdvertised: false, offlineAccess: false };
let migratedTo; // the base URL of the authorization server the resource moved to
const codes = new Map(); // code -> {client, params}
const access = new Map(); // token -> {clientId, scopes, expiresAt, resource}
const refresh = new Map(); // token -> {clientId, scopes, resource}

if (process.env.OAUTH_STATIC_CLIENT) {
  const [id, secret] = process.env.OAUTH_STATIC_CLIENT.split(":");
  clients.set(id, {
    client_id: id,
    client_secret: secret,
    redirect_uris: ["http://127.0.0.1/callback"],
    token_endpoint_auth_method: "client_secret_post",
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
  });
}

// basicClientID is the client ID of an HTTP Basic Authorization header.
const basicClientID = (h) =>
  h?.startsWith("Basic ") ? decodeURIComponent(Buffer.from(h.slice(6), "base64").toString().split(":")[0]) : undefined;

const token = () => randomBytes(24).toString("base64url");

// The signing key of JWT access tokens (OAUTH_JWT=1), with its key ID.
const jwtMode = process.env.OAUTH_JWT === "1";
let signingKey;
const rotate = () => {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  signingKey = { privateKey, jwk: { ...publicKey.export({ format: "jwk" }), kid: randomBytes(8).toString("hex"), alg: "RS256", use: "sig" } };
};
if (jwtMode) rotate();
const b64 = (v) => Buffer.from(typeof v === "string" ? v : JSON.stringify(v)).toString("base64url");
function signJWT(claims, header = {}) {
  const input = `${b64({ alg: "RS256", typ: "at+jwt", kid: signingKey.jwk.kid, ...header })}.${b64(claims)}`;
  return `${input}.${cryptoSign("RSA-SHA256", Buffer.from(input), signingKey.privateKey).toString("base64url")}`;
}
// jwtClaims are an access token's claims (RFC 9068 §2.2).
const jwtClaims = (clientId, scopes, resource, exp) => ({
  iss: `${issuerBase}/`, sub: "user-1", aud: resource, client_id: clientId, scope: scopes.join(" "),
  exp, iat: Math.floor(Date.now() / 1000), jti: randomUUID(),
});
const idToken = (email) =>
  [{ alg: "none", typ: "JWT" }, { sub: "user-1", email }].map((p) => Buffer.from(JSON.stringify(p)).toString("base64url")).join(".") + ".";

function issue(clientId, scopes, resource) {
  const expiresAt = Math.floor(Date.now() / 1000) + ttl;
  const a = jwtMode ? signJWT(jwtClaims(clientId, scopes, resource, expiresAt)) : token();
  const r = token();
  access.set(a, { clientId, scopes, expiresAt, resource });
  refresh.set(r, { clientId, scopes, resource });
  return { access_token: a, token_type: "Bearer", expires_in: ttl, refresh_token: r, scope: scopes.join(" "), id_token: idToken("alice@example.test") };
}

const provider = {
  clientsStore: {
    getClient: async (id) => {
      if (!clients.has(id) && process.env.OAUTH_CIMD === "1" && URL.canParse(id)) {
        // A client ID metadata document: the client ID is where it lives.
        const r = await fetch(id);
        if (!r.ok) return undefined;
        const doc = await r.json();
        if (doc.client_id !== id) return undefined;
        log.metadataDocuments.push(id);
        clients.set(id, { ...doc, token_endpoint_auth_method: doc.token_endpoint_auth_method ?? "none" });
      }
      return clients.get(id);
    },
    registerClient: async (c) => {
      clients.set(c.client_id, c);
      log.registrations.push({ client_id: c.client_id, redirect_uris: c.redirect_uris, client_name: c.client_name, scope: c.scope, token_endpoint_auth_method: c.token_endpoint_auth_method });
      return c;
    },
  },
  async authorize(client, params, res) {
    const code = token();
    codes.set(code, { client, params });
    const u = new URL(params.redirectUri);
    u.searchParams.set("code", code);
    if (params.state !== undefined) u.searchParams.set("state", params.state);
    const issuer = `${issuerBase}/`; // the issuer mcpAuthRouter's metadata names
    const iss = { correct: issuer, wrong: "https://evil.example.test/", normalized: issuerBase }[settings.iss];
    if (iss !== undefined) u.searchParams.set("iss", iss);
    res.redirect(302, u.href);
  },
  async challengeForAuthorizationCode(client, code) {
    const c = codes.get(code);
    if (!c || c.client.client_id !== client.client_id) throw new InvalidGrantError("unknown authorization code");
    return c.params.codeChallenge;
  },
  async exchangeAuthorizationCode(client, code, _verifier, _redirectUri, resource) {
    const c = codes.get(code);
    if (!c || c.client.client_id !== client.client_id) throw new InvalidGrantError("unknown authorization code");
    codes.delete(code);
    return issue(client.client_id, c.params.scopes ?? [], resource?.href ?? c.params.resource?.href);
  },
  async exchangeRefreshToken(client, refreshToken, scopes, resource) {
    const r = refresh.get(refreshToken);
    if (!r || r.clientId !== client.client_id) throw new InvalidGrantError("refresh token is invalid or revoked");
    // Rotation: a refresh token is good once.
    refresh.delete(refreshToken);
    log.refreshes++;
    return issue(client.client_id, scopes?.length ? scopes : r.scopes, resource?.href ?? r.resource);
  },
  async verifyAccessToken(t) {
    if (migratedTo) {
      if (access.has(t)) throw new InvalidTokenError("the authorization server has changed");
      const r = await fetch(`${migratedTo}/test/introspect?token=${encodeURIComponent(t)}`);
      if (!r.ok) throw new InvalidTokenError("unknown or revoked token");
      const a = await r.json();
      return { token: t, clientId: a.clientId, scopes: a.scopes, expiresAt: a.expiresAt, resource: a.resource ? new URL(a.resource) : undefined };
    }
    const a = access.get(t);
    if (!a) throw new InvalidTokenError("unknown or revoked token");
    return { token: t, clientId: a.clientId, scopes: a.scopes, expiresAt: a.expiresAt, resource: a.resource ? new URL(a.resource) : undefined };
  },
  async revokeToken(_client, req) {
    access.delete(req.token);
    refresh.delete(req.token);
  },
};

let issuerBase;
const app = express();
app.set("trust proxy", false);
const server = app.listen(0, "127.0.0.1", () => {
  const base = `http://127.0.0.1:${server.address().port}`;
  issuerBase = base;
  const mcpURL = new URL(`${base}/mcp`);
  const noLimit = { rateLimit: false };

  // The SDK's metadata has no fields for client ID metadata documents,
  // RFC 9207 or offline_access: add them on the way out.
  app.get("/.well-known/oauth-authorization-server", (_req, res, next) => {
    const json = res.json.bind(res);
    res.json = (body) => {
      const more = {};
      if (process.env.OAUTH_CIMD === "1") more.client_id_metadata_document_supported = true;
      if (settings.issAdvertised) more.authorization_response_iss_parameter_supported = true;
      if (settings.offlineAccess) more.scopes_supported = [...(body.scopes_supported ?? []), "offline_access"];
      if (jwtMode) more.jwks_uri = `${base}/jwks`;
      return json({ ...body, ...more });
    };
    next();
  });
  app.get("/.well-known/oauth-protected-resource/mcp", (_req, res, next) => {
    if (!migratedTo) return next();
    res.json({ resource: mcpURL.href, authorization_servers: [`${migratedTo}/`], scopes_supported: ["mcp:read", "mcp:admin"] });
  });

  // Record what the client sent before the SDK's handlers see it (they
  // drop what they do not know, such as application_type).
  app.post("/register", express.json(), (req, _res, next) => {
    log.registrationRequests.push(req.body);
    next();
  });
  app.get("/authorize", (req, _res, next) => {
    log.authorize.push({ ...req.query });
    next();
  });
  app.post(["/token", "/revoke"], express.urlencoded({ extended: false }), (req, _res, next) => {
    const form = req.body ?? {};
    (req.path === "/token" ? log.token : log.revoke).push({
      grant_type: form.grant_type,
      resource: form.resource,
      token_type_hint: form.token_type_hint,
      has_code_verifier: typeof form.code_verifier === "string" && form.code_verifier.length > 0,
      client_id: form.client_id ?? basicClientID(req.headers.authorization),
      has_client_secret: typeof form.client_secret === "string" && form.client_secret.length > 0,
    });
    next();
  });
  app.use(
    mcpAuthRouter({
      provider,
      issuerUrl: new URL(base),
      resourceServerUrl: mcpURL,
      scopesSupported: ["mcp:read", "mcp:admin"],
      resourceName: "mcpx OAuth test server",
      authorizationOptions: noLimit,
      tokenOptions: noLimit,
      clientRegistrationOptions: noLimit,
      revocationOptions: noLimit,
    }),
  );

  app.get("/test/log", (_req, res) => res.json(log));
  app.get("/jwks", (_req, res) => {
    if (!jwtMode) return res.status(404).end();
    res.json({ keys: [signingKey.jwk] });
  });
  app.post("/test/rotate", (_req, res) => {
    rotate();
    res.json({ kid: signingKey.jwk.kid });
  });
  app.post("/test/mint", express.json(), (req, res) => {
    const good = jwtClaims("minted", ["mcp:read"], undefined, Math.floor(Date.now() / 1000) + ttl);
    const claims = Object.fromEntries(Object.entries({ ...good, ...req.body.claims }).filter(([, v]) => v !== null));
    res.json({ token: signJWT(claims, req.body.header) });
  });
  app.post("/test/config", express.json(), (req, res) => {
    Object.assign(settings, req.body);
    res.json(settings);
  });
  app.post("/test/migrate", express.json(), (req, res) => {
    migratedTo = req.body.to;
    res.json({ ok: true });
  });
  app.get("/test/introspect", (req, res) => {
    const a = access.get(req.query.token);
    if (!a) return res.status(404).json({ error: "unknown token" });
    res.json(a);
  });
  app.post("/test/expire", (_req, res) => {
    for (const a of access.values()) a.expiresAt = 1;
    res.json({ ok: true });
  });
  app.post("/test/revoke", (_req, res) => {
    access.clear();
    refresh.clear();
    res.json({ ok: true });
  });

  const bearer = requireBearerAuth({
    verifier: provider,
    requiredScopes: process.env.OAUTH_NO_SCOPE_HINT === "1" ? [] : ["mcp:read"],
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpURL),
  });
  const transports = new Map();
  app.use("/mcp", bearer, express.json(), (req, res, next) => {
    log.mcpAuthorized++;
    // The admin tool needs a scope the first login does not ask for: a
    // 403 insufficient_scope tells the client which one (step-up).
    const b = req.body;
    if (b?.method === "tools/call" && b?.params?.name === "admin" && !req.auth.scopes.includes("mcp:admin")) {
      res.set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="mcp:read mcp:admin", resource_metadata="${getOAuthProtectedResourceMetadataUrl(mcpURL)}"`);
      res.status(403).json({ error: "insufficient_scope", error_description: "the admin tool needs mcp:admin" });
      return;
    }
    next();
  });
  const serveMCP = async (req, res) => {
    const sid = req.headers["mcp-session-id"];
    let t = sid ? transports.get(sid) : undefined;
    if (!t) {
      if (sid || req.method !== "POST") {
        res.status(404).json({ jsonrpc: "2.0", error: { code: -32001, message: "unknown session" }, id: null });
        return;
      }
      t = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => transports.set(id, t),
      });
      t.onclose = () => t.sessionId && transports.delete(t.sessionId);
      await newServer().connect(t);
    }
    await t.handleRequest(req, res, req.body);
  };
  // Each session gets its own server with the three tools.
  function newServer() {
    const mcp = new McpServer({ name: "oauth-test", version: "1.0.0" });
    mcp.registerTool("whoami", { description: "Who the bearer token belongs to", inputSchema: {} }, async (_args, extra) => ({
      content: [{ type: "text", text: JSON.stringify({ clientId: extra.authInfo?.clientId, scopes: extra.authInfo?.scopes }) }],
    }));
    mcp.registerTool("echo", { description: "Echo the message", inputSchema: { message: z.string() } }, async ({ message }) => ({
      content: [{ type: "text", text: message }],
    }));
    mcp.registerTool("admin", { description: "Needs the mcp:admin scope", inputSchema: {} }, async () => ({
      content: [{ type: "text", text: "admin ok" }],
    }));
    return mcp;
  }
  app.all("/mcp", serveMCP);
  app.all("/open", express.json(), serveMCP);

  const sseURL = new URL(`${base}/sse`);
  const ssePRM = getOAuthProtectedResourceMetadataUrl(sseURL);
  app.get(new URL(ssePRM).pathname, (_req, res) =>
    res.json({ resource: sseURL.href, authorization_servers: [`${base}/`], scopes_supported: ["mcp:read", "mcp:admin"] }),
  );
  const sseBearer = requireBearerAuth({ verifier: provider, requiredScopes: ["mcp:read"], resourceMetadataUrl: ssePRM });
  const sseSessions = new Map();
  app.get("/sse", sseBearer, async (_req, res) => {
    const t = new SSEServerTransport("/messages", res);
    sseSessions.set(t.sessionId, t);
    res.on("close", () => sseSessions.delete(t.sessionId));
    await newServer().connect(t);
  });
  app.post("/messages", sseBearer, express.json(), async (req, res) => {
    const t = sseSessions.get(req.query.sessionId);
    if (!t) {
      res.status(404).send("unknown session");
      return;
    }
    await t.handlePostMessage(req, res, req.body);
  });

  process.stdout.write(JSON.stringify({ url: mcpURL.href }) + "\n");
});

process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
process.on("SIGTERM", () => process.exit(0));
