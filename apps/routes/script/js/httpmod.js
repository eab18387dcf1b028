// @ts-check
/**
 * The `httpmod` module as the sandbox sees it. Runs inside QuickJS (in a sandbox on a request
 * thread, or on the serving thread in process). Embedded by scripts/embed-sandbox-js.mjs into
 * httpmod.generated.ts; httpmod-source.ts and script-wire.ts name what the host shares with it,
 * and their unit tests keep those names equal to the literals here.
 */
"use strict";
const host = require("httpmod:host"), key = host.claim();
const freeze = Object.freeze, made = new WeakSet(), handlers = [];
const ErrorC = Error, TypeErrorC = TypeError, stringify = JSON.stringify;
const own = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
const objectTag = (o) => Object.prototype.toString.call(o);

function brand(o) {
  freeze(o);
  made.add(o);
  return o;
}

/** "file:line:column" of the script's call, from the first stack frame outside this module. */
function where() {
  const lines = String(new ErrorC().stack || "").split("\n");
  for (const line of lines) {
    const m = /\(([^()]+:\d+(?::\d+)?)\)\s*$/.exec(line) || /at ([^ ()]+:\d+(?::\d+)?)\s*$/.exec(line);
    if (m && /** @type {string} */ (m[1]).indexOf("/.host/httpmod.js") !== 0) return /** @type {string} */ (m[1]);
  }
  return "<unknown>";
}

/** Calls the host; a refusal becomes an Error naming the script's file and line. */
function toHost(fn, data, at) {
  try {
    return fn(key, data);
  } catch (e) {
    throw new ErrorC(String(e && /** @type {any} */ (e).message || e) + " (at " + at + ")");
  }
}

function userSpec(required) {
  const spec = required ? {} : { required: () => userSpec(true) };
  Object.defineProperty(spec, "__spec", { value: freeze({ kind: "user", required }) });
  return brand(spec);
}
const user = () => userSpec(false);

function resourceSpec(data) {
  const spec = {
    idFromParam(name) {
      return resourceSpec({ ...data, idParam: String(name) });
    },
    tenantFromParam(name) {
      return resourceSpec({ ...data, tenantParam: String(name) });
    },
    mustExist() {
      return resourceSpec({ ...data, mustExist: true });
    },
  };
  Object.defineProperty(spec, "__spec", { value: freeze({ ...data, kind: "resource" }) });
  return brand(spec);
}
function resource(type) {
  if (typeof type !== "string" || type === "") throw new TypeErrorC("httpmod.resource(type): type must be a non-empty string");
  return resourceSpec({ type, mustExist: false });
}

const RATE_KEYS = ["ip", "actor", "token", "session"];
/** `.rateLimit(options)` checked where it is called: `{limit, windowSeconds, key}`, whole numbers
 * (the host's limits: core/plan.ts MAX_RATE_LIMIT and MAX_RATE_WINDOW_SECONDS). */
function rateLimitOf(options, plan) {
  const call = ".rateLimit({limit, windowSeconds, key})";
  if (options === null || typeof options !== "object") throw new TypeErrorC(call + ': expected an object such as {limit: 10, windowSeconds: 60, key: "ip"}');
  for (const name of Object.keys(options)) {
    if (name !== "limit" && name !== "windowSeconds" && name !== "key") throw new TypeErrorC(call + ": unknown option " + stringify(name));
  }
  const whole = (name, max) => {
    const n = options[name];
    if (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > max) {
      throw new TypeErrorC(call + ": " + name + " must be a whole number from 1 to " + max + ", got " + (n === undefined ? "nothing" : stringify(n)));
    }
    return n;
  };
  const limit = whole("limit", 1e9), windowSeconds = whole("windowSeconds", 86400);
  const key = options.key === undefined ? "ip" : options.key;
  if (RATE_KEYS.indexOf(key) < 0) throw new TypeErrorC(call + ': key must be one of "ip", "actor", "token", "session", got ' + stringify(key));
  if (plan.public && key !== "ip") {
    throw new TypeErrorC(call + ': a public route has no actor, token or session to count: use key "ip" (or declare .auth(...) first)');
  }
  return { limit, windowSeconds, key };
}
const withRateLimit = (plan, options) => ({ ...plan, rateLimits: [...(plan.rateLimits || []), rateLimitOf(options, plan)] });

function specOf(value, kind, call) {
  if (value === null || typeof value !== "object" || !made.has(value) || !value.__spec || value.__spec.kind !== kind) {
    throw new TypeErrorC(call + " accepts only a value made by " + (kind === "user" ? "httpmod.user()" : "httpmod.resource(type)"));
  }
  const { kind: _, ...spec } = value.__spec;
  return spec;
}

