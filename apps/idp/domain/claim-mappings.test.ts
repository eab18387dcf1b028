import { describe, expect, it } from "vitest";
import { ClaimMappingsError, mappedClaimNames, mappedClaims, parseClaimMappings } from "./claim-mappings.ts";

describe("claim mappings", () => {
  const mappings = parseClaimMappings({
    mappings: [
      { claims: { everyone: 1 } },
      { client: "web-app", claims: { department: "R&D" }, id_token: { department: "ID" } },
      { scope: "admin read", access_token: { level: "admin" } },
      { sub: "user-1", userinfo: { vip: true } },
    ],
  });
  it("applies every matching rule in order, per target", () => {
    expect(mappedClaims(mappings, "id_token", { client_id: "web-app", scope: "openid", sub: "u" })).toEqual({ everyone: 1, department: "ID" });
    expect(mappedClaims(mappings, "userinfo", { client_id: "web-app", scope: "openid", sub: "user-1" })).toEqual({ everyone: 1, department: "R&D", vip: true });
    expect(mappedClaims(mappings, "access_token", { client_id: "x", scope: "openid read admin" })).toEqual({ everyone: 1, level: "admin" });
    expect(mappedClaims(mappings, "access_token", { client_id: "x", scope: "openid read" })).toEqual({ everyone: 1 });
    expect(mappedClaims([], "userinfo", { client_id: "x", scope: "" })).toBeUndefined();
  });
  it("a bare list is accepted; an absent document is none", () => {
    expect(parseClaimMappings([{ claims: { a: 1 } }])).toHaveLength(1);
    expect(parseClaimMappings(undefined)).toEqual([]);
  });
  it.each([
    [{ other: [] }, /single key/],
    [[{ clientt: "x" }], /mappings\[0\]/],
    [[{ claims: { sub: "x" } }], /may not set/],
    [[{ userinfo: [] }], /object of claim names/],
    [[{ client: " " }], /must not be empty/],
  ])("refuses %j", (doc, message) => {
    expect(() => parseClaimMappings(doc)).toThrow(ClaimMappingsError);
    expect(() => parseClaimMappings(doc)).toThrow(message);
  });
});

describe("mappedClaimNames", () => {
  it("lists every name once, for discovery", () => {
    const mappings = parseClaimMappings([{ claims: { a: 1 }, userinfo: { b: 2 } }, { id_token: { a: 3 } }]);
    expect(mappedClaimNames(mappings).sort()).toEqual(["a", "b"]);
    expect(mappedClaimNames(undefined)).toEqual([]);
  });
});
