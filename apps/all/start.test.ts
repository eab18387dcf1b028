import { describe, expect, it } from "vitest";
import { splitServiceFlags } from "./start.ts";

describe("npm start's flags", () => {
  it("sends --<service>.<flag> to that service as --<flag>, values and switches alike", () => {
    expect(splitServiceFlags(["--idp.client-id", "my-app", "--idp.redirect-uris=http://localhost:4000/cb", "--routes.dev", "--sessions.threads", "4"])).toEqual({
      idp: ["--client-id", "my-app", "--redirect-uris=http://localhost:4000/cb"],
      sessions: ["--threads", "4"],
      routes: ["--dev"],
    });
    expect(splitServiceFlags([])).toEqual({ idp: [], sessions: [], routes: [] });
  });

  it("refuses a flag without a service, an unknown service, or a stray word", () => {
    for (const argv of [["--client-id", "x"], ["--web.port", "1"], ["stray"]]) {
      expect(() => splitServiceFlags(argv)).toThrow("start takes flags as --<service>.<flag>");
    }
  });
});