const SHOW = ".public().handle((ctx, res) => ...)";

/** Levenshtein distance, for "did you mean" (names are short). */
function distance(a, b) {
  let row = [];
  for (let j = 0; j <= b.length; j++) row.push(j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      next.push(Math.min((row[j] || 0) + 1, (next[j - 1] || 0) + 1, (row[j - 1] || 0) + cost));
    }
    row = next;
  }
  return row[b.length] || 0;
}

/** The offered name closest to `name`, if it is close enough to be a typo. */
function closest(name, offers) {
  let best = "", score = Infinity;
  for (const o of offers) {
    const d = distance(name.toLowerCase(), o.toLowerCase());
    if (d < score) (best = o), (score = d);
  }
  return score <= Math.max(2, Math.floor(name.length / 3)) ? best : "";
}

/** Names code asks for without calling them (await, JSON.stringify; TypeScript's and esbuild's
 * CommonJS interop read `__esModule` and `default` of a required module): not typos. */
const PROBED = freeze({ __proto__: null, then: true, toJSON: true, __esModule: true, default: true });

/** A builder value whose missing methods are TypeErrors naming the call, what this value offers
 * (its own methods, shown as `labels` spells them, e.g. ".auth(userSpec)") and the closest, where
 * QuickJS would only say "not a function"; `early` says what to do for a name a later stage has. */
function strict(target, call, labels, early) {
  return new Proxy(target, {
    get(t, name, receiver) {
      if (typeof name === "string" && !own(t, name) && !(name in Object.prototype) && !PROBED[name]) {
        const names = Object.keys(t);
        const label = (n) => (own(labels, n) ? labels[n] : "." + n + "(...)");
        const near = closest(name, names);
        const later = early && own(early, name) ? early[name] : "";
        throw new TypeErrorC(
          call + "." + name + " is not a function" + (later ? " " + later : "") + ": " + (call.indexOf("(") < 0 ? call : "this stage") +
            " offers " + names.map(label).join(", ") + (near && !later ? "; did you mean " + label(near) + "?" : "") + " (at " + where() + ")",
        );
      }
      return Reflect.get(t, name, receiver);
    },
  });
}

const callOf = (plan) => "app." + plan.method.toLowerCase() + "(" + stringify(plan.pattern) + ")";
/** How each method is called, for the messages (a method missing here is shown as ".name(...)"). */
const LABELS = {
  public: ".public()",
  auth: ".auth(userSpec)",
  resource: ".resource(resourceSpec)",
  csrf: ".csrf()",
  audit: ".audit(event)",
  rateLimit: ".rateLimit({limit, windowSeconds, key})",
  allow: ".allow(action)",
  handle: ".handle((ctx, res) => ...)",
  mount: ".mount(...)",
  get: ".get(pattern)",
  post: ".post(pattern)",
  put: ".put(pattern)",
  patch: ".patch(pattern)",
  delete: ".delete(pattern)",
  all: ".all(pattern)",
  route: ".route(method, pattern)",
  static: ".static(prefix, directory)",
  user: ".user()",
};

/** What a stage before Ready says about `.handle` and `.mount`: declare the plan first. */
function beforeReady(plan) {
  const call = callOf(plan);
  const use = "before the route's plan is declared: use " + call + SHOW + " or " + call + ".auth(httpmod.user().required()).allow(action).handle(...)";
  return { handle: use, mount: use };
}

/** A stage before Ready: it has no `handle` ("handle" in stage is false), and reaching for it, or
 * for any method this stage lacks, throws a TypeError that says what to call instead. */
function unready(stage, plan) {
  return strict(stage, callOf(plan), LABELS, beforeReady(plan));
}

