/**
 * The provider's runtime context: configuration (issuer, clients, scenarios), the clock (with the
 * debug offset), randomness, the state store and the signing keys. Routes get one `Provider` and
 * call the domain through it; nothing here knows about HTTP.
 */
import type { JWK } from "jose";
import type { Logger } from "#lib/log";
import { namespacedStore, namespaceOf } from "../state/namespace.ts";
import type { IdpStateStore, RecordOptions, StateKind } from "../state/store.ts";
import { backchannelUris } from "./backchannel-uris.ts";
import { buildClients, type Client } from "./clients.ts";
import { registeredClient, type RegisteredClientRecord, type RegistrationPolicy } from "./registration.ts";
import type { User } from "./claims.ts";
import { SigningKeysError } from "./errors.ts";
import { SIGNING_ALGS } from "./algorithms.ts";
import { ACTIVE_KID, generateSigningKey, type KeyRing, type Kid, loadKeyRing, parseConfiguredKeys, ROTATED_KID } from "./keys.ts";
import { issuerPathOf, MAX_LIVE, ORIGIN, type ProviderOptions } from "./provider-options.ts";
import { isLoopbackAddress } from "#lib/http";
import { opaqueSecret, pooledCryptoRandom, type RandomBytes } from "./random.ts";
import { JWKS_MODES, type JwksMode } from "./records.ts";
import { BUILTIN_SCENARIOS, fromSeeded, ScenarioRegistry } from "./scenarios.ts";
import { normalizeLogin, parseSeededUsers, type SeededUser, syntheticSub } from "./users.ts";

// Importers of the provider take its options and bounds from here as well.
export { type AccessTokenFormat, MAX_LIVE, PATH_ISSUER_NAME } from "./provider-options.ts";

/** Writes between two amortised prunes of expired state. */
const PRUNE_EVERY = 64;
/**
 * Writes between two trims of each kind to its ceiling (MAX_LIVE), at every fourth prune: in a
 * database a trim walks a kind's index back to the ceiling's record (~0.3 ms per 10,000 records,
 * for each full kind), far more than the prune of what expired.
 */
const TRIM_EVERY = 4 * PRUNE_EVERY;

/** What other instances may change (through /debug) and each instance reads again per request. */
interface SharedSettings {
  clockOffsetMs: number;
  jwksMode: JwksMode;
  /** Changes whenever a scenario is added or the scenarios are reset. */
  scenariosVersion: string;
  /** Changes whenever the stored keys are rotated. */
  keysVersion: string;
}

const SETTING = { clockOffset: "clock_offset_ms", jwksMode: "jwks_mode", scenarios: "scenarios_version", keys: "keys_version" } as const;

/** Issuers by path whose provider objects are kept (the state of any issuer stays in the store). */
const MAX_PATH_ISSUERS = 256;

interface Core {
  settings: SharedSettings;
  /** The first read of the stored settings (an unshared store is read only then). */
  loaded?: Promise<void>;
  /** The read of the settings that the requests of this turn of the event loop wait for. */
  nextRead?: Promise<void>;
  /** The last read of the settings begun: the next one starts after it (`readSettings`). */
  lastRead?: Promise<void>;
  scenariosRead: boolean;
  registry: ScenarioRegistry;
  keyRing?: Promise<KeyRing>;
  /** The key ring once loaded, for answers that must not wait a tick (the /jwks fast path). */
  loadedKeyRing?: KeyRing;
  writes: number;
  pruning: boolean;
  lastLimitWarning: number;
  interned: Map<string, string>;
  issuers: Map<string, Provider>;
  root: Provider;
  /** Back-channel logout deliveries still running. */
  deliveries: Set<Promise<void>>;
  /** What the amortised pruning runs first (`beforePruning`). */
  prePrune: ((p: Provider) => Promise<void>)[];
}

