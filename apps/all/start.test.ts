import { describe, expect, it } from "vitest";
import { DEFAULT_ROUTES_ARGS, routesArgs, splitServiceFlags } from "./start.ts";

describe("npm start's flags", () => {
  it("sends --<service>.<flag> to that service as --<flag>, values and switches alike", () => {
    expect(splitServiceFlags(["--idp.client-id", "my-app", "--idp.redirect-uris=http://localhost:4000/cb", "--routes.dev", "--sessions.threads", "4"])).toEqual(
      {
        idp: ["--client-id", "my-app", "--redirect-uris=http://localhost:4000/cb"],
        sessions: ["--threads", "4"],
        routes: ["--dev"],
      },
    );
    expect(splitServiceFlags([])).toEqual({ idp: [], sessions: [], routes: [] });
  });

  it("refuses a flag without a service, an unknown service, or a stray word", () => {
    for (const argv of [["--client-id", "x"], ["--web.port", "1"], ["stray"]]) {
      expect(() => splitServiceFlags(argv)).toThrow("start takes flags as --<service>.<flag>");
    }
  });
});

describe("npm start's route host", () => {
  it("serves the notes example with its provider, policy and database unless a script is named", () => {
    expect(routesArgs({}, ["--dev"])).toEqual({ args: [...DEFAULT_ROUTES_ARGS, "--dev"] });
  });

  it("with ROUTES_SCRIPT or --routes.script: keeps the database, drops the example's provider and policy, and says so", () => {
    for (const [env, flags] of [[{ ROUTES_SCRIPT: "my/app.js" }, []], [{}, ["--script", "my/app.js"]]] as const) {
      const { args, note } = routesArgs(env, flags);
      expect(args).toEqual(["--db", "file:./data/routes.db", ...flags]);
      expect(note).toBe(
        "start: routes serves your script with the route host's own defaults, not the notes example's settings: " +
          "browsers sign in at the provider on http://127.0.0.1:5556 (not one mounted at /idp); no policy is loaded, so a route's action " +
          "must be in the token's scope, roles, groups or permissions (a signed-in browser is mostly refused: 403). Data stays in " +
          "./data/routes.db. To change that, give your script a policy with --routes.policy-file my/policy.yaml; add --routes.issuer " +
          '/idp only if the script mounts app.mount("/idp", require("idp").handler()) (docs/routes.md, "Your own script").',
      );
    }
    // What is named is not dropped, so nothing to say.
    const own = routesArgs({ ROUTES_SCRIPT: "app.js", ROUTES_POLICY_FILE: "p.yaml" }, ["--issuer", "/idp", "--db", ":memory:"]);
    expect(own).toEqual({ args: ["--issuer", "/idp", "--db", ":memory:"], note: undefined });
  });
});
