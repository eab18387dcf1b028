/** The identity provider mounted behind a script, in this process. */
import { describe, expect, it } from "vitest";
import { idpMountable } from "./mountables.ts";
import { call, scriptHost } from "./testing.ts";

describe("require('idp').handler()", () => {
  it("serves the identity provider under the mount's prefix, with that prefix in its issuer", async () => {
    const host = await scriptHost(
      `const app = require("httpmod").app();
       app.mount("/idp", require("idp").handler());
       app.mount("/auth-server", require("idp").handler(), { stripPrefix: true });
       app.get("/").public().handle(() => "home");`,
      { mountables: { idp: { handler: idpMountable() } } },
    );
    const discovery = (await call(host, "GET", "/idp/.well-known/openid-configuration")).json;
    expect(discovery.issuer).toBe("http://host.test/idp");
    expect(discovery.authorization_endpoint).toBe("http://host.test/idp/authorize");
    expect((await call(host, "GET", discovery.jwks_uri.replace("http://host.test", ""))).json.keys.length).toBeGreaterThan(0);
    expect((await call(host, "GET", "/auth-server/.well-known/openid-configuration")).json.issuer).toBe("http://host.test/auth-server");
    expect((await call(host, "GET", "/")).text).toBe("home");
    expect(host.routes().filter((r) => r.kind === "mount").map((r) => r.pattern)).toEqual(["/idp", "/auth-server"]);
    await host.close();
  });
});
