// @ts-check
/**
 * The `httpmod` module as the sandbox sees it (embedded by scripts/embed-sandbox-js.mjs into
 * httpmod.generated.ts; see httpmod-source.ts for the names the host shares with it, which a unit
 * test keeps equal to the literals here).
 */
"use strict";
const host = require("httpmod:host"), key = host.claim();
const freeze = Object.freeze, made = new WeakSet(), handlers = [];
const ErrorC = Error, TypeErrorC = TypeError, stringify = JSON.stringify;
const own = (o, k) => Object.prototype.hasOwnProperty.call(o, k);

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

function specOf(value, kind, call) {
  if (value === null || typeof value !== "object" || !made.has(value) || !value.__spec || value.__spec.kind !== kind) {
    throw new TypeErrorC(call + " accepts only a value made by " + (kind === "user" ? "httpmod.user()" : "httpmod.resource(type)"));
  }
  const { kind: _, ...spec } = value.__spec;
  return spec;
}

const SHOW = ".public().handle((ctx, res) => ...)";

/** A stage before Ready: it has no `handle` ("handle" in stage is false), but reaching for it
 * throws a TypeError that says what to declare first, where QuickJS would only say "not a
 * function". */
function unready(stage, method, pattern) {
  const call = "app." + method.toLowerCase() + "(" + stringify(pattern) + ")";
  return new Proxy(stage, {
    get(target, name, receiver) {
      if (name === "handle" && !own(target, name)) {
        throw new TypeErrorC(
          call + ".handle is not a function before the route's plan is declared: use " + call + SHOW + " or " + call +
            ".auth(httpmod.user().required()).allow(action).handle(...)",
        );
      }
      return Reflect.get(target, name, receiver);
    },
  });
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
    plan.method,
    plan.pattern,
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
      allow(action) {
        if (typeof action !== "string" || action === "") throw new TypeErrorC(".allow(action): action must be a non-empty string");
        return ready({ ...plan, action });
      },
    }),
    plan.method,
    plan.pattern,
  );
}
function ready(plan) {
  return brand({
    audit(event) {
      return ready({ ...plan, audit: String(event) });
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
  });
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
      return a;
    },
    mountHandler(prefix, mountable, options) {
      const at = where();
      toHost(host.mount, { prefix, mountable, ...mountOptions(options, at), at }, at);
      return a;
    },
    static(prefix, directory) {
      const at = where();
      toHost(host.static, { prefix, directory, at }, at);
      return a;
    },
    staticFromAssetsModule(prefix, assets, root) {
      const at = where();
      toHost(host.staticAssets, { prefix, assets, root: root === undefined ? "" : root, at }, at);
      return a;
    },
  };
  return freeze(a);
}

// ---- dispatch ----------------------------------------------------------------------------------
// One request crosses as two strings: in, the request as JSON (parsed by QuickJS's own JSON: far
// cheaper than a host call or a copied object per field); out, the response. The common answer
// (status 200, no header but the content type a helper chose, a string body) goes out as one code
// character and the body as it is, with no JSON made of it: COMPACT_TYPES in httpmod-source.ts.
// Everything else goes out as JSON (script-sandbox.ts's responseFrom reads both).

const STATE = Symbol("state");
const parse = JSON.parse, defineProperty = Object.defineProperty;
/** Content types the helpers set, by code (0: none); codes 0-3 have a compact answer. */
const TYPES = ["", "text/plain; charset=utf-8", "text/html; charset=utf-8", "application/json"].concat("application/octet-stream");
const T_NONE = 0, T_TEXT = 1, T_HTML = 2, T_JSON = 3, T_BYTES = 4;
/** The compact answer's first character by type code, then the same with the session read. */
const COMPACT = ["\x01", "\x02", "\x03", "\x04", "\x05", "\x06", "\x07", "\x08"];

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
    if (typeof value === "object") return this.json(value);
    finish(this, String(value), T_TEXT);
  }
  html(value) {
    if (typeof value === "string") return finish(this, value, T_HTML);
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

/** Applies the handler result rules (decisions.md); the response for the host, compact or JSON. */
function complete(res, value, sessionUsed) {
  const s = res[STATE];
  if (!s.sent) {
    if (typeof value === "string") res.send(value);
    else if (value !== undefined && value !== null) res.html(value);
    else res.end();
  }
  const t = s.type, headers = s.headers;
  if (s.status === 200 && headers === null && typeof s.body === "string" && (t === T_NONE || t === T_TEXT || t === T_HTML || t === T_JSON)) {
    return COMPACT[sessionUsed ? t + 4 : t] + s.body;
  }
  const all = t === T_NONE ? headers || [] : (headers || []).concat([["content-type", TYPES[t]]]);
  return stringify({ status: s.status, headers: all, body: s.body, bytes: s.bytes, render: s.render, hasRender: s.render !== undefined, sessionUsed });
}

function dispatch(index, text) {
  const handler = handlers[index];
  if (typeof handler !== "function") throw new ErrorC("no handler " + index);
  const input = parse(text);
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

module.exports = freeze({ app, user, resource });
