/**
 * The `httpmod` module as the sandbox sees it: plain JavaScript evaluated inside QuickJS, once
 * per sandbox, when the script first calls `require("httpmod")` (the host's SourceResolver serves
 * it under HTTPMOD_FILE). It only builds data: every registration crosses to the host through the
 * native module `httpmod:host` as a copied plain object, and the host compiles and validates it
 * (apps/routes/plan.ts). Handlers stay in the sandbox; the host calls them through the global
 * dispatcher this module defines.
 *
 * The host module answers only the caller that claimed it first (this module, when it loads), so
 * a script cannot register, mount or respond around the builder by requiring it itself.
 *
 * Values the module makes (`user()`, `resource()`, the builder stages) are frozen and recorded in
 * a WeakSet inside this closure, so a look-alike plain object is refused by `.auth` and
 * `.resource`. Each builder step returns a new frozen stage: `.handle` exists on the Ready stage
 * only, so calling it earlier is a TypeError ("not a function").
 */

/** The canonical name of the module's file; script files may not use the `/.host/` directory. */
export const HTTPMOD_FILE = "/.host/httpmod.js";
/** The global function the host calls for each request (defined non-writable by the module). */
export const DISPATCH_GLOBAL = "__httpmod_dispatch";
/** The native module carrying registrations and responses to the host. */
export const HOST_MODULE = "httpmod:host";

