import { describe, expect, it } from "vitest";
import { matchesRedirectPattern, parseRedirectPattern, RedirectPatternError } from "./redirect-patterns.ts";

describe("redirect URI patterns", () => {
  const p = parseRedirectPattern("https://*.preview.example.com/callback");

  it("the wildcard stands for exactly one DNS label", () => {
    expect(matchesRedirectPattern(p, "https://pr-42.preview.example.com/callback")).toBe(true);
    expect(matchesRedirectPattern(p, "https://a.preview.example.com/callback")).toBe(true);
    for (
      const uri of [
        "https://a.b.preview.example.com/callback", // two labels
        "https://.preview.example.com/callback", // empty
        "https://preview.example.com/callback",
        "https://-x.preview.example.com/callback",
        "https://PR.preview.example.com/callback", // not as a parser writes it
        "https://evil.com#.preview.example.com/callback",
        "https://evil.com/.preview.example.com/callback",
        "https://x@evil.preview.example.com/callback",
        "http://pr-1.preview.example.com/callback",
        "https://pr-1.preview.example.com/callback/more",
        "https://pr-1.preview.example.com/callback?x=1",
        "https://pr-1.preview.example.com:444/callback",
      ]
    ) expect(matchesRedirectPattern(p, uri), uri).toBe(false);
  });

  it("keeps port, path and query exact", () => {
    const q = parseRedirectPattern("https://*.dev.example.org:8443/auth/cb?x=1");
    expect(matchesRedirectPattern(q, "https://feature.dev.example.org:8443/auth/cb?x=1")).toBe(true);
    expect(matchesRedirectPattern(q, "https://feature.dev.example.org/auth/cb?x=1")).toBe(false);
  });

  it("refuses what would reach beyond one team's hosts", () => {
    for (
      const bad of [
        "http://*.preview.example.com/callback", // https only
        "https://*.com/callback", // the registrable domain
        "https://*.co.uk/callback",
        "https://*.vercel.app/callback", // anyone can deploy there
        "https://*.app.github.dev/callback", // anyone's codespace
        "https://*.up.railway.app/callback",
        "https://*.nip.io/callback", // 1-2-3-4.nip.io is anyone's address
        "https://app-*.example.com/callback", // part of a label
        "https://x.*.example.com/callback", // not the leftmost label
        "https://*.*.example.com/callback",
        "https://*.example.com/cb/*",
        "https://*.example.com/callback#f",
        "https://u:p@*.example.com/callback",
        "https://*.Example.com/callback", // not canonical
        "https://*.example.com", // not canonical (no path)
        "https://*.1.2.3/callback",
      ]
    ) expect(() => parseRedirectPattern(bad), bad).toThrow(RedirectPatternError);
  });
});
