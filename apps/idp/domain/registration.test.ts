import { describe, expect, it } from "vitest";
import { redirectUriAllowed } from "./clients.ts";
import { OAuthError } from "./errors.ts";
import {
  checkUpdateBody,
  clientInformation,
  hashRegistrationToken,
  MAX_METADATA_CHARS,
  redirectUriProblem,
  registeredClient,
  type RegisteredClientRecord,
  registrationTokenMatches,
  validateRegistration,
} from "./registration.ts";

const GRANTS = ["authorization_code", "refresh_token", "client_credentials"];
const ctx = { grantTypes: GRANTS, trusted: false };
const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (err) {
    if (err instanceof OAuthError) return err.error;
    throw err;
  }
  return undefined;
};

describe("validateRegistration", () => {
  it("fills in the RFC 7591 §2 defaults and drops unknown fields", () => {
    const m = validateRegistration({ redirect_uris: ["https://rp.example/cb"], unknown_field: 1 }, ctx);
    expect(m).toEqual({
      redirect_uris: ["https://rp.example/cb"],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      application_type: "web",
      token_endpoint_auth_method: "client_secret_basic",
    });
  });

  it("a client without the code grant needs no redirect URIs and has no response types", () => {
    const m = validateRegistration({ grant_types: ["client_credentials"] }, ctx);
    expect(m.response_types).toEqual([]);
  });

  it("takes the client model's JWT and logout metadata by their registered names", () => {
    const m = validateRegistration(
      {
        redirect_uris: ["https://rp.example/cb"],
        token_endpoint_auth_method: "private_key_jwt",
        jwks: { keys: [{ kty: "EC", crv: "P-256", x: "x", y: "y" }] },
        id_token_signed_response_alg: "ES256",
        request_object_signing_alg: "none",
        backchannel_logout_uri: "http://127.0.0.1:4000/bc",
        frontchannel_logout_uri: "https://rp.example/fc",
        post_logout_redirect_uris: ["https://rp.example/"],
        require_pushed_authorization_requests: true,
      },
      ctx,
    );
    const client = registeredClient({ client_id: "c1", client_id_issued_at: 1, registration_token_hash: "h", metadata: m });
    expect(client.token_endpoint_auth_method).toBe("private_key_jwt");
    expect(client.id_token_signed_response_alg).toBe("ES256");
    expect(client.require_pushed_authorization_requests).toBe(true);
    expect([...client.post_logout_redirect_uris]).toEqual(["https://rp.example/"]);
    expect(client.secret).toBeUndefined();
  });

  it("answers invalid_redirect_uri or invalid_client_metadata (RFC 7591 §3.2.2)", () => {
    const cases: [unknown, string][] = [
      [{ redirect_uris: [] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["https://rp.example/cb#x"] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["http://rp.example/cb"] }, "invalid_redirect_uri"],
      [{ redirect_uris: [42] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["https://rp.example/cb"], response_types: ["code", "id_token"] }, "invalid_client_metadata"],
      [{ redirect_uris: ["https://rp.example/cb"], grant_types: ["password"] }, "invalid_client_metadata"],
      [{ redirect_uris: ["https://rp.example/cb"], scope: "openid\u0000" }, "invalid_client_metadata"],
      [{ redirect_uris: ["https://rp.example/cb"], subject_type: "pairwise" }, "invalid_client_metadata"],
      [{ redirect_uris: ["https://rp.example/cb"], redirect_uri_patterns: ["https://*.rp.example/cb"] }, "invalid_client_metadata"],
      [null, "invalid_client_metadata"],
    ];
    for (const [body, code] of cases) expect(codeOf(() => validateRegistration(body, ctx)), JSON.stringify(body)).toBe(code);
  });

  it("patterns need the initial access token, and follow the pattern rules", () => {
    const trusted = { ...ctx, trusted: true };
    const m = validateRegistration({ redirect_uris: ["https://rp.example/cb"], redirect_uri_patterns: ["https://*.pr.rp.example/cb"] }, trusted);
    const client = registeredClient({ client_id: "c", client_id_issued_at: 1, registration_token_hash: "h", metadata: m });
    expect(redirectUriAllowed(client, "https://pr-1.pr.rp.example/cb")).toBe(true);
    expect(redirectUriAllowed(client, "https://a.b.pr.rp.example/cb")).toBe(false);
    expect(codeOf(() => validateRegistration({ redirect_uris: ["https://rp.example/cb"], redirect_uri_patterns: ["https://*.co.uk/cb"] }, trusted))).toBe(
      "invalid_redirect_uri",
    );
  });
});