function started(plan) {
  return unready(
    brand({
      public() {
        return ready({ ...plan, public: true });
      },
      auth(spec) {
        return policy({ ...plan, public: false, auth: { required: !!specOf(spec, "user", ".auth(userSpec)").required } });
      },
    }),
    plan,
  );
}
function policy(plan) {
  return unready(
    brand({
      resource(spec) {
        if (plan.action !== undefined) throw new TypeErrorC(".resource(...) must come before .allow(action)");
        return policy({ ...plan, resources: [...plan.resources, specOf(spec, "resource", ".resource(resourceSpec)")] });
      },
      csrf() {
        return policy({ ...plan, csrf: true });
      },
      audit(event) {
        return policy({ ...plan, audit: String(event) });
      },
      rateLimit(options) {
        return policy(withRateLimit(plan, options));
      },
      allow(action) {
        if (typeof action !== "string" || action === "") throw new TypeErrorC(".allow(action): action must be a non-empty string");
        return ready({ ...plan, action });
      },
    }),
    plan,
  );
}
function ready(plan) {
  return strict(
    brand({
      audit(event) {
        return ready({ ...plan, audit: String(event) });
      },
      rateLimit(options) {
        return ready(withRateLimit(plan, options));
      },
      handle(handler) {
        if (typeof handler !== "function") throw new TypeErrorC(".handle(handler): handler must be a function");
        const at = where();
        const index = handlers.length;
        toHost(host.route, { ...plan, handler: index, at }, at);
        handlers.push(handler);
        return undefined;
      },
      /** The route's target is a host mountable: the pipeline runs, then the request goes there. */
      mount(mountable, options) {
        const at = where();
        const o = options === undefined || options === null ? {} : options;
        toHost(host.route, { ...plan, mountable, stripPrefix: o.stripPrefix === true, at }, at);
        return undefined;
      },
    }),
    callOf(plan),
    LABELS,
    plan.public
      ? { auth: "on a public route" }
      : { resource: "after .allow(action): declare resources before it", csrf: "after .allow(action): put .csrf() before it" },
  );
}

function verb(method) {
  return function (pattern, _handler) {
    if (arguments.length > 1) {
      throw new TypeErrorC(
        "app." + method.toLowerCase() + "(pattern, handler) was removed: declare the route's plan, e.g. app." + method.toLowerCase() + "(" +
          stringify(String(pattern)) + ")" + SHOW + " or .auth(httpmod.user().required()).allow(action).handle(...)",
      );
    }
    return routeBuilder(method, pattern);
  };
}
function routeBuilder(method, pattern) {
  if (typeof method !== "string" || method === "") throw new TypeErrorC("app.route(method, pattern): method must be a non-empty string");
  if (typeof pattern !== "string") throw new TypeErrorC("a route pattern must be a string");
  return started({ method: method.toUpperCase(), pattern, public: false, resources: [], csrf: false });
}

function mountOptions(options, at) {
  if (options === undefined || options === null) return {};
  if (typeof options !== "object") throw new TypeErrorC("mount options must be an object (at " + at + ")");
  return { stripPrefix: options.stripPrefix, excludePrefixes: options.excludePrefixes };
}

function app() {
  const a = {
    get: verb("GET"),
    post: verb("POST"),
    put: verb("PUT"),
    patch: verb("PATCH"),
    delete: verb("DELETE"),
    all: verb("ALL"),
    route(method, pattern) {
      return routeBuilder(method, pattern);
    },
    mount(prefix, mountable, options) {
      const at = where();
      toHost(host.mount, { prefix, mountable, ...mountOptions(options, at), at }, at);
      return self;
    },
    mountHandler(prefix, mountable, options) {
      const at = where();
      toHost(host.mount, { prefix, mountable, ...mountOptions(options, at), at }, at);
      return self;
    },
    static(prefix, directory) {
      const at = where();
      toHost(host.static, { prefix, directory, at }, at);
      return self;
    },
    staticFromAssetsModule(prefix, assets, root) {
      const at = where();
      toHost(host.staticAssets, { prefix, assets, root: root === undefined ? "" : root, at }, at);
      return self;
    },
    /** A single-page app: its files as they are, its index for every other GET and HEAD path. */
    spaFromAssetsModule(prefix, assets, root, options) {
      const at = where();
      const o = options === undefined || options === null ? {} : options;
      if (typeof o !== "object") throw new TypeErrorC("app.spaFromAssetsModule options must be an object (at " + at + ")");
      const spa = {
        index: o.index === undefined ? "index.html" : o.index,
        excludePrefixes: o.excludePrefixes === undefined ? ["/api"] : o.excludePrefixes,
      };
      toHost(host.staticAssets, { prefix, assets, root: root === undefined ? "" : root, spa, at }, at);
      return self;
    },
  };
  /** The app as the script holds it: `mount` and `static` return it for chaining. */
  const self = strict(freeze(a), "app", LABELS);
  return self;
}

// ---- html ---------------------------------------------------------------------------------------
// 'html' is a tagged template that escapes every interpolated value (as Hono's `html` helper does):
// a value html or raw made is kept as it is, a list is joined, null, undefined and booleans
// are left out. What it returns is served as text/html when a handler returns it, or passes it to
// res.send or res.html.

