import { describe, expect, it } from "vitest";
import { buildClients } from "./clients.ts";
import { CorsPolicy, parseCorsOrigin } from "./cors.ts";

describe("parseCorsOrigin", () => {
  it("takes * and origins (one trailing / dropped, lower-cased), nothing with a path, query or credentials", () => {
    expect(parseCorsOrigin("*")).toBe("*");
    expect(parseCorsOrigin(" http://localhost:4000/ ")).toBe("http://localhost:4000");
    expect(parseCorsOrigin("HTTPS://App.Example.test")).toBe("https://app.example.test");
    expect(parseCorsOrigin("capacitor://localhost")).toBe("capacitor://localhost");
    for (const bad of ["localhost:4000", "http://localhost:4000/app", "http://a.test?x", "http://u@a.test", "http://", "", "**"]) {
      expect(parseCorsOrigin(bad), bad).toBeUndefined();
    }
  });
});

describe("CorsPolicy", () => {
  const clients = () => buildClients({ redirectUris: ["http://localhost:4000/callback", "http://[::1]:3000/cb"] }).values();

  it("allows the origins of redirect URIs, a loopback IP literal's on any port, and the configured ones", () => {
    const policy = new CorsPolicy(clients(), ["https://app.example.test/"]);
    for (
      const origin of [
        "http://localhost:4000",
        "http://localhost:8080",
        "http://127.0.0.1:8080",
        "http://127.0.0.1:1234",
        "http://[::1]:9",
        "https://app.example.test",
      ]
    ) {
      expect(policy.allows(origin), origin).toBe(true);
    }
    for (const origin of ["http://localhost:4001", "http://localhost:3000", "https://127.0.0.1:8080", "http://evil.test", "null", ""]) {
      expect(policy.allows(origin), origin).toBe(false);
    }
  });

  it("* allows every origin", () => {
    const policy = new CorsPolicy(clients(), ["*"]);
    for (const origin of ["http://evil.test", "null", "chrome-extension://abc"]) expect(policy.allows(origin), origin).toBe(true);
  });
});