describe("bounds (what anyone may make the provider keep or connect to)", () => {
  const trusted = { ...ctx, trusted: true };
  const body = (extra: Record<string, unknown>) => ({ redirect_uris: ["https://rp.example/cb"], ...extra });

  it("metadata up to MAX_METADATA_CHARS as JSON", () => {
    expect(codeOf(() => validateRegistration(body({ contacts: ["c".repeat(900)] }), ctx))).toBeUndefined();
    const contacts = Array.from({ length: Math.ceil(MAX_METADATA_CHARS / 900) }, () => "c".repeat(900));
    expect(codeOf(() => validateRegistration(body({ contacts }), trusted))).toBe("invalid_client_metadata");
    expect(codeOf(() => validateRegistration(body({ redirect_uris: contacts.map((c) => `https://rp.example/${c}`) }), ctx))).toBe("invalid_client_metadata");
  });

  it("a back-channel logout URI beyond loopback only with the initial access token; jwks_uri on loopback only", () => {
    for (const uri of ["https://internal.example/bc", "https://127.0.0.2:8443/bc", "https://10.0.0.1/bc"]) {
      expect(codeOf(() => validateRegistration(body({ backchannel_logout_uri: uri }), ctx)), uri).toBe("invalid_client_metadata");
      expect(codeOf(() => validateRegistration(body({ backchannel_logout_uri: uri }), trusted)), uri).toBeUndefined();
    }
    for (const uri of ["http://127.0.0.1:4000/bc", "http://localhost:4000/bc", "https://[::1]/bc"]) {
      expect(codeOf(() => validateRegistration(body({ backchannel_logout_uri: uri }), ctx)), uri).toBeUndefined();
    }
    const keys = (jwks_uri: string) => body({ token_endpoint_auth_method: "private_key_jwt", jwks_uri });
    expect(codeOf(() => validateRegistration(keys("https://rp.example/jwks"), trusted))).toBe("invalid_client_metadata");
    expect(codeOf(() => validateRegistration(keys("http://127.0.0.1:4000/jwks"), ctx))).toBeUndefined();
  });
});

describe("redirect URI rules", () => {
  it("https, loopback http, and reverse-domain schemes for native apps", () => {
    expect(redirectUriProblem("https://rp.example/cb", "web")).toBeUndefined();
    for (const uri of ["http://localhost:3000/cb", "http://127.0.0.1/cb", "http://[::1]:8080/cb"]) expect(redirectUriProblem(uri, "web"), uri).toBeUndefined();
    expect(redirectUriProblem("com.example.app:/cb", "native")).toBeUndefined();
    expect(redirectUriProblem("com.example.app:/cb", "web")).toBeDefined();
    expect(redirectUriProblem("myapp:/cb", "native")).toBeDefined();
    expect(redirectUriProblem("data:text/html,x", "native")).toBeDefined();
    expect(redirectUriProblem("https://user:pw@rp.example/cb", "web")).toBeDefined();
  });
});

describe("management", () => {
  const record = async (): Promise<RegisteredClientRecord> => ({
    client_id: "c1",
    client_secret: "s3cret",
    client_id_issued_at: 1,
    registration_token_hash: await hashRegistrationToken("rat"),
    metadata: validateRegistration({ redirect_uris: ["https://rp.example/cb"] }, ctx),
  });

  it("keeps only a hash of the registration access token, and checks it", async () => {
    const r = await record();
    expect(JSON.stringify(r)).not.toContain('"rat"');
    expect(await registrationTokenMatches(r, "rat")).toBe(true);
    expect(await registrationTokenMatches(r, "rat2")).toBe(false);
  });

  it("the information response names the client, its secret and how to manage it", async () => {
    const info = clientInformation(await record(), { token: "rat", uri: "https://op.example/register/c1" });
    expect(info).toMatchObject({
      client_id: "c1",
      client_secret: "s3cret",
      client_secret_expires_at: 0,
      client_id_issued_at: 1,
      registration_access_token: "rat",
      registration_client_uri: "https://op.example/register/c1",
      token_endpoint_auth_method: "client_secret_basic",
    });
  });

  it("an update must name the client and may not set what the provider sets (RFC 7592 §2.2)", () => {
    expect(codeOf(() => checkUpdateBody({ client_id: "c1" }, "c1", "s"))).toBeUndefined();
    expect(codeOf(() => checkUpdateBody({ client_id: "c1", client_secret: "s" }, "c1", "s"))).toBeUndefined();
    expect(codeOf(() => checkUpdateBody({ client_id: "c2" }, "c1", "s"))).toBe("invalid_request");
    expect(codeOf(() => checkUpdateBody({ client_id: "c1", client_secret: "t" }, "c1", "s"))).toBe("invalid_request");
    expect(codeOf(() => checkUpdateBody({ client_id: "c1", client_id_issued_at: 5 }, "c1", "s"))).toBe("invalid_request");
  });
});
