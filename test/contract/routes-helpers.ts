/**
 * Shared helpers for the route host's contract suites that serve test/contract/fixtures/routes/app.js:
 * the host started behind our identity provider (JWT access tokens, its signing key known to the
 * test so it can also make expired and wrong-audience tokens), client tokens, and raw requests.
 * Not a test file; routes.test.ts and routes-hardening.test.ts import from here.
 */
import { Agent, request as httpRequest } from "node:http";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import { expect } from "vitest";
import { type StartedIdp, startIdp } from "../../apps/idp/testing.ts";
import { type RunningService, startService } from "../runtimes/service.ts";

export const AUDIENCE = "routes-contract";
export const CLIENTS = [
  { client_id: "reader", client_secret: "reader-secret", redirect_uris: ["http://localhost/cb"] },
  { client_id: "outsider", client_secret: "outsider-secret", redirect_uris: ["http://localhost/cb"] },
];

export interface RoutesContract {
  idp: StartedIdp;
  host: RunningService;
  signingKey: JWK;
}

/** The provider (in this process) and the host on the project's runtime, serving the fixture app. */
export async function startRoutesContract(): Promise<RoutesContract> {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), kid: "dev-key-1", alg: "RS256" };
  const idp = await startIdp({ clients: CLIENTS, accessTokenFormat: "jwt", accessTokenAudience: AUDIENCE, signingKeys: { keys: [signingKey] } });
  const host = await startService("routes", {
    env: {
      ROUTES_SCRIPT: "test/contract/fixtures/routes/app.js",
      ROUTES_ISSUER: idp.issuer,
      ROUTES_AUDIENCE: AUDIENCE,
      ROUTES_CPU_MS: "300",
      ROUTES_SESSION_SECRET: "contract-secret",
      ROUTES_DB: "none",
      ROUTES_ASSETS: "test/contract/fixtures/routes-assets",
    },
  });
  return { idp, host, signingKey };
}

/** A client_credentials access token of the provider. */
export async function clientToken(idp: StartedIdp, client: "reader" | "outsider", scope: string): Promise<string> {
  const secret = CLIENTS.find((c) => c.client_id === client)!.client_secret;
  const res = await fetch(`${idp.url}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "client_credentials", client_id: client, client_secret: secret, scope }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

/** A request through node:http to the host on `port`, the path exactly as written (fetch would normalize `..` and `%2e%2e`). */
export function rawRequest(
  port: number,
  path: string,
  init: { method?: string; headers?: Record<string, string>; agent?: Agent } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, path, method: init.method ?? "GET", headers: init.headers, agent: init.agent }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}