export class Provider {
  readonly clients: Map<string, Client>;
  readonly random: RandomBytes;
  readonly logger: Logger;
  /** The issuer's path ("" or "/realms/dev"): every endpoint is also served under it. */
  readonly issuerPath: string;
  private readonly seeded: SeededUser[];
  private readonly configuredKeys: Partial<Record<Kid, JWK>>;
  /** The name of an issuer by path (`/{name}/...`); undefined for the configured issuer. */
  readonly issuerName?: string;
  /** This issuer's records in the store (state/namespace.ts). */
  readonly state: IdpStateStore;
  /** The IdP session cookie's name: each issuer has its own sessions. */
  readonly sessionCookie: string;
  /** What every issuer of the provider shares (settings, scenarios, keys, counters). */
  private readonly core: Core;
  /** Back-channel logout URIs by client id. */
  readonly backchannelLogoutUris: Map<string, string>;

  constructor(readonly options: ProviderOptions, parent?: { provider: Provider; name: string }) {
    this.random = options.random ?? pooledCryptoRandom();
    this.logger = options.logger;
    this.clients = parent?.provider.clients ?? buildClients(options);
    this.seeded = parent ? parent.provider.seeded : parseSeededUsers(options.users);
    this.configuredKeys = parent ? parent.provider.configuredKeys : parseConfiguredKeys(options.signingKeys); // fail at start-up, not at the first login
    this.issuerPath = issuerPathOf(options.issuer);
    this.issuerName = parent?.name;
    this.state = namespacedStore(options.state, namespaceOf(this.issuerName));
    this.sessionCookie = parent ? `idp_session.${parent.name}` : "idp_session";
    this.backchannelLogoutUris = parent?.provider.backchannelLogoutUris ??
      backchannelUris(this.clients.keys(), [
        ...Object.entries(options.backchannelLogoutUris ?? {}),
        ...(options.clients ?? []).flatMap((c) => (c.backchannel_logout_uri ? [[c.client_id, c.backchannel_logout_uri] as [string, string]] : [])),
      ]);
    this.core = parent?.provider.core ?? {
      settings: { clockOffsetMs: 0, jwksMode: "normal", scenariosVersion: "", keysVersion: "" },
      scenariosRead: false,
      registry: this.buildRegistry([]),
      writes: 0,
      pruning: false,
      lastLimitWarning: -Infinity,
      interned: new Map(),
      issuers: new Map(),
      root: this,
      deliveries: new Set(),
      prePrune: [],
    };
  }

  /** The whole store, every issuer's records (pruning, back-channel logout on expiry). */
  get store(): IdpStateStore {
    return this.options.state;
  }

  /** The configured issuer's provider (this one, unless this is an issuer by path). */
  get root(): Provider {
    return this.core.root;
  }

  /**
   * The provider of the issuer by path `name` (its issuer: the configured one plus `/{name}`).
   * Built once per name (at most MAX_PATH_ISSUERS kept; one built again later is the same
   * issuer, its state being in the store).
   */
  pathIssuer(name: string): Provider {
    const issuers = this.core.issuers;
    let issuer = issuers.get(name);
    if (!issuer) {
      if (issuers.size >= MAX_PATH_ISSUERS) issuers.delete(issuers.keys().next().value!);
      const root = this.core.root;
      issuer = new Provider({ ...root.options, issuer: `${root.options.issuer.replace(/\/+$/, "")}/${name}` }, { provider: root, name });
      issuers.set(name, issuer);
    }
    return issuer;
  }

  // -- clients ---------------------------------------------------------------------------------

  /** A configured client, or a client registered at this issuer's /register (RFC 7591). */
  async findClient(id: string): Promise<Client | undefined> {
    const configured = this.clients.get(id);
    if (configured) return configured;
    const record = await this.state.get<RegisteredClientRecord>("client", id);
    return record ? registeredClient(record) : undefined;
  }

  /**
   * The clients a request naming `id` may mean: the configured ones, and the registered client of
   * that id if there is one (for code that looks clients up in a map, like authenticateClient).
   */
  async clientsNaming(id: string | undefined): Promise<ReadonlyMap<string, Client>> {
    if (id === undefined || this.clients.has(id)) return this.clients;
    const registered = await this.findClient(id);
    return registered ? new Map([[id, registered]]) : this.clients;
  }

  /** A client's back-channel logout URI: configured, or registered with the client (RFC 7591). */
  async backchannelLogoutUri(clientId: string): Promise<string | undefined> {
    const configured = this.backchannelLogoutUris.get(clientId);
    if (configured !== undefined || this.clients.has(clientId)) return configured;
    return (await this.state.get<RegisteredClientRecord>("client", clientId))?.metadata.backchannel_logout_uri;
  }

