/**
 * The documented "Your own script" example (docs/routes.md), taken from the page as it is and
 * served on the project's runtime: the page it builds escapes a hostile claim (the login page
 * accepts any name), so the docs teach no injection.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StartedIdp, startIdp } from "../../apps/idp/testing.ts";
import { type RunningService, startService } from "../runtimes/service.ts";
import { AUDIENCE, CLIENTS } from "./routes-helpers.ts";

/** The body of `cat > my/<file> <<'EOF' ... EOF` in the docs page. */
function documented(page: string, file: string): string {
  const start = page.indexOf(`cat > my/${file} <<'EOF'\n`);
  if (start < 0) throw new Error(`docs/routes.md has no my/${file}`);
  const from = page.indexOf("\n", start) + 1;
  return page.slice(from, page.indexOf("\nEOF\n", from) + 1);
}

let idp: StartedIdp;
let host: RunningService;
/** The same script without its policy, in dev mode: what a newcomer who skipped the policy gets. */
let noPolicy: RunningService;
let signingKey: JWK;
let dir: string;

beforeAll(async () => {
  const page = await readFile("docs/routes.md", "utf8");
  dir = await mkdtemp(join(tmpdir(), "routes-docs-"));
  await writeFile(join(dir, "app.js"), documented(page, "app.js"));
  await writeFile(join(dir, "policy.yaml"), documented(page, "policy.yaml"));
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  signingKey = { ...(await exportJWK(privateKey)), kid: "dev-key-1", alg: "RS256" };
  idp = await startIdp({ clients: CLIENTS, accessTokenFormat: "jwt", accessTokenAudience: AUDIENCE, signingKeys: { keys: [signingKey] } });
  host = await startService("routes", {
    env: {
      ROUTES_SCRIPT: join(dir, "app.js"),
      ROUTES_POLICY_FILE: join(dir, "policy.yaml"),
      ROUTES_ISSUER: idp.issuer,
      ROUTES_AUDIENCE: AUDIENCE,
      ROUTES_DB: "none",
    },
  });
  noPolicy = await startService("routes", {
    env: { ROUTES_SCRIPT: join(dir, "app.js"), ROUTES_ISSUER: idp.issuer, ROUTES_AUDIENCE: AUDIENCE, ROUTES_DB: "none", ROUTES_DEV: "1" },
  });
});

afterAll(async () => {
  await host?.stop();
  await noPolicy?.stop();
  await idp?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** An access token of the provider for a user with these claims (what its login page would sign). */
async function userToken(claims: Record<string, unknown>): Promise<string> {
  const key = await importJWK(signingKey, "RS256");
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: idp.issuer, sub: "ann", client_id: "reader", aud: AUDIENCE, scope: "openid profile", iat: now, exp: now + 600, ...claims })
    .setProtectedHeader({ alg: "RS256", kid: "dev-key-1", typ: "at+jwt" })
    .sign(key);
}

describe('docs/routes.md, "Your own script"', () => {
  it("builds its pages with httpmod's html template", async () => {
    expect(documented(await readFile("docs/routes.md", "utf8"), "app.js")).toContain("html`<h1>Hello, ${");
  });

  it.each([
    [{ name: "<b>ann</b>" }, "&lt;b&gt;ann&lt;/b&gt;", "<b>ann</b>"],
    [{ preferred_username: "<script>alert(1)</script>", name: "Ann" }, "&lt;script&gt;alert(1)&lt;/script&gt;", "<script>"],
    [{ preferred_username: `"><img src=x onerror=alert(1)>` }, "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;", "<img"],
  ])("escapes a hostile claim %j: the page shows it as text", async (claims, shown, never) => {
    const res = await fetch(`${host.baseUrl}/me`, { headers: { authorization: `Bearer ${await userToken(claims)}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const body = await res.text();
    expect(body).toBe(`<h1>Hello, ${shown}</h1><a href="/auth/logout">Sign out</a>`);
    expect(body).not.toContain(never);
  });

  it("serves its public page as HTML, and nosniff", async () => {
    const res = await fetch(`${host.baseUrl}/`);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await res.text()).toBe(`<h1>Hello</h1><p><a href="/me">Who am I?</a></p>`);
  });

  it("without its policy, a 403 in dev mode names the action, the rule and what it looked at, on the answer and on the page", async () => {
    const authorization = `Bearer ${await userToken({ name: "Ann", roles: ["user"] })}`;
    const why =
      'action "me:read" refused (not_granted:me:read): no policy is loaded (--policy-file), so the token itself must grant "me:read" (or "me:*", or "*"), and its scope "openid profile", roles [user], groups (none), permissions (none) do not';
    const res = await fetch(`${noPolicy.baseUrl}/me`, { headers: { authorization } });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: { code: "FORBIDDEN", message: `not allowed: ${why}` } });
    const page = await fetch(`${noPolicy.baseUrl}/me`, { headers: { authorization, accept: "text/html" } });
    expect(page.status).toBe(403);
    expect(await page.text()).toContain(`<p class="why" id="why"><strong>Why (dev mode only):</strong> ${why.replaceAll('"', "&quot;")}</p>`);
  });
});
