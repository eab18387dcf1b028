import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, test } from "vitest";
import { nodeRuntime } from "#lib/adapters/node";
import type { HostRuntime, RunningServer } from "#lib/runtime";
import { runToEnd } from "#test/runtimes/processes.ts";
import { runIdpCli } from "./cli.ts";
import { KIDS } from "./domain/keys.ts";

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
    terminal: false,
    memoryUsage: () => ({ rss: 0, heapUsed: 0 }),
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
        "  post-logout-redirect-uris: [] # default",
        "  cors-origins: [] # default",
        '  users-file: "" # default',
        '  signing-keys-file: "" # default',
        '  claim-mappings-file: "" # default',
        '  jwt-bearer-issuers: "" # default',
        "  access-token-format: opaque # default",
        '  access-token-audience: "" # default',
        "  state: memory # default",
        '  state-auth-token: "" # default',
        "  allowed-hosts: [] # default",
        "  registration: auto # default",
        '  registration-token: "" # default',
        "  require-pushed-authorization-requests: false # default",
        "  preview-redirect-uris: [] # default",
        '  debug-token: "" # default',
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
    await runIdpCli(json.runtime, [
      "print-config",
      "http://127.0.0.1:5556/realms/dev",
      "--format",
      "json",
      "--redirect-uris",
      "http://a/cb",
      "--redirect-uris",
      "http://b/cb",
    ]);
    expect(JSON.parse(json.out.join("\n")).oidc).toMatchObject({ issuer: "http://127.0.0.1:5556/realms/dev", "redirect-uris": ["http://a/cb", "http://b/cb"] });
  });

  test("bad configuration: one line on stderr and exit code 2", async () => {
    const cases: [string[], Record<string, string>, RegExp][] = [
      [["print-config", "--addr", "nowhere"], {}, /^idp: addr from flag:--addr: expected HOST:PORT/],
      [["print-config"], { IDP_ISSUER: "not a url" }, /^idp: issuer from env:IDP_ISSUER: expected an absolute http\(s\) URL/],
      [
        ["print-config", "--profile", "prod"],
        {},
        /^idp: profile "prod" \(from flag:--profile\) needs the profiles file \/home\/dev\/.config\/idp\/profiles.yaml/,
      ],
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

describe("profiles", () => {
  const PROFILES = "/xdg/idp/profiles.yaml";
  const file = { [PROFILES]: "team:\n  oidc:\n    client-id: team-app\nstaging:\n  oidc:\n    client-id: staging-app\n" };

  test("chosen by --profile or IDP_PROFILE; the flag wins; default is optional", async () => {
    const byEnv = fakeRuntime({ XDG_CONFIG_HOME: "/xdg", IDP_PROFILE: "team" }, file);
    await runIdpCli(byEnv.runtime, ["print-config"]);
    expect(byEnv.out.join("\n")).toContain("client-id: team-app # profile:team");
    expect(byEnv.out[0]).toContain("profile team (env:IDP_PROFILE); profiles file /xdg/idp/profiles.yaml");
    const byFlag = fakeRuntime({ XDG_CONFIG_HOME: "/xdg", IDP_PROFILE: "team" }, file);
    await runIdpCli(byFlag.runtime, ["print-config", "--profile", "staging"]);
    expect(byFlag.out.join("\n")).toContain("client-id: staging-app # profile:staging");
    // Neither a file without `default` nor no file at all is an error for the default profile.
    for (const files of [file, {}]) {
      const plain = fakeRuntime({ XDG_CONFIG_HOME: "/xdg" }, files);
      expect(await exitCode(runIdpCli(plain.runtime, ["print-config"]))).toBe(0);
      expect(plain.out.join("\n")).toContain("client-id: dev-client # default");
    }
  });

  test("every broken profile setup stops with one line naming what to fix", async () => {
    const cases: [Record<string, string>, Record<string, string>, string[], RegExp][] = [
      [{ IDP_PROFILE: "ci" }, {}, [], /^idp: profile "ci" \(from env:IDP_PROFILE\) needs the profiles file \/xdg\/idp\/profiles.yaml, which does not exist$/],
      [{}, file, ["--profile", "prod"], /^idp: profile "prod" \(from flag:--profile\) is not in \/xdg\/idp\/profiles.yaml \(profiles there: team, staging\)$/],
      [{}, { [PROFILES]: "team: [\n" }, ["--profile", "team"], /^idp: profiles file \/xdg\/idp\/profiles.yaml is not valid YAML/],
      [{}, { [PROFILES]: "- a list\n" }, [], /^idp: profiles file \/xdg\/idp\/profiles.yaml must be a map of profile names$/],
      [
        {},
        { [PROFILES]: "team:\n  oidc:\n    colour: blue\n" },
        ["--profile", "team"],
        /^idp: unknown field "colour" under oidc in profile:team \(known: issuer, addr, /,
      ],
      [{}, { [PROFILES]: "team:\n  sessions:\n    addr: x\n" }, ["--profile", "team"], /^idp: unknown section "sessions" in profile "team"/],
      [{}, { [PROFILES]: "team:\n  oidc:\n    addr: nowhere\n" }, ["--profile", "team"], /^idp: addr from profile:team: expected HOST:PORT/],
    ];
    for (const [env, files, argv, message] of cases) {
      const { runtime, out, err } = fakeRuntime({ XDG_CONFIG_HOME: "/xdg", ...env }, files);
      expect(await exitCode(runIdpCli(runtime, ["serve-dev", "--addr", "127.0.0.1:0", ...argv])), argv.join(" ")).toBe(2);
      expect(err, JSON.stringify(env) + argv.join(" ")).toHaveLength(1);
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
    for (const word of ["serve-dev [issuer]", "print-config", "gen-keys", "--redirect-uris", "IDP_USERS_FILE", "--profile", "--print-parsed-fields"]) {
      expect(usage).toContain(word);
    }
    const unknown = fakeRuntime();
    expect(await exitCode(runIdpCli(unknown.runtime, ["serve"]))).toBe(2);
    expect(unknown.err[0]).toBe('idp: unknown command "serve"');
    expect(await exitCode(runIdpCli(fakeRuntime().runtime, []))).toBe(2);
  });

  test("gen-keys prints a private JWK set that serve-dev accepts as --signing-keys-file", async () => {
    const gen = fakeRuntime();
    await runIdpCli(gen.runtime, ["gen-keys"]);
    const set = JSON.parse(gen.out.join("\n")) as { keys: { kid: string; kty: string; d: string; n: string }[] };
    expect(set.keys.map((k) => k.kid)).toEqual([...KIDS]);
    expect(set.keys.every((k) => typeof k.d === "string")).toBe(true);
    expect(new Set(set.keys.map((k) => k.kty))).toEqual(new Set(["RSA", "EC", "OKP"]));

    const { runtime } = fakeRuntime({}, { "/work/dir/keys.json": JSON.stringify(set) });
    const server = (await runIdpCli(runtime, ["serve-dev", "--addr", "127.0.0.1:0", "--signing-keys-file", "keys.json"]))!;
    servers.push(server);
    const jwks = (await (await fetch(`http://127.0.0.1:${server.port}/jwks`)).json()) as { keys: { kid: string; n: string; d?: string }[] };
    expect(jwks.keys.find((k) => k.kid === "dev-key-1")?.n).toBe(set.keys.find((k) => k.kid === "dev-key-1")!.n);
    expect(jwks.keys.map((k) => k.kid)).toEqual([...KIDS]);
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
    const page = await (await fetch(
      `${base}/authorize?client_id=my-app&response_type=code&scope=openid&redirect_uri=${encodeURIComponent("http://localhost:3000/callback")}`,
    )).text();
    expect(page).toContain('data-login="carol"');
    // The seeded password is enforced.
    const form = new URLSearchParams({
      client_id: "my-app",
      redirect_uri: "http://localhost:3000/callback",
      response_type: "code",
      scope: "openid",
      login: "carol",
      password: "wrong",
    });
    expect((await fetch(`${base}/authorize`, { method: "POST", body: form, redirect: "manual" })).status).toBe(401);
  });

  test("--print-parsed-fields names the winning source of each field, one field per layer", async () => {
    const files = {
      "/xdg/idp/profiles.yaml": "team:\n  oidc:\n    client-id: profile-app\n    client-secret: team-secret-xyz\n    redirect-uris: [http://profile.test/cb]\n",
      "/work/dir/idp.yaml": "oidc:\n  client-id: config-app\n  redirect-uris: [http://127.0.0.1:4000/cb]\n  issuer: http://config.test\n",
    };
    const env = { XDG_CONFIG_HOME: "/xdg", IDP_PROFILE: "team", IDP_CLIENT_ID: "env-app", IDP_ISSUER: "http://env.test" };
    const { runtime, out } = fakeRuntime(env, files);
    const argv = ["serve-dev", "http://127.0.0.1:9/realms/positional", "--config-file", "idp.yaml", "--addr", "127.0.0.1:0", "--print-parsed-fields"];
    const server = (await runIdpCli(runtime, argv))!;
    servers.push(server);
    const rows = Object.fromEntries(
      out.join("\n").split("\n").slice(1, 10).map((line) => {
        const [field, ...rest] = line.split(/\s{2,}/);
        return [field, rest];
      }),
    );
    expect(rows).toEqual({
      issuer: ["http://127.0.0.1:9/realms/positional", "positional:0"],
      addr: ["127.0.0.1:0", "flag:--addr"],
      "client-id": ["env-app", "env:IDP_CLIENT_ID"],
      "client-secret": ["team***", "profile:team"],
      "redirect-uris": ["http://127.0.0.1:4000/cb", "config:idp.yaml"],
      "post-logout-redirect-uris": ["(empty list)", "default"],
      "cors-origins": ["(empty list)", "default"],
      "users-file": ["(empty)", "default"],
      "signing-keys-file": ["(empty)", "default"],
    });
    expect(out.join("\n")).toContain("(profile team (env:IDP_PROFILE); profiles file /xdg/idp/profiles.yaml)");
    expect(out.join("\n")).not.toContain("team-secret-xyz");
    // The server runs with exactly those values.
    const base = `http://127.0.0.1:${server.port}`;
    const discovery = (await (await fetch(`${base}/realms/positional/.well-known/openid-configuration`)).json()) as { issuer: string };
    expect(discovery.issuer).toBe("http://127.0.0.1:9/realms/positional");
    const login = new URLSearchParams({ client_id: "env-app", redirect_uri: "http://127.0.0.1:4000/cb", response_type: "code", scope: "openid", login: "x" });
    const res = await fetch(`${base}/authorize`, { method: "POST", body: login, redirect: "manual" });
    expect(res.headers.get("location")).toMatch(/^http:\/\/127\.0\.0\.1:4000\/cb\?code=/);
    const token = await fetch(`${base}/token`, {
      method: "POST",
      body: new URLSearchParams({ grant_type: "client_credentials", client_id: "env-app", client_secret: "team-secret-xyz" }),
    });
    expect(token.status).toBe(200);
  });

  test("a positional issuer and IDP_USERS inline are honored", async () => {
    const { runtime } = fakeRuntime({ IDP_USERS: '[{"login":"dora","category":"Inline"}]' });
    const server = (await runIdpCli(runtime, ["serve-dev", "http://127.0.0.1:1/realms/dev", "--addr", "127.0.0.1:0"]))!;
    servers.push(server);
    const base = `http://127.0.0.1:${server.port}`;
    const discovery = (await (await fetch(`${base}/realms/dev/.well-known/openid-configuration`)).json()) as { issuer: string };
    expect(discovery.issuer).toBe("http://127.0.0.1:1/realms/dev");
    const page = await (await fetch(
      `${base}/authorize?client_id=dev-client&response_type=code&scope=openid&redirect_uri=${encodeURIComponent("http://localhost:3000/callback")}`,
    )).text();
    expect(page).toContain('data-login="dora"');
  });

  test("bad users, keys or conflicting settings stop before listening, with exit code 2", async () => {
    const cases: [Record<string, string>, Record<string, string>, string[], RegExp][] = [
      [
        {},
        { "/work/dir/u.yaml": "users:\n  - login: carol\n    colour: blue\n" },
        ["--users-file", "u.yaml"],
        /^idp: users file u.yaml: invalid user at users\[0\]: .*colour/,
      ],
      [{}, { "/work/dir/u.yaml": "users: [\n" }, ["--users-file", "u.yaml"], /^idp: users file u.yaml: not valid YAML or JSON/],
      [{}, { "/work/dir/u.yaml": "users:\n  - login: a\n  - login: A\n" }, ["--users-file", "u.yaml"], /duplicate login "a"/],
      [{}, {}, ["--users-file", "none.yaml"], /^idp: users-file none.yaml \(from flag:--users-file\) does not exist$/],
      [
        { IDP_USERS: "[]" },
        { "/work/dir/u.yaml": "users: []\n" },
        ["--users-file", "u.yaml"],
        /^idp: both IDP_USERS and users-file \(from flag:--users-file\) are set; use one$/,
      ],
      [{ IDP_USERS: "- login: 5" }, {}, [], /^idp: IDP_USERS: /],
      [{}, { "/work/dir/k.json": "{}" }, ["--signing-keys-file", "k.json"], /^idp: signing keys file k.json: signing keys must be a JWK set/],
      [
        {},
        { "/work/dir/k.json": '{"keys":[{"kid":"dev-key-1","kty":"RSA","n":"AQAB","e":"AQAB","d":"AQAB"}]}' },
        ["--signing-keys-file", "k.json"],
        /^idp: signing keys file k.json: dev-key-1 is not a usable RS256 private key/,
      ],
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

  test("beyond loopback only with a debug token, and no token too short to be one (exit code 2, before listening)", async () => {
    const cases: [Record<string, string>, string[], RegExp][] = [
      [{}, ["--addr", "0.0.0.0:0"], /^idp: refusing to listen on 0\.0\.0\.0:0 \(from flag:--addr\) without a debug token: .*--debug-token or IDP_DEBUG_TOKEN/],
      [{ IDP_ADDR: "192.168.1.20:0" }, [], /^idp: refusing to listen on 192\.168\.1\.20:0 \(from env:IDP_ADDR\) without a debug token/],
      [{ IDP_DEBUG_TOKEN: "short" }, ["--addr", "127.0.0.1:0"], /IDP_DEBUG_TOKEN.*at least 16/],
    ];
    for (const [env, argv, message] of cases) {
      const { runtime, err } = fakeRuntime(env, {});
      expect(await exitCode(runIdpCli(runtime, ["serve-dev", ...argv])), argv.join(" ")).toBe(2);
      expect(err[0]).toMatch(message);
    }
  });
});

describe("the real entries", () => {
  const root = fileURLToPath(new URL("../..", import.meta.url));
  const run = (argv: string[], env: Record<string, string>) =>
    runToEnd(argv[0]!, argv.slice(1), { cwd: root, env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent-home", ...env } });
  const entries = {
    node: [process.execPath, "lib/adapters/node/run.mjs", "apps/idp/entries/node.ts"],
    deno: ["node_modules/deno/deno", "run", "-A", "apps/idp/entries/deno.ts"],
  };

  test("Node and Deno print the same configuration and the same errors", async () => {
    const args = ["print-config", "http://127.0.0.1:5556/realms/dev", "--addr", "127.0.0.1:7000", "--redirect-uris", "http://a.test/cb,http://b.test/cb"];
    const env = { IDP_CLIENT_SECRET: "web-app-secret" };
    const [node, deno] = await Promise.all([run([...entries.node, ...args], env), run([...entries.deno, ...args], env)]);
    expect(node.code, node.stderr).toBe(0);
    expect(node.stdout).toContain("client-secret: web-*** # env:IDP_CLIENT_SECRET");
    expect(node.stdout).toContain("issuer: http://127.0.0.1:5556/realms/dev # positional:0");
    expect(deno.stdout).toBe(node.stdout);
    const bad = ["print-config", "--profile", "ci"];
    const [nodeBad, denoBad] = await Promise.all([run([...entries.node, ...bad], {}), run([...entries.deno, ...bad], {})]);
    expect(nodeBad.code).toBe(2);
    expect(nodeBad.stderr).toBe(
      'idp: profile "ci" (from flag:--profile) needs the profiles file /nonexistent-home/.config/idp/profiles.yaml, which does not exist\n',
    );
    expect(denoBad.code).toBe(2);
    expect(denoBad.stderr).toBe(nodeBad.stderr);
  });
});
