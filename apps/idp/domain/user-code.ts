/** Device-grant user codes: 8 characters of an unambiguous alphabet, shown `XXXX-XXXX`. */
import type { RandomBytes } from "./random.ts";

export const USER_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/** A fresh code in display form. 32 letters divide 256, so `byte & 31` has no modulo bias. */
export function generateUserCode(random: RandomBytes): string {
  const chars = Array.from(random(8), (b) => USER_CODE_ALPHABET[b & 31]!);
  return `${chars.slice(0, 4).join("")}-${chars.slice(4).join("")}`;
}

/**
 * What a person typed, in display form: case, spaces and hyphens do not matter. Anything that is
 * not 8 characters of the alphabet afterwards is not a user code (undefined).
 */
export function normalizeUserCode(typed: string): string | undefined {
  const compact = typed.toUpperCase().replace(/[\s-]+/g, "");
  if (compact.length !== 8) return undefined;
  for (const ch of compact) if (!USER_CODE_ALPHABET.includes(ch)) return undefined;
  return `${compact.slice(0, 4)}-${compact.slice(4)}`;
}
