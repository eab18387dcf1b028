import { describe, expect, it, vi } from "vitest";
import { constantTimeEqual, opaqueSecret, pooledCryptoRandom } from "./random.ts";

describe("pooledCryptoRandom", () => {
  it("hands out each pooled byte once, refilling with one getRandomValues call per pool", () => {
    const fill = vi.spyOn(crypto, "getRandomValues");
    try {
      const random = pooledCryptoRandom(64);
      const parts = [random(32), random(16), random(16)];
      expect(fill).toHaveBeenCalledTimes(1);
      // Consecutive copies out of the one pool, which keeps zeros where they were.
      const pool = fill.mock.results[0]!.value as Uint8Array;
      expect(Buffer.from(pool)).toEqual(Buffer.alloc(64));
      expect(new Set(parts.map((p) => Buffer.from(p).toString("hex"))).size).toBe(3);
      random(1);
      expect(fill).toHaveBeenCalledTimes(2);
    } finally {
      fill.mockRestore();
    }
  });

  it("draws a request larger than the pool directly", () => {
    const random = pooledCryptoRandom(16);
    expect(random(100)).toHaveLength(100);
  });

  it("gives secrets of base64url characters, each from one byte", () => {
    expect(opaqueSecret(() => new Uint8Array([0, 25, 26, 51, 52, 61, 62, 63, 64, 255]), 7)).toBe("AZaz09-_A_");
    expect(opaqueSecret(pooledCryptoRandom(), 16)).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it("gives distinct secrets", () => {
    const random = pooledCryptoRandom();
    const secrets = new Set(Array.from({ length: 1000 }, () => opaqueSecret(random)));
    expect(secrets.size).toBe(1000);
    for (const s of secrets) expect(s).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe("constantTimeEqual", () => {
  it("compares by content and length", () => {
    expect(constantTimeEqual("abc", "abc")).toBe(true);
    expect(constantTimeEqual("abc", "abd")).toBe(false);
    expect(constantTimeEqual("abc", "abcd")).toBe(false);
  });
});
