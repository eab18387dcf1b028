import { describe, expect, it } from "vitest";
import { isPkceMethod, isWellFormedPkceValue, verifyPkce } from "./pkce.ts";

// RFC 7636 Appendix B.
const VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

describe("pkce", () => {
  it("S256 matches the RFC 7636 example and rejects another verifier", async () => {
    expect(await verifyPkce("S256", CHALLENGE, VERIFIER)).toBe(true);
    expect(await verifyPkce("S256", CHALLENGE, VERIFIER.replace("d", "e"))).toBe(false);
  });
  it("plain compares the verifier itself", async () => {
    expect(await verifyPkce("plain", VERIFIER, VERIFIER)).toBe(true);
    expect(await verifyPkce("plain", VERIFIER, VERIFIER + "x")).toBe(false);
  });
  it("refuses malformed verifiers even when they would match", async () => {
    expect(await verifyPkce("plain", "short", "short")).toBe(false);
    expect(isWellFormedPkceValue("a".repeat(42))).toBe(false);
    expect(isWellFormedPkceValue("a".repeat(43))).toBe(true);
    expect(isWellFormedPkceValue("a".repeat(129))).toBe(false);
    expect(isWellFormedPkceValue("a".repeat(42) + "!")).toBe(false);
  });
  it("knows its methods", () => {
    expect(isPkceMethod("S256")).toBe(true);
    expect(isPkceMethod("plain")).toBe(true);
    expect(isPkceMethod("S512")).toBe(false);
  });
});