/** Markup the module made: escaped by html, or trusted by raw. */
class Markup {
  constructor(text) {
    this.text = text;
    freeze(this);
  }
  toString() {
    return this.text;
  }
}
freeze(Markup.prototype);
const markups = new WeakSet();
const isMarkup = (value) => value !== null && typeof value === "object" && markups.has(value);
function markup(text) {
  const m = new Markup(text);
  markups.add(m);
  return m;
}

const SPECIAL = /[&<>"']/;
/** Split and join, "&" first, rather than replace with a function: QuickJS's replace keeps every
 * match (an array each) until it is done, so a 300 KB form field of "<" ran a handler out of its
 * 64 MiB; this takes a tenth of the time and only the strings it makes. */
const escapeHtml = (text) =>
  SPECIAL.test(text) ? text.split("&").join("&amp;").split("<").join("&lt;").split(">").join("&gt;").split('"').join("&quot;").split("'").join("&#39;") : text;

function piece(value) {
  if (value === null || value === undefined || typeof value === "boolean") return "";
  if (isMarkup(value)) return value.text;
  if (Array.isArray(value)) return value.map(piece).join("");
  if (typeof value === "object" && typeof value.then === "function") {
    throw new TypeErrorC("html\x60...\x60: an interpolated value is a Promise: await it before the template (at " + where() + ")");
  }
  // JSON whose "toString" is data (a request's, or a record stored from one) has no text of its
  // own: shown as any object is, where String() would throw and fail every page that shows it.
  if (typeof value === "object" && typeof value.toString !== "function") return escapeHtml(objectTag(value));
  return escapeHtml(String(value));
}

function html(strings, ...values) {
  if (!Array.isArray(strings) || !Array.isArray(/** @type {any} */ (strings).raw)) {
    throw new TypeErrorC("httpmod.html is a tagged template: html\x60<p>${value}</p>\x60 (for trusted markup in a string, httpmod.raw(text))");
  }
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += piece(values[i]) + strings[i + 1];
  return markup(out);
}

/** Trusted markup, kept as it is by html (never pass it text a user could have written). */
const raw = (text) => markup(isMarkup(text) ? text.text : String(text === undefined || text === null ? "" : text));

// ---- dispatch: the wire ------------------------------------------------------------------------
// This module's end of the route host's wire (the host's end, which describes the forms:
// apps/routes/script/script-wire.ts), and the only code here that reads or writes it. One request
// crosses as two strings: in, the request as JSON (`readInput`: QuickJS's own JSON, far cheaper
// than a host call or a copied object per field); out, the response (`answerText`). The common
// answer (status 200, no header but the content type a helper chose, a string body) goes out as
// one code character and the body as it is, with no JSON made of it; everything else as JSON.

const readInput = JSON.parse;
/** Content types the helpers set, by code (0: none); codes 0-3 have a compact answer (COMPACT_TYPES). */
const TYPES = ["", "text/plain; charset=utf-8", "text/html; charset=utf-8", "application/json"].concat("application/octet-stream");
const T_NONE = 0, T_TEXT = 1, T_HTML = 2, T_JSON = 3, T_BYTES = 4;
/** The compact answer's first character by type code, then the same with the session read. */
const COMPACT = ["\x01", "\x02", "\x03", "\x04", "\x05", "\x06", "\x07", "\x08"];

/** A finished response's state (`Res`) as the host reads it: compact when it can be, else JSON. */
function answerText(s, sessionUsed) {
  const t = s.type, headers = s.headers;
  if (s.status === 200 && headers === null && typeof s.body === "string" && (t === T_NONE || t === T_TEXT || t === T_HTML || t === T_JSON)) {
    return COMPACT[sessionUsed ? t + 4 : t] + s.body;
  }
  const all = t === T_NONE ? headers || [] : (headers || []).concat([["content-type", TYPES[t]]]);
  return stringify({ status: s.status, headers: all, body: s.body, bytes: s.bytes, render: s.render, hasRender: s.render !== undefined, sessionUsed });
}

// ---- dispatch: the response helpers and the handler call -----------------------------------------

const STATE = Symbol("state");
const defineProperty = Object.defineProperty;

function textType(text) {
  const c = text.charCodeAt(0);
  // Visible ASCII other than "<" cannot start /^\s*</: no regular expression for most bodies.
  if (c > 32 && c < 127) return c === 60 ? T_HTML : T_TEXT;
  return /^\s*</.test(text) ? T_HTML : T_TEXT;
}

/** The response helpers: methods on a shared prototype, state in a symbol-keyed field. The
 * headers a script set stay null until it sets one; the helpers' content type is kept apart
 * (`type`) and goes after them, where it was pushed when the answer finished. */
class Res {
  constructor() {
    this[STATE] = { status: 200, headers: null, type: T_NONE, body: null, sent: false, bytes: false, render: undefined };
    freeze(this);
  }
  status(code) {
    open(this).status = code;
    return this;
  }
  set(name, value) {
    const s = open(this), n = String(name);
    if (s.headers === null) s.headers = [];
    else if (n.toLowerCase() === "content-type") s.headers = s.headers.filter((h) => h[0].toLowerCase() !== "content-type");
    s.headers.push([n, String(value)]);
    return this;
  }
  type(contentType) {
    return this.set("content-type", contentType);
  }
  json(value) {
    finish(this, value === undefined ? "null" : stringify(value), T_JSON);
  }
  send(value) {
    if (value instanceof Uint8Array || value instanceof ArrayBuffer) {
      host.bytes(key, value instanceof ArrayBuffer ? new Uint8Array(value) : value);
      finish(this, null, T_BYTES);
      this[STATE].bytes = true;
      return;
    }
    if (value === undefined || value === null) return finish(this, "", T_NONE);
    if (typeof value === "string") return finish(this, value, textType(value));
    if (isMarkup(value)) return finish(this, value.text, T_HTML);
    if (typeof value === "object") return this.json(value);
    finish(this, String(value), T_TEXT);
  }
  html(value) {
    if (typeof value === "string") return finish(this, value, T_HTML);
    if (isMarkup(value)) return finish(this, value.text, T_HTML);
    open(this).render = value === undefined ? null : value;
    finish(this, null, T_HTML);
  }
  redirect(a, b) {
    const status = b === undefined ? 302 : a, url = b === undefined ? a : b;
    this.status(status).set("location", String(url));
    finish(this, "", T_NONE);
  }
  end() {
    const s = this[STATE];
    finish(this, s.body === null ? "" : s.body, T_NONE);
  }
}
freeze(Res.prototype);

function open(res) {
  const s = res[STATE];
  if (s.sent) throw new ErrorC("the response was already sent");
  return s;
}
function hasType(headers) {
  if (headers === null) return false;
  for (let i = 0; i < headers.length; i++) if (headers[i][0].toLowerCase() === "content-type") return true;
  return false;
}
function finish(res, body, type) {
  const s = open(res);
  if (type !== T_NONE && !hasType(s.headers)) s.type = type;
  s.body = body;
  s.sent = true;
}

/** The planned handler's first argument (spec: PlannedContext). */
class PlannedContext {
  constructor(input) {
    this.request = input.request;
    this.actor = input.actor;
    this.body = input.request.body;
    this.params = input.request.params;
    this.resources = input.resources || {};
    this.action = input.action;
    this.routeName = input.routeName;
    this.csrfToken = input.csrfToken;
    freeze(this);
  }
  resource(name) {
    return own(this.resources, name) ? this.resources[name] : null;
  }
}
freeze(PlannedContext.prototype);

/** Applies the handler result rules (docs/routes.md, "Result rules"); the response for the host, compact or JSON. */
function complete(res, value, sessionUsed) {
  const s = res[STATE];
  if (!s.sent) {
    if (typeof value === "string" || isMarkup(value)) res.send(value);
    else if (value !== undefined && value !== null) res.html(value);
    else res.end();
  }
  return answerText(s, sessionUsed);
}

function dispatch(index, text) {
  const handler = handlers[index];
  if (typeof handler !== "function") throw new ErrorC("no handler " + index);
  const input = readInput(text);
  const request = input.request, res = new Res();
  // Reading the session is what gives a new session its cookie (apps/routes/session.ts).
  const session = request.session;
  let used = false;
  defineProperty(request, "session", {
    get() {
      used = true;
      return session;
    },
    enumerable: true,
  });
  // Every script route is planned (the handler-only overload is gone): handlers get (ctx, res).
  const out = handler(new PlannedContext(input), res);
  if (out !== null && typeof out === "object" && typeof out.then === "function") return out.then((v) => complete(res, v, used));
  return complete(res, out, used);
}
Object.defineProperty(globalThis, "__httpmod_dispatch", { value: dispatch, writable: false, configurable: false, enumerable: false });

module.exports = strict(freeze({ app, user, resource, html, raw }), "httpmod", {
  app: ".app()",
  user: ".user()",
  resource: ".resource(type)",
  html: ".html\x60...\x60",
  raw: ".raw(markup)",
});