  /** The clients registered at this issuer's /register (RFC 7591). */
  async registeredClients(): Promise<Client[]> {
    return (await this.state.entries<RegisteredClientRecord>("client")).map(([, r]) => registeredClient(r));
  }

  /** Every client of this issuer: configured, then registered (logout without client_id). */
  async allClients(): Promise<Client[]> {
    return [...this.clients.values(), ...(await this.registeredClients())];
  }

  /** The registration policy for a request to `requestUrl` (see ProviderOptions.registration). */
  registrationPolicy(requestUrl: string): RegistrationPolicy {
    if (this.options.registration) return this.options.registration;
    const host = new URL(this.issuerFor(requestUrl).replace(ORIGIN, "http://origin.invalid")).hostname;
    return isLoopbackAddress(host) || host === "localhost" ? "open" : "off";
  }

  // -- settings shared between instances -----------------------------------------------------

  /**
   * Brings the settings up to date before a request is served: once for a store of its own,
   * on every request for a shared one (another instance may have moved the clock, switched the
   * key endpoint mode, added a scenario or rotated the keys a moment ago). One small query, which
   * the requests that arrived in one turn of the event loop share (`afterThisTurn`): made after
   * all of them arrived, it is as fresh as each of them needs.
   */
  sync(): Promise<void> {
    if (!this.state.shared && this.core.loaded) return this.core.loaded;
    const later = this.options.afterThisTurn;
    const read = later ? (this.core.nextRead ??= this.readLater(later)) : this.readSettings();
    this.core.loaded ??= read;
    return read;
  }

  private readLater(later: (run: () => void) => void): Promise<void> {
    return new Promise<void>((resolve, reject) =>
      later(() => {
        this.core.nextRead = undefined;
        this.readSettings().then(resolve, reject);
      })
    );
  }

  /**
   * One read at a time: a read publishes the versions it found before it has loaded what changed
   * (the scenarios, the keys), so a read that overlapped it would find no change and serve the
   * old scenarios of a change made before its request came.
   */
  private readSettings(): Promise<void> {
    const previous = this.core.lastRead;
    const read = previous ? previous.then(() => this.applySettings()) : this.applySettings();
    this.core.lastRead = read.catch(() => {});
    return read;
  }

  private async applySettings(): Promise<void> {
    const stored = new Map(await this.state.entries<unknown>("setting"));
    const jwksMode = stored.get(SETTING.jwksMode) as JwksMode;
    const clockOffset = stored.get(SETTING.clockOffset);
    const next: SharedSettings = {
      clockOffsetMs: typeof clockOffset === "number" ? clockOffset : 0,
      jwksMode: JWKS_MODES.includes(jwksMode) ? jwksMode : "normal",
      scenariosVersion: String(stored.get(SETTING.scenarios) ?? ""),
      keysVersion: String(stored.get(SETTING.keys) ?? ""),
    };
    const scenariosChanged = !this.core.scenariosRead || next.scenariosVersion !== this.core.settings.scenariosVersion;
    const keysChanged = next.keysVersion !== this.core.settings.keysVersion;
    this.core.settings = next;
    if (scenariosChanged) {
      this.core.scenariosRead = true;
      this.core.registry = this.buildRegistry(await this.state.entries<SeededUser>("scenario"));
    }
    if (keysChanged && this.core.keyRing) await this.reloadKeys();
  }

  private newVersion(): string {
    return opaqueSecret(this.random, 12);
  }

  // -- issuer ----------------------------------------------------------------------------------

  issuerFor(requestUrl: string): string {
    const template = this.options.issuer;
    if (!template.includes(ORIGIN)) return template;
    return template.replace(ORIGIN, new URL(requestUrl).origin).replace(/\/+$/, "");
  }

  // -- clock -----------------------------------------------------------------------------------

  clockOffsetMs(): number {
    return this.core.settings.clockOffsetMs;
  }

  now(): number {
    return this.options.now() + this.core.settings.clockOffsetMs;
  }

