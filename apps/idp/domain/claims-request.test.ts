import { describe, expect, it } from "vitest";
import {
  acrSatisfies,
  ClaimsRequestError,
  essentialAcr,
  parseClaimsRequest,
  preselectedAcr,
  requestedAcr,
  requiredSub,
  userinfoContextClaims,
} from "./claims-request.ts";

describe("parseClaimsRequest", () => {
  it("keeps the id_token and userinfo members, ignores others", () => {
    expect(parseClaimsRequest(JSON.stringify({ id_token: { acr: { essential: true, values: ["mfa"] } }, userinfo: { email: null }, x: 1 }))).toEqual({
      id_token: { acr: { essential: true, values: ["mfa"] } },
      userinfo: { email: null },
    });
  });
  it.each([
    ["{", /not valid JSON/],
    ["[]", /JSON object/],
    ["null", /JSON object/],
    [JSON.stringify({ id_token: [] }), /claims\.id_token/],
    [JSON.stringify({ userinfo: { acr: { essential: 1 } } }), /essential/],
    [JSON.stringify({ userinfo: { acr: { values: "x" } } }), /values must be a list/],
    [JSON.stringify({ userinfo: { acr: 5 } }), /claims\.userinfo\.acr/],
    ["x".repeat(5000), /longer than/],
  ])("refuses %s", (text, message) => {
    expect(() => parseClaimsRequest(text)).toThrow(ClaimsRequestError);
    expect(() => parseClaimsRequest(text)).toThrow(message);
  });
});

describe("acr", () => {
  const essentialMfa = { id_token: { acr: { essential: true, value: "mfa" } } };
  it("an essential acr with values is required; a voluntary one is not", () => {
    expect(essentialAcr(essentialMfa)).toEqual(["mfa"]);
    expect(essentialAcr({ id_token: { acr: { values: ["mfa"] } } })).toBeUndefined();
    expect(essentialAcr({ userinfo: { acr: { essential: true } } })).toBeUndefined();
    expect(acrSatisfies("pwd", essentialMfa)).toBe(false);
    expect(acrSatisfies("mfa", essentialMfa)).toBe(true);
    expect(acrSatisfies(undefined, undefined)).toBe(true);
    expect(acrSatisfies(undefined, essentialMfa)).toBe(false);
  });
  it("an essential acr in each member must both be met (the userinfo one is not skipped)", () => {
    const both = { id_token: { acr: { essential: true, values: ["pwd", "mfa"] } }, userinfo: { acr: { essential: true, value: "mfa" } } };
    expect(essentialAcr(both)).toEqual(["mfa"]);
    expect(acrSatisfies("pwd", both)).toBe(false);
    expect(acrSatisfies("mfa", both)).toBe(true);
    const disjoint = { id_token: { acr: { essential: true, value: "pwd" } }, userinfo: { acr: { essential: true, value: "mfa" } } };
    expect(acrSatisfies("pwd", disjoint)).toBe(false);
    expect(acrSatisfies("mfa", disjoint)).toBe(false);
  });
  it("the login page preselects the first requested level it supports", () => {
    expect(requestedAcr(["gold", "pwd"], essentialMfa)).toEqual(["mfa", "gold", "pwd"]);
    expect(preselectedAcr(["gold", "mfa"], undefined)).toBe("mfa");
    expect(preselectedAcr(["gold"], undefined)).toBe("pwd");
  });
});

describe("requiredSub", () => {
  it("is the id_token member's sub value, when a string", () => {
    expect(requiredSub({ id_token: { sub: { value: "user-x" } } })).toBe("user-x");
    expect(requiredSub({ id_token: { sub: { value: 5 } } })).toBeUndefined();
    expect(requiredSub({ id_token: { sub: null } })).toBeUndefined();
    expect(requiredSub({ userinfo: { sub: { value: "user-x" } } })).toBeUndefined();
  });
});

describe("userinfoContextClaims", () => {
  it("adds acr, amr and auth_time (seconds) only when the userinfo member names them", () => {
    const context = { acr: "mfa", amr: ["pwd", "otp", "mfa"], auth_time: 1_700_000_000_500 };
    expect(userinfoContextClaims({ userinfo: { acr: null, auth_time: { essential: true } } }, context)).toEqual({ acr: "mfa", auth_time: 1_700_000_000 });
    expect(userinfoContextClaims({ id_token: { acr: null } }, context)).toBeUndefined();
    expect(userinfoContextClaims({ userinfo: { email: null } }, context)).toBeUndefined();
  });
});
