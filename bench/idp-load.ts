/**
 * The identity provider benchmark's load (bench/idp.bench.ts): the clients and requests both
 * providers are measured with, autocannon's targets, and full code flows (ours, and
 * oidc-provider's) in concurrent loops. Not a benchmark of its own.
 */
import { createHash } from "node:crypto";
import { Pool } from "undici";
import { type Child, type Target } from "./harness.ts";

export const CLIENT = "web-app";
export const SECRET = "web-app-secret";
export const REDIRECT_URI = "http://127.0.0.1:3000/callback";
const BASIC = "Basic " + Buffer.from(`${CLIENT}:${SECRET}`).toString("base64");

// ---------------------------------------------------------------------------------------------
// autocannon

export const TARGETS: Target[] = [
  { name: "discovery", path: () => "/.well-known/openid-configuration" },
  { name: "jwks", path: () => "/jwks" },
  {
    name: "client_credentials",
    path: () => "/token",
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", authorization: BASIC },
    body: "grant_type=client_credentials&scope=api",
  },
];

export async function peerPaths(peer: Child): Promise<Record<string, string>> {
  const discovery = (await (await fetch(`${peer.url}/.well-known/openid-configuration`)).json()) as { jwks_uri: string; token_endpoint: string };
  return {
    discovery: "/.well-known/openid-configuration",
    jwks: new URL(discovery.jwks_uri).pathname,
    client_credentials: new URL(discovery.token_endpoint).pathname,
  };
}

// ---------------------------------------------------------------------------------------------
// Code flows

async function readBody(body: { text(): Promise<string> }): Promise<string> {
  return body.text();
}

/**
 * One authorization code flow; throws on any unexpected answer. `next` gives the pool of each
 * request: with several instances, consecutive requests of one flow go to different ones.
 */
export async function flow(next: () => Pool): Promise<void> {
  const authorize = await next().request({
    path: "/authorize",
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: `client_id=dev-client&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&response_type=code&scope=openid%20email&state=s&login=alice`,
  });
  await readBody(authorize.body);
  const location = authorize.headers.location as string | undefined;
  const code = location ? new URL(location).searchParams.get("code") : null;
  if (authorize.statusCode !== 302 || !code) throw new Error(`authorize: ${authorize.statusCode} ${location}`);
  const token = await next().request({
    path: "/token",
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: `grant_type=authorization_code&code=${encodeURIComponent(code)}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&client_id=dev-client`,
  });
  const tokens = JSON.parse(await readBody(token.body)) as { access_token?: string };
  if (token.statusCode !== 200 || !tokens.access_token) throw new Error(`token: ${token.statusCode} ${JSON.stringify(tokens)}`);
  const userinfo = await next().request({ path: "/userinfo", method: "GET", headers: { authorization: `Bearer ${tokens.access_token}` } });
  await readBody(userinfo.body);
  if (userinfo.statusCode !== 200) throw new Error(`userinfo: ${userinfo.statusCode}`);
}

/** PKCE for the peer's flows (oidc-provider requires it): one fixed pair, S256. */
const PEER_VERIFIER = "bench-verifier-0123456789-0123456789-0123456789";
const PEER_CHALLENGE = createHash("sha256").update(PEER_VERIFIER).digest("base64url");

/** Cookies a response set, by name (the peer's browser: its session and interaction cookies). */
function keepCookies(jar: Map<string, string>, headers: Record<string, string | string[] | undefined>): void {
  const set = headers["set-cookie"];
  for (const line of Array.isArray(set) ? set : set ? [set] : []) {
    const [pair] = line.split(";");
    const eq = pair!.indexOf("=");
    const name = pair!.slice(0, eq).trim();
    const value = pair!.slice(eq + 1);
    if (value === "" || /expires=Thu, 01 Jan 1970/i.test(line)) jar.delete(name);
    else jar.set(name, value);
  }
}

const cookieHeader = (jar: Map<string, string>) => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");

/**
 * oidc-provider's full code flow, from a fresh browser each time (as ours: a new login per flow):
 * GET /auth, its login interaction (answered at once, see runPeer), the resumed authorization,
 * POST /token and GET /me.
 */
export async function peerFlow(next: () => Pool): Promise<void> {
  const jar = new Map<string, string>();
  const get = async (path: string) => {
    const res = await next().request({ path, method: "GET", headers: { cookie: cookieHeader(jar) } });
    await readBody(res.body);
    keepCookies(jar, res.headers);
    const location = res.headers.location as string | undefined;
    if (res.statusCode !== 303 && res.statusCode !== 302) throw new Error(`peer ${path}: ${res.statusCode}`);
    return new URL(location!, "http://peer.invalid");
  };
  const query = new URLSearchParams({
    client_id: "dev-client",
    redirect_uri: REDIRECT_URI,
    response_type: "code",
    scope: "openid email",
    state: "s",
    code_challenge: PEER_CHALLENGE,
    code_challenge_method: "S256",
  });
  const toInteraction = await get(`/auth?${query}`);
  const resume = await get(toInteraction.pathname);
  const callback = await get(resume.pathname);
  const code = callback.searchParams.get("code");
  if (!code) throw new Error(`peer authorize: ${callback}`);
  const token = await next().request({
    path: "/token",
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: `grant_type=authorization_code&code=${encodeURIComponent(code)}&redirect_uri=${
      encodeURIComponent(REDIRECT_URI)
    }&client_id=dev-client&code_verifier=${PEER_VERIFIER}`,
  });
  const tokens = JSON.parse(await readBody(token.body)) as { access_token?: string };
  if (token.statusCode !== 200 || !tokens.access_token) throw new Error(`peer token: ${token.statusCode} ${JSON.stringify(tokens)}`);
  const userinfo = await next().request({ path: "/me", method: "GET", headers: { authorization: `Bearer ${tokens.access_token}` } });
  await readBody(userinfo.body);
  if (userinfo.statusCode !== 200) throw new Error(`peer userinfo: ${userinfo.statusCode}`);
}

/**
 * `concurrency` loops of flows until `seconds` pass or `limit` flows are done. With several base
 * URLs (instances on one state database), requests go to them in turn, round-robin.
 */
export async function runFlows(
  base: string | string[],
  opts: { concurrency: number; seconds?: number; limit?: number; flow?: (next: () => Pool) => Promise<void> },
) {
  const oneFlow = opts.flow ?? flow;
  const pools = (Array.isArray(base) ? base : [base]).map((url) => new Pool(url, { connections: opts.concurrency, pipelining: 1 }));
  let turn = 0;
  const next = () => pools[turn++ % pools.length]!;
  const stopAt = opts.seconds === undefined ? Infinity : performance.now() + opts.seconds * 1000;
  const limit = opts.limit ?? Infinity;
  let started = 0;
  let done = 0;
  const t0 = performance.now();
  const loop = async () => {
    while (started < limit && performance.now() < stopAt) {
      started++;
      await oneFlow(next);
      done++;
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, loop));
  const elapsed = (performance.now() - t0) / 1000;
  await Promise.all(pools.map((p) => p.close()));
  return { flows: done, seconds: elapsed, perSecond: done / elapsed };
}