  /**
   * Moves the provider clock forward; concurrent moves at several instances all count. (The debug
   * route then tells the clients of the sessions the move made expire.)
   */
  async advanceClock(seconds: number): Promise<void> {
    for (;;) {
      const stored = await this.state.get<number>("setting", SETTING.clockOffset);
      const next = (stored ?? 0) + seconds * 1000;
      const done = stored === undefined
        ? await this.state.add("setting", SETTING.clockOffset, next, this.now())
        : await this.state.swap("setting", SETTING.clockOffset, stored, next);
      if (done) {
        this.core.settings = { ...this.core.settings, clockOffsetMs: next };
        return;
      }
    }
  }

  // -- back-channel logout deliveries ---------------------------------------------------------

  /**
   * Runs a delivery (back-channel logout POSTs, which never throw) after the response, or within
   * the request where the runtime may end work a response left behind (`awaitDeliveries`).
   */
  deliver(task: Promise<void>): Promise<void> {
    if (this.options.awaitDeliveries) return task;
    const deliveries = this.core.deliveries;
    deliveries.add(task);
    void task.finally(() => deliveries.delete(task));
    return Promise.resolve();
  }

  /** Resolves once the deliveries started so far are done (tests, shutdown). */
  async settled(): Promise<void> {
    await Promise.all([...this.core.deliveries]);
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
    const known = this.core.interned.get(value);
    if (known !== undefined) return known;
    if (this.core.interned.size >= 10_000) this.core.interned.clear();
    this.core.interned.set(value, value);
    return value;
  }

  /** Every write of a new record goes through here (or `add`) so expired records are pruned, amortised over writes. */
  async put<T>(kind: StateKind, key: string, value: T, options?: RecordOptions): Promise<void> {
    await this.state.set(kind, key, value, options);
    await this.counted();
  }

  /** Inserts unless a live record has the key (single use across instances): true when inserted. */
  async add<T>(kind: StateKind, key: string, value: T, options?: RecordOptions): Promise<boolean> {
    const added = await this.state.add(kind, key, value, this.now(), options);
    if (added) await this.counted();
    return added;
  }

  /**
   * Every PRUNE_EVERY writes, the write that comes due prunes (one batch for a database), and every
   * TRIM_EVERY writes also trims each kind to its ceiling. Awaited by its request rather than left
   * running: an edge runtime may end work a response left behind.
   */
  private async counted(): Promise<void> {
    const writes = ++this.core.writes;
    if (writes % PRUNE_EVERY !== 0 || this.core.pruning) return;
    this.core.pruning = true;
    try {
      for (const task of this.core.prePrune) await task(this);
      const dropped = await this.state.prune(this.now(), writes % TRIM_EVERY === 0 ? MAX_LIVE : undefined);
      for (const [kind, n] of Object.entries(dropped)) {
        if (n! > 0 && Date.now() - this.core.lastLimitWarning > 60_000) {
          this.core.lastLimitWarning = Date.now();
          this.logger.warn("state limit reached: oldest records dropped", { kind, dropped: n, max: MAX_LIVE[kind as StateKind] });
        }
      }
    } catch (err) {
      this.logger.warn("state pruning failed", { error: (err as Error).message });
    } finally {
      this.core.pruning = false;
    }
  }

  /**
   * Adds work the amortised pruning does first, at the issuer whose write came due (app.ts: the
   * back-channel logout of sessions that expired, before their records can be trimmed).
   */
  beforePruning(task: (p: Provider) => Promise<void>): void {
    this.core.prePrune.push(task);
  }

  // -- key endpoint mode -----------------------------------------------------------------------

  jwksMode(): JwksMode {
    return this.core.settings.jwksMode;
  }

  async setJwksMode(mode: JwksMode): Promise<void> {
    await this.state.set("setting", SETTING.jwksMode, mode);
    this.core.settings = { ...this.core.settings, jwksMode: mode };
  }

  // -- users and scenarios ---------------------------------------------------------------------

  private buildRegistry(runtime: [string, SeededUser][]): ScenarioRegistry {
    const registry = new ScenarioRegistry(BUILTIN_SCENARIOS);
    for (const user of this.seeded) registry.register(fromSeeded(user, "seeded"));
    for (const [, user] of runtime) registry.register(fromSeeded(user, "runtime"));
    return registry;
  }

  scenarios(): ScenarioRegistry {
    return this.core.registry;
  }

  async addScenario(user: SeededUser): Promise<void> {
    await this.state.set("scenario", user.login, user);
    await this.scenariosChanged();
  }

