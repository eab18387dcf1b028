/**
 * The identity provider benchmark's servers (bench/idp.bench.ts): the peer (panva's
 * oidc-provider) and the floor (plain Hono), each hosted by the benchmark re-run as a child, and
 * the child processes of ours, the peer and the floor; ours with its state in memory, in a libSQL
 * file, and in a file shared by two instances. Not a benchmark of its own.
 */
import { readFile, writeFile } from "node:fs/promises";
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { join } from "node:path";
import { freePort } from "../test/runtimes/service.ts";
import { type Child, importUntyped, spawnNode, stopper, waitForHealth } from "./harness.ts";
import { CLIENT, REDIRECT_URI, SECRET } from "./idp-load.ts";

// ---------------------------------------------------------------------------------------------
// The peer: panva's oidc-provider with one client_credentials client and our signing keys.

export async function runPeer(port: number, keysFile: string): Promise<void> {
  const { default: Provider } = await importUntyped("oidc-provider");
  const jwks = JSON.parse(await readFile(keysFile, "utf8"));
  const provider = new Provider(`http://127.0.0.1:${port}`, {
    clients: [
      { client_id: CLIENT, client_secret: SECRET, grant_types: ["client_credentials"], redirect_uris: [], response_types: [] },
      // The code flow's client, as ours: public, this redirect URI (oidc-provider requires PKCE).
      {
        client_id: "dev-client",
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code"],
        response_types: ["code"],
        redirect_uris: [REDIRECT_URI],
      },
    ],
    jwks,
    features: { clientCredentials: { enabled: true }, devInteractions: { enabled: false } },
    cookies: { keys: ["bench-cookie-key"] },
    claims: { openid: ["sub"], email: ["email", "email_verified"] },
    findAccount: (_ctx: unknown, id: string) => ({ accountId: id, claims: () => ({ sub: id, email: `${id}@example.test`, email_verified: true }) }),
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
  });
  const callback = provider.callback();
  // The login page's answer, as a relying party's browser would get it after typing "alice":
  // the interaction ends with the login and the consent to the scopes asked for.
  const interaction = async (req: IncomingMessage, res: ServerResponse) => {
    try {
      const { params } = await provider.interactionDetails(req, res);
      const grant = new provider.Grant({ accountId: "alice", clientId: params.client_id });
      grant.addOIDCScope(params.scope);
      const grantId = await grant.save();
      await provider.interactionFinished(req, res, { login: { accountId: "alice" }, consent: { grantId } }, { mergeWithLastSubmission: false });
    } catch (err) {
      res.writeHead(500).end(String(err));
    }
  };
  createHttpServer((req, res) => (req.url?.startsWith("/interaction/") ? void interaction(req, res) : callback(req, res))).listen(
    port,
    "127.0.0.1",
    () => process.stdout.write("listening\n"),
  );
}

// ---------------------------------------------------------------------------------------------
// The floor: plain Hono on @hono/node-server (no middleware, so no X-Request-Id and no access log)
// answering discovery and JWKS with our own bodies, precomputed. What the framework alone costs
// on this machine, so each run shows how close to it ours is.

export async function runPlainHono(port: number, bodiesFile: string): Promise<void> {
  const { Hono } = await import("hono");
  const { serve } = await import("@hono/node-server");
  const bodies = JSON.parse(await readFile(bodiesFile, "utf8")) as { discovery: string; jwks: string };
  const json = { "Content-Type": "application/json" };
  const app = new Hono();
  app.get("/.well-known/openid-configuration", (c) => c.body(bodies.discovery, 200, json));
  app.get("/jwks", (c) => c.body(bodies.jwks, 200, json));
  serve({ fetch: app.fetch, port, hostname: "127.0.0.1" });
}

// ---------------------------------------------------------------------------------------------
// Child processes

/** Node arguments that start our provider as `npm run idp` does (a cached bundle, see node/run.mjs). */
export const OUR_ENTRY = ["lib/adapters/node/run.mjs", "apps/idp/entries/node.ts"];

export async function startOurs(keys: string, env: Record<string, string> = {}): Promise<Child> {
  const port = await freePort();
  const proc = spawnNode([...OUR_ENTRY, "serve-dev", "--addr", `127.0.0.1:${port}`], { LOG_LEVEL: "warn", IDP_SIGNING_KEYS: keys, ...env });
  const url = `http://127.0.0.1:${port}`;
  await waitForHealth(`${url}/healthz`, proc);
  return { proc, url, stop: stopper(proc) };
}

export async function startPeer(keysFile: string): Promise<Child> {
  const port = await freePort();
  const proc = spawnNode(["--import", "tsx", "bench/idp.bench.ts", "peer", String(port), keysFile], {});
  const url = `http://127.0.0.1:${port}`;
  await waitForHealth(`${url}/.well-known/openid-configuration`, proc);
  return { proc, url, stop: stopper(proc) };
}

/** The floor serves the bodies ours serves, fetched from ours. */
export async function startPlainHono(ours: Child, dir: string): Promise<Child> {
  const text = async (path: string) => (await fetch(ours.url + path)).text();
  const bodiesFile = join(dir, "floor-bodies.json");
  await writeFile(bodiesFile, JSON.stringify({ discovery: await text("/.well-known/openid-configuration"), jwks: await text("/jwks") }));
  const port = await freePort();
  const proc = spawnNode(["--import", "tsx", "bench/idp.bench.ts", "plain-hono", String(port), bodiesFile], {});
  const url = `http://127.0.0.1:${port}`;
  await waitForHealth(`${url}/jwks`, proc);
  return { proc, url, stop: stopper(proc) };
}

// ---------------------------------------------------------------------------------------------
// Where the state lives

export const MEMORY = "memory";
export const FILE_ONE = "libSQL file, one instance";
export const FILE_TWO = "libSQL file, two instances round-robin";
/** oidc-provider's code flows (the peer of the memory row). */
export const PEER_FLOWS = "oidc-provider";

interface StateSetup {
  name: string;
  urls: string[];
  stop(): Promise<void>;
}

/**
 * The memory store (the provider already running), one instance on a libSQL file, and two
 * instances on another file. A file database commits with synchronous=FULL (lib/db/open.ts):
 * every write a response depends on is on disk before the response.
 */
export async function startStateSetups(memory: Child, keys: string, dir: string): Promise<StateSetup[]> {
  const one = await startOurs(keys, { IDP_STATE: `file:${join(dir, "one.db")}` });
  const twoFile = `file:${join(dir, "two.db")}`;
  const two = await Promise.all([startOurs(keys, { IDP_STATE: twoFile }), startOurs(keys, { IDP_STATE: twoFile })]);
  return [
    { name: MEMORY, urls: [memory.url], stop: () => memory.stop() },
    { name: FILE_ONE, urls: [one.url], stop: () => one.stop() },
    { name: FILE_TWO, urls: two.map((t) => t.url), stop: async () => void (await Promise.all(two.map((t) => t.stop()))) },
  ];
}
