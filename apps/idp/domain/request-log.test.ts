import { describe, expect, it } from "vitest";
import { describeRequest, MASKED, maskParam, type RawRequest, RequestLog } from "./request-log.ts";

const raw = (over: Partial<RawRequest> = {}): RawRequest => ({
  at: Date.UTC(2026, 10, 27),
  method: "POST",
  issuer: "http://127.0.0.1:5556",
  endpoint: "/token",
  query: "",
  dpop: false,
  status: 200,
  ...over,
});

describe("masking", () => {
  it("hides secrets, passwords, verifiers and assertions; shows codes and tokens as 8-character prefixes", () => {
    for (const name of ["client_secret", "password", "code_verifier", "client_assertion", "assertion"]) expect(maskParam(name, "abcdefghijkl")).toBe(MASKED);
    for (const name of ["code", "refresh_token", "token", "device_code", "subject_token", "id_token_hint"]) {
      expect(maskParam(name, "abcdefghijkl")).toBe("abcdefgh…");
    }
    expect(maskParam("code", "short")).toBe(MASKED);
    // Whatever the case, and as a list: the secret was sent even if the endpoint refuses the name.
    for (const name of ["Client_Secret", "CLIENT_SECRET", "password[]", "Code_Verifier[0]"]) expect(maskParam(name, "abcdefghijkl")).toBe(MASKED);
    expect(maskParam("Refresh_Token", "abcdefghijkl")).toBe("abcdefgh…");
    expect(maskParam("scope", "openid email")).toBe("openid email");
  });
  it("reads the client from Basic credentials, never the secret; bearer tokens as prefixes", () => {
    const basic = describeRequest(1, raw({ authorization: "Basic " + btoa("web-app:s3cret"), body: "grant_type=client_credentials" }));
    expect(basic.authorization).toBe("Basic web-app:***");
    expect(basic.client_id).toBe("web-app");
    expect(JSON.stringify(basic)).not.toContain("s3cret");
    expect(describeRequest(2, raw({ authorization: "DPoP abcdefghijklmnop", dpop: true })).authorization).toBe("DPoP abcdefgh…");
    // Basic without a colon may be the secret alone; an unknown scheme is hidden whole.
    const alone = describeRequest(3, raw({ authorization: "Basic " + btoa("s3cret-alone") }));
    expect(alone.authorization).toBe("Basic ***");
    expect(alone.client_id).toBeNull();
    expect(describeRequest(4, raw({ authorization: "s3cret-scheme rest" })).authorization).toBe(MASKED);
  });
  it("finds the error of a thrown OAuth error, a redirect (query or fragment) or a challenge", () => {
    expect(describeRequest(1, raw({ error: "invalid_grant", status: 400 })).error).toBe("invalid_grant");
    expect(describeRequest(1, raw({ location: "http://rp/cb?error=login_required&state=s" })).error).toBe("login_required");
    expect(describeRequest(1, raw({ location: "http://rp/cb#error=access_denied" })).error).toBe("access_denied");
    expect(describeRequest(1, raw({ wwwAuthenticate: 'Bearer realm="idp", error="invalid_token"' })).error).toBe("invalid_token");
    expect(describeRequest(1, raw({ location: "http://rp/cb?code=x" })).error).toBeUndefined();
  });
});

describe("RequestLog", () => {
  it("keeps the newest `size`, oldest first, filtered by endpoint and client; clear empties it", () => {
    const log = new RequestLog(3);
    for (let i = 0; i < 5; i++) log.record(raw({ query: `client_id=c${i % 2}`, endpoint: i % 2 ? "/token" : "/authorize" }));
    expect(log.list().map((r) => r.id)).toEqual([3, 4, 5]);
    expect(log.list({ endpoint: "token" }).map((r) => r.id)).toEqual([4]);
    expect(log.list({ endpoint: "/authorize", client_id: "c0" }).map((r) => r.id)).toEqual([3, 5]);
    expect(log.clear()).toBe(3);
    expect(log.list()).toEqual([]);
    log.record(raw());
    expect(log.list().map((r) => r.id)).toEqual([6]);
  });
});

describe("JSON bodies", () => {
  it("lists a JSON object body's members (registration metadata), secrets masked", () => {
    const described = describeRequest(
      1,
      raw({ endpoint: "/register", body: JSON.stringify({ redirect_uris: ["http://a/cb"], client_secret: "x", client_name: "n" }) }),
    );
    expect(described.params).toEqual({ redirect_uris: '["http://a/cb"]', client_secret: MASKED, client_name: "n" });
    // A JSON list is no object of members: not read as a form either (its text would be a name).
    const list = describeRequest(2, raw({ endpoint: "/register", body: JSON.stringify([{ client_secret: "s3cret-in-list" }]) }));
    expect(list.params).toEqual({});
  });
});
