/** Token exchange applies the token scenarios of the subject's user, like the other grants. */
import { describe, expect, it } from "vitest";
import { createLogger } from "#lib/log";
import { createIdp } from "../app.ts";
import type { AccessTokenRecord } from "../domain/records.ts";

const GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";
const AT = "urn:ietf:params:oauth:token-type:access_token";

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
