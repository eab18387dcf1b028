/**
 * The in-process helper `startIdp`: its debug operations, a path-based issuer, extra clients and
 * `stop()`. The code flow a consumer writes is examples/idp-vitest/login.test.ts (also in the unit run).
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { type StartedIdp, startIdp } from "./testing.ts";

const REDIRECT_URI = "http://127.0.0.1:3000/callback"; // accepted by the builtin dev-client
let idp: StartedIdp;

beforeAll(async () => {
  idp = await startIdp();
});
afterAll(() => idp.stop());

test("the debug operations act on the running provider", async () => {
  const debug = async () => (await (await fetch(`${idp.url}/debug`)).json()) as { counts: { codes: number }; jwks_mode: string };
  // A code is outstanding after a login; moving the clock past its 5 minutes expires it.
  const form = new URLSearchParams({ client_id: "dev-client", redirect_uri: REDIRECT_URI, response_type: "code", scope: "openid", login: "bob" });
  expect((await fetch(`${idp.url}/authorize`, { method: "POST", body: form, redirect: "manual" })).status).toBe(302);
  expect((await debug()).counts.codes).toBeGreaterThan(0);
  await idp.advanceClock(301);
  expect((await debug()).counts.codes).toBe(0);

  await idp.setJwksMode("empty");
  expect(await (await fetch(`${idp.url}/jwks`)).json()).toEqual({ keys: [] });
  expect((await debug()).jwks_mode).toBe("empty");

  await idp.addScenario({ login: "dave", category: "Runtime" });
  const page = await (await fetch(`${idp.url}/authorize?client_id=dev-client&response_type=code&scope=openid&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`))
    .text();
  expect(page).toContain('data-login="dave"');

  await idp.reset();
  expect((await debug()).jwks_mode).toBe("normal");
  const clock = (await (await fetch(`${idp.url}/debug/clock`, { method: "POST", body: '{"advance_seconds":0}' })).json()) as { offset_seconds: number };
  expect(clock.offset_seconds).toBe(0);
  await expect(idp.setJwksMode("bogus" as never)).rejects.toThrow(/400/);
});

test("a path-based issuer, extra clients, and stop() closing the port", async () => {
  const other = await startIdp({ issuerPath: "/realms/dev", clients: [{ client_id: "my-app", redirect_uris: ["http://127.0.0.1:4000/cb"] }] });
  expect(other.issuer).toBe(`${other.url}/realms/dev`);
  const discovery = (await (await fetch(`${other.issuer}/.well-known/openid-configuration`)).json()) as Record<string, string>;
  expect(discovery.issuer).toBe(other.issuer);
  expect(discovery.token_endpoint).toBe(`${other.issuer}/token`);
  const form = new URLSearchParams({ client_id: "my-app", redirect_uri: "http://127.0.0.1:4000/cb", response_type: "code", scope: "openid", login: "x" });
  const res = await fetch(`${other.issuer}/authorize`, { method: "POST", body: form, redirect: "manual" });
  expect(res.headers.get("location")).toMatch(/^http:\/\/127\.0\.0\.1:4000\/cb\?code=/);
  await other.stop();
  await expect(fetch(`${other.url}/healthz`)).rejects.toThrow();
});

test("bad seeded users are refused at start", async () => {
  await expect(startIdp({ users: [{ login: "" }] })).rejects.toThrow(/login/);
});

test("requests() lists what the provider received (secrets masked), filtered; clearRequests() forgets them", async () => {
  await idp.clearRequests();
  const form = new URLSearchParams({
    client_id: "dev-client",
    redirect_uri: REDIRECT_URI,
    response_type: "code",
    scope: "openid",
    login: "bob",
    password: "pw",
  });
  await fetch(`${idp.url}/authorize`, { method: "POST", body: form, redirect: "manual" });
  await fetch(`${idp.url}/token`, {
    method: "POST",
    body: new URLSearchParams({ grant_type: "client_credentials", client_id: "web-app", client_secret: "nope" }),
  });
  const all = await idp.requests();
  expect(all.map((r) => [r.endpoint, r.status, r.error])).toEqual([["/authorize", 302, undefined], ["/token", 401, "invalid_client"]]);
  expect(all[0]!.params.password).toBe("***");
  expect((await idp.requests({ client_id: "web-app" })).map((r) => r.endpoint)).toEqual(["/token"]);
  await idp.clearRequests();
  expect(await idp.requests()).toEqual([]);
});

test("claim mappings given to startIdp reach the tokens", async () => {
  const other = await startIdp({ claimMappings: [{ client: "dev-client", claims: { team: "qa" } }] });
  const form = new URLSearchParams({ client_id: "dev-client", redirect_uri: REDIRECT_URI, response_type: "code", scope: "openid", login: "x" });
  const code = new URL((await fetch(`${other.url}/authorize`, { method: "POST", body: form, redirect: "manual" })).headers.get("location")!).searchParams.get(
    "code",
  )!;
  const token = await fetch(`${other.url}/token`, {
    method: "POST",
    body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, client_id: "dev-client" }),
  });
  const { access_token } = (await token.json()) as { access_token: string };
  const info = (await (await fetch(`${other.url}/userinfo`, { headers: { authorization: `Bearer ${access_token}` } })).json()) as Record<string, unknown>;
  expect(info.team).toBe("qa");
  await other.stop();
});
