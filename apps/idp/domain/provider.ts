/**
 * The provider's runtime context: configuration (issuer, clients, scenarios), the clock (with the
 * debug offset), randomness, the state store and the signing keys. Routes get one `Provider` and
 * call the domain through it; nothing here knows about HTTP.
 */
import type { JWK } from "jose";
import type { Logger } from "../../../lib/log.ts";
import type { IdpStateStore, StateKind } from "../state/store.ts";
import { buildClients, type Client, type ClientConfig } from "./clients.ts";
import type { User } from "./claims.ts";
import { KIDS, loadKeyRing, parseConfiguredKeys, type KeyRing, type Kid } from "./keys.ts";
import { opaqueSecret, pooledCryptoRandom, type RandomBytes } from "./random.ts";
import { JWKS_MODES, type JwksMode } from "./records.ts";
import { BUILTIN_SCENARIOS, ScenarioRegistry, fromSeeded } from "./scenarios.ts";
import { normalizeLogin, parseSeededUsers, syntheticSub, type SeededUser } from "./users.ts";

export interface ProviderOptions {
  /** Issuer URL; `{origin}` is replaced by the origin of each request. */
  issuer: string;
  clientId?: string;
  clientSecret?: string;
  redirectUris?: string[];
  users?: unknown;
  clients?: ClientConfig[];
  signingKeys?: unknown;
  state: IdpStateStore;
  now: () => number;
  random?: RandomBytes;
  sleep: (ms: number) => Promise<void>;
  tokenSlowMs: number;
  jwksSlowMs: number;
  /** Access tokens: opaque (the spec's default) or signed JWTs (RFC 9068) that a resource server
   * can verify against /jwks without calling back. */
  accessTokenFormat?: AccessTokenFormat;
  /** `aud` of JWT access tokens (default: the client id). */
  accessTokenAudience?: string;
  logger: Logger;
}

export type AccessTokenFormat = "opaque" | "jwt";

const ORIGIN = "{origin}";
/** Writes between two amortised prunes of expired state. */
const PRUNE_EVERY = 64;

/**
 * Most live records kept per kind, whatever their lifetime: beyond it the oldest go first. Pruning
 * bounds memory over time; this bounds it under a burst (a load test makes 24-hour sessions and
 * 1-hour tokens far faster than they expire). Generous for any development use.
 */
export const MAX_LIVE: Partial<Record<StateKind, number>> = {
  session: 10_000,
  code: 10_000,
  used_code: 10_000,
  access_token: 20_000,
  refresh_token: 20_000,
  device_grant: 10_000,
  user_code: 10_000,
  replay: 20_000,
};

export class Provider {
  readonly clients: Map<string, Client>;
  readonly random: RandomBytes;
  readonly logger: Logger;
  /** The issuer's path ("" or "/realms/dev"): every endpoint is also served under it. */
  readonly issuerPath: string;
  private readonly seeded: SeededUser[];
  private registry: ScenarioRegistry;
  private keyRing?: Promise<KeyRing>;
  /** The key ring once loaded, for answers that must not wait a tick (the /jwks fast path). */
  private loadedKeyRing?: KeyRing;
  private writes = 0;
  private lastLimitWarning = -Infinity;
  private readonly interned = new Map<string, string>();

  constructor(readonly options: ProviderOptions) {
    this.random = options.random ?? pooledCryptoRandom();
    this.logger = options.logger;
    this.clients = buildClients(options);
    this.seeded = parseSeededUsers(options.users);
    parseConfiguredKeys(options.signingKeys); // fail at start-up, not at the first login
    this.issuerPath = issuerPathOf(options.issuer);
    this.registry = this.buildRegistry();
  }

  get state(): IdpStateStore {
    return this.options.state;
  }

  // -- issuer ----------------------------------------------------------------------------------

  issuerFor(requestUrl: string): string {
    const template = this.options.issuer;
    if (!template.includes(ORIGIN)) return template;
    return template.replace(ORIGIN, new URL(requestUrl).origin).replace(/\/+$/, "");
  }

  // -- clock -----------------------------------------------------------------------------------

  clockOffsetMs(): number {
    return this.state.get<number>("setting", "clock_offset_ms") ?? 0;
  }

  now(): number {
    return this.options.now() + this.clockOffsetMs();
  }

  advanceClock(seconds: number): void {
    this.state.set("setting", "clock_offset_ms", this.clockOffsetMs() + seconds * 1000);
  }

  // -- state helpers ---------------------------------------------------------------------------

