import { describe, expect, it } from "vitest";
import { generateUserCode, normalizeUserCode, USER_CODE_ALPHABET } from "./user-code.ts";
import { pooledCryptoRandom } from "./random.ts";

describe("user codes", () => {
  it("are XXXX-XXXX over the unambiguous alphabet", () => {
    const random = pooledCryptoRandom();
    for (let i = 0; i < 200; i++) {
      const code = generateUserCode(random);
      expect(code).toMatch(/^[A-Z2-9]{4}-[A-Z2-9]{4}$/);
      for (const ch of code.replace("-", "")) expect(USER_CODE_ALPHABET).toContain(ch);
    }
  });
  it("map random bytes through the alphabet without bias (byte & 31)", () => {
    const bytes = new Uint8Array([0, 1, 31, 32, 33, 255, 64, 8]);
    expect(generateUserCode(() => bytes)).toBe("AB9A-B9AJ");
  });
  it("normalize case, spaces and hyphens", () => {
    expect(normalizeUserCode("abcd-efgh")).toBe("ABCD-EFGH");
    expect(normalizeUserCode(" ab cd-ef gh ")).toBe("ABCD-EFGH");
    expect(normalizeUserCode("A-B-C-D-E-F-G-H")).toBe("ABCD-EFGH");
  });
  it("refuse anything else", () => {
    expect(normalizeUserCode("ABCD-EFG")).toBeUndefined();
    expect(normalizeUserCode("ABCD-EFGHJ")).toBeUndefined();
    expect(normalizeUserCode("ABCD-EFG1")).toBeUndefined(); // 1 is not in the alphabet
    expect(normalizeUserCode("<script>")).toBeUndefined();
  });
});