export const HTTPMOD_SOURCE = String.raw`"use strict";
const host = require("${HOST_MODULE}"), key = host.claim();
const freeze = Object.freeze, made = new WeakSet(), handlers = [];
const ErrorC = Error, TypeErrorC = TypeError, isArray = Array.isArray, stringify = JSON.stringify;
const own = (o, k) => Object.prototype.hasOwnProperty.call(o, k);

function brand(o) { freeze(o); made.add(o); return o; }

/** "file:line:column" of the script's call, from the first stack frame outside this module. */
function where() {
  const lines = String(new ErrorC().stack || "").split("\n");
  for (const line of lines) {
    const m = /\(([^()]+:\d+(?::\d+)?)\)\s*$/.exec(line) || /at ([^ ()]+:\d+(?::\d+)?)\s*$/.exec(line);
    if (m && m[1].indexOf("${HTTPMOD_FILE}") !== 0) return m[1];
  }
  return "<unknown>";
}

/** Calls the host; a refusal becomes an Error naming the script's file and line. */
function toHost(fn, data, at) {
  try { return fn(key, data); }
  catch (e) { throw new ErrorC(String(e && e.message || e) + " (at " + at + ")"); }
}

function userSpec(required) {
  const spec = required ? {} : { required: () => userSpec(true) };
  Object.defineProperty(spec, "__spec", { value: freeze({ kind: "user", required }) });
  return brand(spec);
}
const user = () => userSpec(false);

function resourceSpec(data) {
  const spec = {
    idFromParam(name) { return resourceSpec({ ...data, idParam: String(name) }); },
    tenantFromParam(name) { return resourceSpec({ ...data, tenantParam: String(name) }); },
    mustExist() { return resourceSpec({ ...data, mustExist: true }); },
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

function started(plan) {
  return brand({
    public() { return ready({ ...plan, public: true }); },
    auth(spec) { return policy({ ...plan, public: false, auth: { required: !!specOf(spec, "user", ".auth(userSpec)").required } }); },
  });
}
function policy(plan) {
  return brand({
    resource(spec) {
      if (plan.action !== undefined) throw new TypeErrorC(".resource(...) must come before .allow(action)");
      return policy({ ...plan, resources: [...plan.resources, specOf(spec, "resource", ".resource(resourceSpec)")] });
    },
    csrf() { return policy({ ...plan, csrf: true }); },
    audit(event) { return policy({ ...plan, audit: String(event) }); },
    allow(action) {
      if (typeof action !== "string" || action === "") throw new TypeErrorC(".allow(action): action must be a non-empty string");
      return ready({ ...plan, action });
    },
  });
}
function ready(plan) {
  return brand({
    audit(event) { return ready({ ...plan, audit: String(event) }); },
    handle(handler) {
      if (typeof handler !== "function") throw new TypeErrorC(".handle(handler): handler must be a function");
      const at = where();
      const index = handlers.length;
      toHost(host.route, { ...plan, handler: index, at }, at);
      handlers.push(handler);
      return undefined;
    },
  });
}

function verb(method) {
  return function (pattern, handler) {
    if (arguments.length > 1) {
      throw new TypeErrorC("app." + method.toLowerCase() + "(pattern, handler) was removed: declare the route's plan, e.g. app." + method.toLowerCase() + "(" + stringify(String(pattern)) + ")" + SHOW + " or .auth(httpmod.user().required()).allow(action).handle(...)");
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
    get: verb("GET"), post: verb("POST"), put: verb("PUT"), patch: verb("PATCH"), delete: verb("DELETE"), all: verb("ALL"),
    route(method, pattern) { return routeBuilder(method, pattern); },
    mount(prefix, mountable, options) { const at = where(); toHost(host.mount, { prefix, mountable, ...mountOptions(options, at), at }, at); return a; },
    mountHandler(prefix, mountable, options) { const at = where(); toHost(host.mount, { prefix, mountable, ...mountOptions(options, at), at }, at); return a; },
    static(prefix, directory) { const at = where(); toHost(host.static, { prefix, directory, at }, at); return a; },
    staticFromAssetsModule(prefix, assets, root) { const at = where(); toHost(host.staticAssets, { prefix, assets, root: root === undefined ? "" : root, at }, at); return a; },
  };
  return freeze(a);
}

// ---- dispatch ----------------------------------------------------------------------------------

function response() {
  const state = { status: 200, headers: [], body: null, sent: false };
  const assertOpen = () => { if (state.sent) throw new ErrorC("the response was already sent"); };
  const hasType = () => state.headers.some((h) => h[0].toLowerCase() === "content-type");
  const finish = (body, type) => {
    assertOpen();
    if (type && !hasType()) state.headers.push(["content-type", type]);
    state.body = body;
    state.sent = true;
  };
  const res = {
    status(code) { assertOpen(); state.status = code; return res; },
    set(name, value) {
      assertOpen();
      const n = String(name), lower = n.toLowerCase();
      if (lower === "content-type") state.headers = state.headers.filter((h) => h[0].toLowerCase() !== "content-type");
      state.headers.push([n, String(value)]);
      return res;
    },
    type(contentType) { return res.set("content-type", contentType); },
    json(value) { finish(value === undefined ? "null" : stringify(value), "application/json"); },
    send(value) {
      if (value instanceof Uint8Array || value instanceof ArrayBuffer) { host.bytes(key, value instanceof ArrayBuffer ? new Uint8Array(value) : value); finish(null, "application/octet-stream"); state.bytes = true; return; }
      if (value === undefined || value === null) return finish("", undefined);
      if (typeof value === "string") return finish(value, textType(value));
      if (typeof value === "object") return res.json(value);
      finish(String(value), "text/plain; charset=utf-8");
    },
    html(value) {
      if (typeof value === "string") return finish(value, "text/html; charset=utf-8");
      assertOpen();
      state.render = value === undefined ? null : value;
      finish(null, "text/html; charset=utf-8");
    },
    redirect(a, b) {
      const status = b === undefined ? 302 : a, url = b === undefined ? a : b;
      res.status(status).set("location", String(url));
      finish("", undefined);
    },
    end() { finish(state.body === null ? "" : state.body, undefined); },
  };
  return { state, res: freeze(res) };
}

function textType(text) { return /^\s*</.test(text) ? "text/html; charset=utf-8" : "text/plain; charset=utf-8"; }

/** Applies the handler result rules (decisions.md) and hands the response to the host. */
function complete(r, value) {
  if (!r.state.sent) {
    if (typeof value === "string") r.res.send(value);
    else if (value !== undefined && value !== null) r.res.html(value);
    else r.res.end();
  }
  const s = r.state;
  host.respond(key, { status: s.status, headers: s.headers, body: s.body, bytes: !!s.bytes, render: s.render === undefined ? undefined : s.render, hasRender: s.render !== undefined });
}

function dispatch(index, input) {
  const handler = handlers[index];
  if (typeof handler !== "function") throw new ErrorC("no handler " + index);
  const r = response();
  let arg = input.request;
  if (input.planned) {
    const resources = input.resources || {};
    arg = freeze({
      request: input.request, actor: input.actor, body: input.request.body, params: input.request.params,
      resources, resource: (name) => own(resources, name) ? resources[name] : null,
      action: input.action, routeName: input.routeName, csrfToken: input.csrfToken,
    });
  }
  const out = handler(arg, r.res);
  if (out !== null && typeof out === "object" && typeof out.then === "function") return out.then((v) => { complete(r, v); });
  complete(r, out);
}
Object.defineProperty(globalThis, "${DISPATCH_GLOBAL}", { value: dispatch, writable: false, configurable: false, enumerable: false });

module.exports = freeze({ app, user, resource });
`;
