import { describe, expect, it } from "vitest";
import { firstRequestBanner } from "./worker-banner.ts";

describe("a Worker's banner", () => {
  it("is printed once, at the first request, with that request's origin", () => {
    const printed: string[] = [];
    const banner = firstRequestBanner("identity provider", (o) => [["debug page", `${o}/debug/ui`], ["unset", undefined]], (t) => printed.push(t));
    banner(new Request("http://127.0.0.1:5556/healthz"));
    banner(new Request("http://127.0.0.1:5556/other"));
    expect(printed).toEqual(["\nidentity provider  http://127.0.0.1:5556\n  debug page  http://127.0.0.1:5556/debug/ui\n"]);
  });
});
