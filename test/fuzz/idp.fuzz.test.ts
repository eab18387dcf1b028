/**
 * Fuzzing the identity provider: its endpoints' parameters as docs/idp.md gives them (form-encoded
 * token, authorize, device, revocation, introspection, end-session, userinfo, and the JSON of
 * POST /debug/scenarios), with valid values mixed with mutations (see fuzz.ts): missing, repeated
 * and unknown parameters, wrong and hostile values, broken percent-encoding, other content types
 * and credentials. Invariants, for every case:
 * - never a 5xx; a method an endpoint does not serve is 405 with Allow (or a cross-site 403);
 * - the OAuth endpoints answer errors as `{error, error_description?}` JSON with a documented
 *   code (and `Cache-Control: no-store`); the browser endpoints as a page, or a redirect;
 * - a redirect never goes to a URI that is not registered;
 * - nothing is stored on a refusal (a 4xx, or an error redirect): the debug counts and the login
 *   page's scenarios are unchanged;
 * - /healthz answers;
 * - a scenario the debug interface accepted can sign in: its code flow never ends in a 5xx (a
 *   deeply nested claim once made the token endpoint fail).
 * The endpoints, the generators and the checks of an answer are in idp-cases.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { type RunningService, startService } from "../runtimes/service.ts";
import { check, encodePathSegment, type FuzzRequest, nastyString, runs, send, utf8 } from "./fuzz.ts";
import { checkAnswer, type Endpoint, ENDPOINTS, formRequest, REDIRECT_URI, refused, scenarioRequest, WEB_APP_SECRET } from "./idp-cases.ts";

let idp: RunningService;

beforeAll(async () => {
  idp = await startService("idp", { env: { IDP_ISSUER: "{origin}" } });
});
afterAll(() => idp?.stop());

/** Stored state a refusal must leave alone: the debug counts (DPoP replay entries aside) and the
 * scenarios offered on the login page. */
async function fingerprint(): Promise<string> {
  const debug = (await send(idp.baseUrl, { method: "GET", path: "/debug", headers: {} })).json as { counts: Record<string, number> };
  const { replay_entries: _replay, ...counts } = debug.counts;
  const page = await send(idp.baseUrl, {
    method: "GET",
    path: `/authorize?${new URLSearchParams({ client_id: "dev-client", redirect_uri: REDIRECT_URI, response_type: "code", scope: "openid" })}`,
    headers: {},
  });
  return JSON.stringify([counts, page.text.match(/data-login="[^"]*"/g)?.sort()]);
}

/** Signs a scenario in through the code flow (web-app, no PKCE): every step below 500. */
async function signIn(login: string, password: string | undefined): Promise<void> {
  const form = new URLSearchParams({
    client_id: "web-app",
    redirect_uri: REDIRECT_URI,
    response_type: "code",
    scope: "openid profile email",
    state: "s",
    login,
    password: password ?? "",
  });
  const res = await send(idp.baseUrl, {
    method: "POST",
    path: "/authorize",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: utf8(form.toString()),
  });
  expect(res.status, `sign-in as ${JSON.stringify(login)}: ${res.text.slice(0, 200)}`).toBeLessThan(500);
  const code = res.headers.location && new URL(res.headers.location as string).searchParams.get("code");
  if (!code) return;
  const grant = new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI });
  const tokens = await send(idp.baseUrl, {
    method: "POST",
    path: "/token",
    headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${btoa(`web-app:${WEB_APP_SECRET}`)}` },
    body: utf8(grant.toString()),
  });
  expect(tokens.status, `token for ${JSON.stringify(login)}: ${tokens.text.slice(0, 300)}`).toBe(200);
  const access = (tokens.json as { access_token: string }).access_token;
  const info = await send(idp.baseUrl, { method: "GET", path: "/userinfo", headers: { authorization: `Bearer ${access}` } });
  expect(info.status, `userinfo for ${JSON.stringify(login)}: ${info.text.slice(0, 300)}`).toBeLessThan(500);
}

describe("the identity provider's endpoints, fuzzed", () => {
  it("never a 5xx, documented errors, no open redirect, nothing stored on a refusal, always healthy", async () => {
    const arbitrary = fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...ENDPOINTS).chain((e) => formRequest(e).map((req) => ({ e: e as Endpoint | "scenarios", req }))) },
      { weight: 2, arbitrary: scenarioRequest.map((req) => ({ e: "scenarios" as const, req })) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(...ENDPOINTS).chain((e) =>
          nastyString.map((junk) => ({
            e: e as Endpoint | "scenarios",
            req: { method: e.method, path: `${e.path}/${encodePathSegment(junk)}`, headers: {}, label: `${e.method} ${e.path}/<junk>` } as FuzzRequest,
          }))
        ),
      },
    );
    await check("idp", arbitrary, runs(250), async ({ e, req }) => {
      const before = await fingerprint();
      const res = await send(idp.baseUrl, req);
      checkAnswer(idp.baseUrl, e, req, res);
      if (refused(res)) expect(await fingerprint(), `${req.label}: ${res.status} ${res.text.slice(0, 200)} changed stored state`).toBe(before);
      if (e === "scenarios" && res.status === 201) {
        const created = res.json as { login: string };
        const sent = JSON.parse(new TextDecoder().decode(req.body)) as { password?: string };
        await signIn(created.login, sent.password);
      }
      expect((await send(idp.baseUrl, { method: "GET", path: "/healthz", headers: {} })).status, `${req.label}: unhealthy afterwards`).toBe(200);
    });
  });
});
