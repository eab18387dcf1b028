/** Back-channel logout settings: URIs by client id, checked at start-up. */
import { describe, expect, it } from "vitest";
import { optionsFromEnv } from "../env-options.ts";
import { BackchannelConfigError, backchannelUris } from "./backchannel-uris.ts";

const CLIENTS = ["dev-client", "web-app"];

describe("backchannelUris", () => {
  it("keeps absolute http(s) URIs of known clients", () => {
    const uris = backchannelUris(CLIENTS, [["web-app", "http://127.0.0.1:4000/bc"], ["dev-client", "https://app.example.test/logout?x=1"]]);
    expect([...uris]).toEqual([["web-app", "http://127.0.0.1:4000/bc"], ["dev-client", "https://app.example.test/logout?x=1"]]);
  });

  it("an unknown client, a relative URI, another scheme or a fragment is a configuration error naming the variable", () => {
    for (const [id, uri] of [["nope", "http://x.test/"], ["web-app", "/bc"], ["web-app", "ftp://x.test/"], ["web-app", "http://x.test/#f"]] as const) {
      let error: unknown;
      try {
        backchannelUris(CLIENTS, [[id, uri]]);
      } catch (err) {
        error = err;
      }
      expect(error, `${id} ${uri}`).toBeInstanceOf(BackchannelConfigError);
      expect((error as BackchannelConfigError).code).toBe("INVALID_ENV");
      expect((error as Error).message).toMatch(/^IDP_BACKCHANNEL_LOGOUT_URIS: /);
    }
  });

  it("IDP_BACKCHANNEL_LOGOUT_URIS is a JSON object of strings; IDP_BACKCHANNEL_TIMEOUT_MS milliseconds", async () => {
    const env = await optionsFromEnv({ IDP_BACKCHANNEL_LOGOUT_URIS: '{"web-app":"http://127.0.0.1:4000/bc"}', IDP_BACKCHANNEL_TIMEOUT_MS: "250" });
    expect(env.backchannelLogoutUris).toEqual({ "web-app": "http://127.0.0.1:4000/bc" });
    expect(env.backchannelTimeoutMs).toBe(250);
    for (const bad of ["[]", "not json", '{"web-app": 5}']) {
      await expect(optionsFromEnv({ IDP_BACKCHANNEL_LOGOUT_URIS: bad }), bad).rejects.toThrow(/IDP_BACKCHANNEL_LOGOUT_URIS/);
    }
    await expect(optionsFromEnv({ IDP_BACKCHANNEL_TIMEOUT_MS: "soon" })).rejects.toThrow(/IDP_BACKCHANNEL_TIMEOUT_MS/);
  });
});
