/**
 * Token exchange applies the token scenarios of the subject's user, like the other grants, and
 * takes as an ID token only a JWT typed and shaped as one, for its own client and live session.
 */
import { describe, expect, it } from "vitest";
import { createLogger } from "#lib/log";
import { createIdp } from "../app.ts";
import { endSessions, logoutToken } from "../domain/backchannel.ts";
import { sessionGrantId } from "../domain/grant-ids.ts";
import type { AccessTokenRecord, SessionRecord } from "../domain/records.ts";

const GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";
const AT = "urn:ietf:params:oauth:token-type:access_token";
const IDT = "urn:ietf:params:oauth:token-type:id_token";

async function setup() {
  const { app, provider } = await createIdp({ issuer: "http://idp.test", logger: createLogger({ level: "silent" }), sleep: async () => {} });
  const now = provider.now();
  const token = async (login: string) => {
    const record: AccessTokenRecord = {
      client_id: "dev-client",
      sub: `sub-${login}`,
      login,
      scope: "openid",
      grant_id: `g-${login}`,
      issued_at: now,
      expires_at: now + 3600_000,
    };
    await provider.state.set("access_token", `at-${login}`, record, { pruneAt: record.expires_at, group: record.grant_id });
    return `at-${login}`;
  };
  const exchange = (subject: string) =>
    app.request("http://idp.test/token", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: "Basic " + btoa("web-app:web-app-secret") },
      body: new URLSearchParams({ grant_type: GRANT, subject_token: subject, subject_token_type: AT }),
    });
  return { token, exchange };
}

describe("token exchange and the token scenarios", () => {
  it("token-invalid-grant: invalid_grant; token-server-error: 500 server_error; token-slow: answered after the wait", async () => {
    const { token, exchange } = await setup();
    const invalid = await exchange(await token("token-invalid-grant"));
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { error: string }).error).toBe("invalid_grant");
    const failing = await exchange(await token("token-server-error"));
    expect(failing.status).toBe(500);
    expect(((await failing.json()) as { error: string }).error).toBe("server_error");
    const slow = await exchange(await token("token-slow"));
    expect(slow.status).toBe(200);
    const plain = await exchange(await token("alice"));
    expect(plain.status).toBe(200);
  });
});

/**
 * Explicit typing of ID tokens (RFC 8725 §3.11), one rule at a time: every token below is signed
 * with the provider's own keys for a subject with a live session, so only the rule named refuses it.
 */
describe("token exchange: which signed JWT counts as an ID token", () => {
  async function setupIdTokens() {
    const { app, provider } = await createIdp({ issuer: "http://idp.test", logger: createLogger({ level: "silent" }), sleep: async () => {} });
    const now = provider.now();
    const session: SessionRecord = { login: "alice", sub: "sub-alice", auth_time: now, expires_at: now + 24 * 3600_000, sid: "sid-alice" };
    await provider.state.set("session", "session-alice", session, { pruneAt: session.expires_at, group: session.sub });
    const iat = Math.floor(now / 1000);
    const base = { iss: "http://idp.test", sub: "sub-alice", aud: "web-app", iat, exp: iat + 3600, auth_time: iat, sid: "sid-alice" };
    const sign = async (claims: Record<string, unknown>, typ?: string) => (await provider.keys()).sign({ ...base, ...claims }, undefined, typ);
    const exchange = async (subject: string, type = IDT) => {
      const res = await app.request("http://idp.test/token", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", authorization: "Basic " + btoa("web-app:web-app-secret") },
        body: new URLSearchParams({ grant_type: GRANT, subject_token: subject, subject_token_type: type }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, string> };
    };
    return { provider, session, sign, exchange };
  }

  it("typ JWT with the ID token's claims is one; the new token is in its session's grant and ends with it", async () => {
    const { provider, session, sign, exchange } = await setupIdTokens();
    const res = await exchange(await sign({}));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const record = await provider.state.get<AccessTokenRecord>("access_token", res.body.access_token!);
    expect(record?.grant_id).toBe(sessionGrantId("sid-alice"));
    await endSessions(provider, [{ id: "session-alice", session }]);
    expect(await provider.state.get("access_token", res.body.access_token!)).toBeUndefined();
  });

  it("a logout that revokes the session's tokens while the new token is being stored takes that token too", async () => {
    const { provider, session, sign, exchange } = await setupIdTokens();
    const put = provider.put.bind(provider);
    // The logout lands between the exchange's checks and its write.
    provider.put = async (kind, key, value, options) => {
      if (kind === "access_token") await endSessions(provider, [{ id: "session-alice", session }]);
      return put(kind, key, value, options);
    };
    const res = await exchange(await sign({}));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("invalid_grant");
    expect(await provider.state.entries("access_token")).toEqual([]);
  });

  it("another typ (logout+jwt, at+jwt, secevent+jwt) is refused", async () => {
    const { provider, sign, exchange } = await setupIdTokens();
    const logout = await logoutToken(provider, {
      iss: "http://idp.test",
      sid: "sid-alice",
      sub: "sub-alice",
      client_id: "web-app",
      expires_at: provider.now() + 60_000,
    });
    for (const token of [logout, await sign({}, "at+jwt"), await sign({}, "secevent+jwt")]) {
      const res = await exchange(token);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("invalid_grant");
      expect(res.body.error_description).toMatch(/typ/);
    }
  });

  it("typ JWT with a claim of another class (events, client_id, scope) is refused", async () => {
    const { sign, exchange } = await setupIdTokens();
    const marks = [{ events: { "http://schemas.openid.net/event/backchannel-logout": {} } }, { client_id: "web-app" }, { scope: "openid" }];
    for (const claims of marks) {
      const res = await exchange(await sign(claims));
      expect(res.status, JSON.stringify(claims)).toBe(400);
      expect(res.body.error).toBe("invalid_grant");
      expect(res.body.error_description).toContain(`has ${Object.keys(claims)[0]}`);
    }
  });

  it("an ID token of another client, or of a session that has ended, is refused", async () => {
    const { sign, exchange } = await setupIdTokens();
    for (const claims of [{ aud: "dev-client" }, { aud: ["dev-client", "public-spa"] }, { sid: "sid-ended" }]) {
      const res = await exchange(await sign(claims));
      expect(res.status, JSON.stringify(claims)).toBe(400);
      expect(res.body.error).toBe("invalid_grant");
    }
    const listed = await exchange(await sign({ aud: ["dev-client", "web-app"] }));
    expect(listed.status).toBe(200);
  });
});
