import { afterEach, describe, expect, test } from "vitest";
import { nodeRuntime } from "../../lib/adapters/node.ts";
import type { HostRuntime, RunningServer } from "../../lib/runtime.ts";
import { runIdpCli } from "./cli.ts";

class Exit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/** A HostRuntime with files in a map, captured output, and exit as an exception. */
function fakeRuntime(env: Record<string, string> = {}, files: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const runtime: HostRuntime = {
    name: "node",
    args: [],
    env: { HOME: "/home/dev", LOG_LEVEL: "error", ...env },
    cwd: () => "/work/dir",
    readTextFile: async (path) => files[path],
    ensureDir: async () => {},
    resolvePath: (...segments) => segments.reduce((acc, s) => (s.startsWith("/") ? s : `${acc}/${s}`.replace(/\/\.\//g, "/")), ""),
    serve: (fetch, address) => nodeRuntime().serve(fetch, address),
    onShutdown: () => {},
    print: (line) => void out.push(line),
    printError: (line) => void err.push(line),
    exit: (code) => {
      throw new Exit(code);
    },
  };
  return { runtime, out, err };
}

async function exitCode(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
  } catch (e) {
    if (e instanceof Exit) return e.code;
    throw e;
  }
  return 0;
}

const servers: RunningServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

describe("print-config", () => {
  test("prints the defaults as a YAML config file with sources", async () => {
    const { runtime, out } = fakeRuntime();
    expect(await runIdpCli(runtime, ["print-config"])).toBeUndefined();
    expect(out.join("\n")).toBe(
      [
        "# idp configuration: profile default (default); profiles file /home/dev/.config/idp/profiles.yaml",
        "",
        "oidc:",
        "  issuer: http://localhost:5556 # default",
        "  addr: 127.0.0.1:5556 # default",
        "  client-id: dev-client # default",
        '  client-secret: "" # default',
        "  redirect-uris: # default",
        "    - http://localhost:3000/callback",
        "    - http://127.0.0.1:3000/callback",
        '  users-file: "" # default',
        '  signing-keys-file: "" # default',
      ].join("\n"),
    );
  });

  test("every layer shows up, the issuer follows addr, secrets are masked; JSON on request", async () => {
    const files = {
      "/xdg/idp/profiles.yaml": "team:\n  oidc:\n    client-id: team-app\n",
      "/work/dir/idp.yaml": "oidc:\n  addr: 0.0.0.0:7000\n  redirect-uris: [http://localhost:9000/cb]\n",
    };
    const { runtime, out } = fakeRuntime({ XDG_CONFIG_HOME: "/xdg", IDP_PROFILE: "team", IDP_CLIENT_SECRET: "team-secret-123" }, files);
    await runIdpCli(runtime, ["print-config", "--config-file", "idp.yaml"]);
    const text = out.join("\n");
    expect(text).toContain("issuer: http://localhost:7000 # derived:addr");
    expect(text).toContain("addr: 0.0.0.0:7000 # config:idp.yaml");
    expect(text).toContain("client-id: team-app # profile:team");
    expect(text).toContain("client-secret: team*** # env:IDP_CLIENT_SECRET");
    expect(text).not.toContain("team-secret-123");

    const json = fakeRuntime({}, {});
    await runIdpCli(json.runtime, ["print-config", "http://127.0.0.1:5556/realms/dev", "--format", "json", "--redirect-uris", "http://a/cb", "--redirect-uris", "http://b/cb"]);
    expect(JSON.parse(json.out.join("\n")).oidc).toMatchObject({ issuer: "http://127.0.0.1:5556/realms/dev", "redirect-uris": ["http://a/cb", "http://b/cb"] });
  });

  test("bad configuration: one line on stderr and exit code 2", async () => {
    const cases: [string[], Record<string, string>, RegExp][] = [
      [["print-config", "--addr", "nowhere"], {}, /^idp: addr from flag:--addr: expected HOST:PORT/],
      [["print-config"], { IDP_ISSUER: "not a url" }, /^idp: issuer from env:IDP_ISSUER: expected an absolute http\(s\) URL/],
      [["print-config", "--profile", "prod"], {}, /^idp: profile "prod" \(from flag:--profile\) needs the profiles file \/home\/dev\/.config\/idp\/profiles.yaml/],
      [["print-config", "--config-file", "missing.yaml"], {}, /^idp: config file missing.yaml does not exist$/],
      [["print-config", "--frobnicate"], {}, /^idp: unknown option --frobnicate$/],
      [["print-config", "--format", "toml"], {}, /^idp: --format must be yaml or json/],
      [["print-config", "--print-parsed-fields"], {}, /^idp: --print-parsed-fields is not an option of print-config$/],
      [["serve-dev", "--redirect-uris", "/relative"], {}, /^idp: redirect-uris from flag:--redirect-uris: every redirect URI must be an absolute URL$/],
    ];
    for (const [argv, env, message] of cases) {
      const { runtime, out, err } = fakeRuntime(env);
      expect(await exitCode(runIdpCli(runtime, argv)), argv.join(" ")).toBe(2);
      expect(err).toHaveLength(1);
      expect(err[0]).toMatch(message);
      expect(out).toEqual([]);
    }
  });
});

describe("commands", () => {
  test("--help prints the usage with every field; a missing or unknown command exits 2", async () => {
    const { runtime, out } = fakeRuntime();
    await runIdpCli(runtime, ["--help"]);
    const usage = out.join("\n");
    for (const word of ["serve-dev [issuer]", "print-config", "gen-keys", "--redirect-uris", "IDP_USERS_FILE", "--profile", "--print-parsed-fields"]) expect(usage).toContain(word);
    const unknown = fakeRuntime();
    expect(await exitCode(runIdpCli(unknown.runtime, ["serve"]))).toBe(2);
    expect(unknown.err[0]).toBe('idp: unknown command "serve"');
    expect(await exitCode(runIdpCli(fakeRuntime().runtime, []))).toBe(2);
  });

  test("gen-keys prints a private JWK set that serve-dev accepts as --signing-keys-file", async () => {
    const gen = fakeRuntime();
    await runIdpCli(gen.runtime, ["gen-keys"]);
    const set = JSON.parse(gen.out.join("\n")) as { keys: { kid: string; kty: string; d: string; n: string }[] };
    expect(set.keys.map((k) => k.kid)).toEqual(["dev-key-1", "rotated-key-2", "bad-sig-key"]);
    expect(set.keys.every((k) => k.kty === "RSA" && typeof k.d === "string")).toBe(true);

    const { runtime } = fakeRuntime({}, { "/work/dir/keys.json": JSON.stringify(set) });
    const server = (await runIdpCli(runtime, ["serve-dev", "--addr", "127.0.0.1:0", "--signing-keys-file", "keys.json"]))!;
    servers.push(server);
    const jwks = (await (await fetch(`http://127.0.0.1:${server.port}/jwks`)).json()) as { keys: { kid: string; n: string; d?: string }[] };
    expect(jwks.keys.find((k) => k.kid === "dev-key-1")?.n).toBe(set.keys[0]!.n);
    expect(jwks.keys.some((k) => k.d !== undefined)).toBe(false);
  });
});

describe("serve-dev", () => {
  const users = "users:\n  - login: Carol\n    password: pw\n    category: Team\n";

  test("serves with the users file, prints parsed fields, derives the issuer from the real port", async () => {
    const { runtime, out } = fakeRuntime({ IDP_CLIENT_ID: "my-app" }, { "/work/dir/users.yaml": users });
    const server = (await runIdpCli(runtime, ["serve-dev", "--addr", "127.0.0.1:0", "--users-file", "users.yaml", "--print-parsed-fields"]))!;
    servers.push(server);
    const table = out.join("\n");
    expect(table).toMatch(/^field\s+value\s+source$/m);
    expect(table).toMatch(/^users-file\s+users\.yaml\s+flag:--users-file$/m);
    expect(table).toMatch(/^client-id\s+my-app\s+env:IDP_CLIENT_ID$/m);
    const base = `http://127.0.0.1:${server.port}`;
    expect(table).toMatch(new RegExp(`^issuer\\s+http://localhost:${server.port}\\s+derived:addr$`, "m"));
    const discovery = (await (await fetch(`${base}/.well-known/openid-configuration`)).json()) as { issuer: string };
    expect(discovery.issuer).toBe(`http://localhost:${server.port}`);
    const page = await (await fetch(`${base}/authorize?client_id=my-app&response_type=code&scope=openid&redirect_uri=${encodeURIComponent("http://localhost:3000/callback")}`)).text();
    expect(page).toContain('data-login="carol"');
    // The seeded password is enforced.
    const form = new URLSearchParams({ client_id: "my-app", redirect_uri: "http://localhost:3000/callback", response_type: "code", scope: "openid", login: "carol", password: "wrong" });
    expect((await fetch(`${base}/authorize`, { method: "POST", body: form, redirect: "manual" })).status).toBe(401);
  });

  test("a positional issuer and IDP_USERS inline are honored", async () => {
    const { runtime } = fakeRuntime({ IDP_USERS: '[{"login":"dora","category":"Inline"}]' });
    const server = (await runIdpCli(runtime, ["serve-dev", "http://127.0.0.1:1/realms/dev", "--addr", "127.0.0.1:0"]))!;
    servers.push(server);
    const base = `http://127.0.0.1:${server.port}`;
    const discovery = (await (await fetch(`${base}/realms/dev/.well-known/openid-configuration`)).json()) as { issuer: string };
    expect(discovery.issuer).toBe("http://127.0.0.1:1/realms/dev");
    const page = await (await fetch(`${base}/authorize?client_id=dev-client&response_type=code&scope=openid&redirect_uri=${encodeURIComponent("http://localhost:3000/callback")}`)).text();
    expect(page).toContain('data-login="dora"');
  });

  test("bad users, keys or conflicting settings stop before listening, with exit code 2", async () => {
    const cases: [Record<string, string>, Record<string, string>, string[], RegExp][] = [
      [{}, { "/work/dir/u.yaml": "users:\n  - login: carol\n    colour: blue\n" }, ["--users-file", "u.yaml"], /^idp: users file u.yaml: invalid user at users\[0\]: .*colour/],
      [{}, { "/work/dir/u.yaml": "users: [\n" }, ["--users-file", "u.yaml"], /^idp: users file u.yaml: not valid YAML or JSON/],
      [{}, { "/work/dir/u.yaml": "users:\n  - login: a\n  - login: A\n" }, ["--users-file", "u.yaml"], /duplicate login "a"/],
      [{}, {}, ["--users-file", "none.yaml"], /^idp: users-file none.yaml \(from flag:--users-file\) does not exist$/],
      [{ IDP_USERS: "[]" }, { "/work/dir/u.yaml": "users: []\n" }, ["--users-file", "u.yaml"], /^idp: both IDP_USERS and users-file \(from flag:--users-file\) are set; use one$/],
      [{ IDP_USERS: "- login: 5" }, {}, [], /^idp: IDP_USERS: /],
      [{}, { "/work/dir/k.json": "{}" }, ["--signing-keys-file", "k.json"], /^idp: signing keys file k.json: signing keys must be a JWK set/],
      [{}, { "/work/dir/k.json": '{"keys":[{"kid":"dev-key-1","kty":"RSA","n":"AQAB","e":"AQAB","d":"AQAB"}]}' }, ["--signing-keys-file", "k.json"], /^idp: signing keys file k.json: dev-key-1 is not a usable RS256 private key/],
      [{ IDP_SIGNING_KEYS: "not json" }, {}, [], /^idp: IDP_SIGNING_KEYS: not valid JSON/],
      [{ IDP_TOKEN_SLOW_MS: "soon" }, {}, [], /^idp: IDP_TOKEN_SLOW_MS: expected milliseconds/],
    ];
    for (const [env, files, argv, message] of cases) {
      const { runtime, err } = fakeRuntime(env, files);
      expect(await exitCode(runIdpCli(runtime, ["serve-dev", "--addr", "127.0.0.1:0", ...argv])), argv.join(" ")).toBe(2);
      expect(err, argv.join(" ")).toHaveLength(1);
      expect(err[0]).toMatch(message);
    }
  });
});