  secret(): string {
    return opaqueSecret(this.random);
  }

  /** Identifies one grant (the tokens a code or device approval led to); never shown to clients. */
  grantId(): string {
    return opaqueSecret(this.random, 16);
  }

  /**
   * One shared copy of a repeated small string (logins, scopes), so thousands of live records for
   * the same user do not each hold their own. The table is dropped when it gets large.
   */
  intern(value: string): string {
    const known = this.interned.get(value);
    if (known !== undefined) return known;
    if (this.interned.size >= 10_000) this.interned.clear();
    this.interned.set(value, value);
    return value;
  }

  /** Every write goes through here so expired records are pruned, amortised over writes. */
  put<T>(kind: Parameters<IdpStateStore["set"]>[0], key: string, value: T, pruneAt?: number): void {
    this.state.set(kind, key, value, pruneAt);
    if (++this.writes % PRUNE_EVERY === 0) {
      this.state.prune(this.now());
      for (const [k, max] of Object.entries(MAX_LIVE)) {
        const dropped = this.state.trimOldest(k as StateKind, max);
        if (dropped > 0 && Date.now() - this.lastLimitWarning > 60_000) {
          this.lastLimitWarning = Date.now();
          this.logger.warn("state limit reached: oldest records dropped", { kind: k, dropped, max });
        }
      }
    }
  }

  // -- key endpoint mode -----------------------------------------------------------------------

  jwksMode(): JwksMode {
    const mode = this.state.get<string>("setting", "jwks_mode");
    return JWKS_MODES.includes(mode as JwksMode) ? (mode as JwksMode) : "normal";
  }

  setJwksMode(mode: JwksMode): void {
    this.state.set("setting", "jwks_mode", mode);
  }

  // -- users and scenarios ---------------------------------------------------------------------

  private buildRegistry(): ScenarioRegistry {
    const registry = new ScenarioRegistry(BUILTIN_SCENARIOS);
    for (const user of this.seeded) registry.register(fromSeeded(user, "seeded"));
    for (const [, user] of this.state.entries<SeededUser>("scenario")) registry.register(fromSeeded(user, "runtime"));
    return registry;
  }

  scenarios(): ScenarioRegistry {
    return this.registry;
  }

  addScenario(user: SeededUser): void {
    this.state.set("scenario", user.login, user);
    this.registry = this.buildRegistry();
  }

  /** The user behind a typed login: its scenario if there is one, else the synthetic user. */
  async resolveUser(typed: string): Promise<User> {
    const login = this.intern(normalizeLogin(typed));
    const scenario = this.registry.get(login);
    const sub = scenario?.sub ?? (await syntheticSub(login));
    const user: User = { login, sub };
    if (scenario) user.scenario = scenario;
    if (scenario?.password) user.password = scenario.password;
    return user;
  }

  // -- reset -----------------------------------------------------------------------------------

  reset(kinds: Parameters<IdpStateStore["clear"]>[0]): void {
    this.state.clear(kinds);
    this.registry = this.buildRegistry();
  }

  // -- signing keys ----------------------------------------------------------------------------

  /** The key ring, loaded (or generated) once, in the background, on first use. */
  keys(): Promise<KeyRing> {
    this.keyRing ??= loadKeyRing({
      configured: this.options.signingKeys,
      stored: Object.fromEntries(KIDS.map((kid) => [kid, this.state.get<JWK>("key", kid)]).filter(([, v]) => v)) as Partial<Record<Kid, JWK>>,
      save: (kid, jwk) => this.state.set("key", kid, jwk),
    }).then((ring) => (this.loadedKeyRing = ring));
    return this.keyRing;
  }

  /** The key ring if it has finished loading, else undefined (then await `keys()`). */
  loadedKeys(): KeyRing | undefined {
    return this.loadedKeyRing;
  }

  /** Starts loading keys now without waiting (so the first flow does not pay for key generation). */
  warmUp(): void {
    this.keys().catch((err) => {
      this.logger.error("signing keys unavailable", { error: (err as Error).message });
      this.keyRing = undefined;
    });
  }
}

export function issuerPathOf(issuer: string): string {
  let url: URL;
  try {
    url = new URL(issuer.replace(ORIGIN, "http://origin.invalid"));
  } catch {
    throw new Error(`invalid issuer URL "${issuer}"`);
  }
  if (url.search || url.hash) throw new Error(`issuer "${issuer}" must not have a query or fragment`);
  return url.pathname.replace(/\/+$/, "");
}