  private async scenariosChanged(): Promise<void> {
    const version = this.newVersion();
    await this.state.set("setting", SETTING.scenarios, version);
    this.core.settings = { ...this.core.settings, scenariosVersion: version };
    this.core.registry = this.buildRegistry(await this.state.entries<SeededUser>("scenario"));
  }

  /** The user behind a typed login: its scenario if there is one, else the synthetic user. */
  async resolveUser(typed: string): Promise<User> {
    const login = this.intern(normalizeLogin(typed));
    const scenario = this.core.registry.get(login);
    const sub = scenario?.sub ?? (await syntheticSub(login));
    const user: User = { login, sub };
    if (scenario) user.scenario = scenario;
    if (scenario?.password) user.password = scenario.password;
    return user;
  }

  // -- reset -----------------------------------------------------------------------------------

  /** Clears these kinds (settings among them: the clock and the key endpoint mode go back to their defaults). */
  async reset(kinds: readonly StateKind[]): Promise<void> {
    await this.state.clear(kinds);
    if (kinds.includes("setting")) this.core.settings = { ...this.core.settings, clockOffsetMs: 0, jwksMode: "normal", keysVersion: "" };
    await this.scenariosChanged();
  }

  // -- signing keys ----------------------------------------------------------------------------

  /**
   * The key ring, loaded once, in the background, on first use: configured keys, else the ones
   * in the state store, else generated and stored. Of instances that generate a key at the same
   * time, the first to store it wins and the others take its key.
   */
  keys(): Promise<KeyRing> {
    this.core.keyRing ??= (async () => {
      const stored = Object.fromEntries(await this.state.entries<JWK>("key")) as Partial<Record<Kid, JWK>>;
      return loadKeyRing({
        configured: this.options.signingKeys,
        stored,
        save: async (kid, jwk) => ((await this.state.add("key", kid, jwk, this.now())) ? jwk : ((await this.state.get<JWK>("key", kid)) ?? jwk)),
      });
    })().then((ring) => (this.core.loadedKeyRing = ring));
    return this.core.keyRing;
  }

  /** The key ring if it has finished loading, else undefined (then await `keys()`). */
  loadedKeys(): KeyRing | undefined {
    return this.core.loadedKeyRing;
  }

  private reloadKeys(): Promise<KeyRing> {
    this.core.keyRing = undefined;
    this.core.loadedKeyRing = undefined;
    return this.keys();
  }

  /** True when any signing key comes from configuration (then keys are not rotated here). */
  hasConfiguredKeys(): boolean {
    return Object.keys(this.configuredKeys).length > 0;
  }

  /**
   * Rotates the generated keys: for every algorithm a new active key (`dev-key-1` for RS256) signs
   * from now on, and the one it replaces becomes that algorithm's rotated key (`rotated-key-2`;
   * still published, so the `key-rotated` scenario signs with the previous active key). Every instance on the same store picks the new ring up on its next
   * request.
   */
  async rotateKeys(): Promise<KeyRing> {
    if (this.hasConfiguredKeys()) throw new SigningKeysError("signing keys are configured; rotate them in the configuration");
    await this.keys();
    // Each algorithm's active key: the new one signs, the one it replaces stays published.
    await Promise.all(
      SIGNING_ALGS.map(async (alg) => {
        const previous = await this.state.get<JWK>("key", ACTIVE_KID[alg]);
        const next = await generateSigningKey(ACTIVE_KID[alg]);
        if (previous) await this.state.set("key", ROTATED_KID[alg], { ...previous, kid: ROTATED_KID[alg] });
        await this.state.set("key", ACTIVE_KID[alg], next);
      }),
    );
    const version = this.newVersion();
    await this.state.set("setting", SETTING.keys, version);
    this.core.settings = { ...this.core.settings, keysVersion: version };
    return this.reloadKeys();
  }

  /** Starts loading keys now without waiting (so the first flow does not pay for key generation). */
  warmUp(): void {
    this.sync()
      .then(() => this.keys())
      .catch((err) => {
        this.logger.error("signing keys unavailable", { error: (err as Error).message });
        this.core.keyRing = undefined;
        this.core.loadedKeyRing = undefined;
      });
  }
}
