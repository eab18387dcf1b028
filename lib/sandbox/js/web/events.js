/**
 * Event, EventTarget, AbortController and AbortSignal (DOM Standard), without a tree: an event
 * reaches only its target, so there is no capture or bubble phase beyond AT_TARGET.
 */
import { DOMException } from "./dom-exception.js";

const NONE = 0, AT_TARGET = 2;
const ev = new WeakMap();
function evState(self) {
  const s = ev.get(self);
  if (!s) throw new TypeError("Illegal invocation");
  return s;
}

export class Event {
  constructor(type, init = undefined) {
    if (arguments.length === 0) throw new TypeError("Failed to construct 'Event': 1 argument required, but only 0 present.");
    const o = init == null ? {} : init;
    if (typeof o !== "object" && typeof o !== "function") throw new TypeError("Failed to construct 'Event': The provided value is not of type 'EventInit'.");
    ev.set(this, {
      type: String(type),
      bubbles: !!o.bubbles,
      cancelable: !!o.cancelable,
      composed: !!o.composed,
      canceled: false,
      stop: false,
      stopNow: false,
      dispatching: false,
      passive: false,
      target: null,
      currentTarget: null,
      phase: NONE,
      timeStamp: typeof performance === "object" && performance && typeof performance.now === "function" ? performance.now() : 0,
    });
    Object.defineProperty(this, "isTrusted", { get: isTrusted, enumerable: true });
  }
  get type() {
    return evState(this).type;
  }
  get target() {
    return evState(this).target;
  }
  get srcElement() {
    return evState(this).target;
  }
  get currentTarget() {
    return evState(this).currentTarget;
  }
  get eventPhase() {
    return evState(this).phase;
  }
  get bubbles() {
    return evState(this).bubbles;
  }
  get cancelable() {
    return evState(this).cancelable;
  }
  get composed() {
    return evState(this).composed;
  }
  get defaultPrevented() {
    return evState(this).canceled;
  }
  get timeStamp() {
    return evState(this).timeStamp;
  }
  get cancelBubble() {
    return evState(this).stop;
  }
  set cancelBubble(v) {
    if (v) evState(this).stop = true;
  }
  get returnValue() {
    return !evState(this).canceled;
  }
  set returnValue(v) {
    if (!v) this.preventDefault();
  }
  composedPath() {
    const s = evState(this);
    return s.dispatching && s.currentTarget ? [s.currentTarget] : [];
  }
  stopPropagation() {
    evState(this).stop = true;
  }
  stopImmediatePropagation() {
    const s = evState(this);
    s.stop = s.stopNow = true;
  }
  preventDefault() {
    const s = evState(this);
    if (s.cancelable && !s.passive) s.canceled = true;
  }
  initEvent(type, bubbles = false, cancelable = false) {
    const s = evState(this);
    if (s.dispatching) return;
    s.type = String(type);
    s.bubbles = !!bubbles;
    s.cancelable = !!cancelable;
    s.canceled = s.stop = s.stopNow = false;
  }
}
function isTrusted() {
  return false;
}
for (const [k, v] of [["NONE", 0], ["CAPTURING_PHASE", 1], ["AT_TARGET", 2], ["BUBBLING_PHASE", 3]]) {
  Object.defineProperty(Event, k, { value: v, enumerable: true });
  Object.defineProperty(Event.prototype, k, { value: v, enumerable: true });
}
Object.defineProperty(Event.prototype, Symbol.toStringTag, { value: "Event", configurable: true });

const listenersOf = new WeakMap();
function targetState(self) {
  const s = listenersOf.get(self);
  if (!s) throw new TypeError("Illegal invocation");
  return s;
}
function flattenOptions(options) {
  return typeof options === "boolean" ? { capture: options } : options == null ? {} : Object(options);
}

/** Calls `report(error)` for a listener that throws (set by the chunk's entry). */
export const hooks = { report: (_e) => {} };

export class EventTarget {
  constructor() {
    listenersOf.set(this, []);
  }
  addEventListener(type, callback, options = undefined) {
    const list = targetState(this);
    const o = flattenOptions(options);
    const capture = !!o.capture, once = !!o.once, passive = !!o.passive, signal = o.signal;
    if (signal !== undefined && !(signal instanceof AbortSignal)) {
      throw new TypeError("Failed to execute 'addEventListener' on 'EventTarget': member signal is not of type AbortSignal.");
    }
    if (callback == null) return;
    if (typeof callback !== "function" && typeof callback !== "object") throw new TypeError('The "callback" argument must be an object or a function');
    if (signal && signal.aborted) return;
    type = String(type);
    for (const l of list) if (l.type === type && l.callback === callback && l.capture === capture) return;
    const entry = { type, callback, capture, once, passive, removed: false };
    list.push(entry);
    if (signal) signal.addEventListener("abort", () => this.removeEventListener(type, callback, { capture }));
  }
  removeEventListener(type, callback, options = undefined) {
    const list = targetState(this);
    const capture = !!flattenOptions(options).capture;
    type = String(type);
    for (let i = 0; i < list.length; i++) {
      const l = list[i];
      if (l.type === type && l.callback === callback && l.capture === capture) {
        l.removed = true;
        list.splice(i, 1);
        return;
      }
    }
  }
  dispatchEvent(event) {
    const list = targetState(this);
    const s = evState(event);
    if (s.dispatching) throw new DOMException("The event is already being dispatched.", "InvalidStateError");
    s.dispatching = true;
    s.target = this;
    s.currentTarget = this;
    s.phase = AT_TARGET;
    try {
      for (const l of list.slice()) {
        if (s.stopNow) break;
        if (l.removed || l.type !== s.type) continue;
        if (l.once) this.removeEventListener(l.type, l.callback, { capture: l.capture });
        s.passive = l.passive;
        try {
          const cb = l.callback;
          if (typeof cb === "function") cb.call(this, event);
          else if (cb && typeof cb.handleEvent === "function") cb.handleEvent(event);
        } catch (e) {
          hooks.report(e);
        } finally {
          s.passive = false;
        }
      }
    } finally {
      s.dispatching = false;
      s.currentTarget = null;
      s.phase = NONE;
      s.stop = s.stopNow = false;
    }
    return !s.canceled;
  }
}
Object.defineProperty(EventTarget.prototype, Symbol.toStringTag, { value: "EventTarget", configurable: true });

// `onabort`-style event handler attributes: one listener, added when first set, calling the current value.
const handlers = new WeakMap();
function defineHandler(proto, type) {
  Object.defineProperty(proto, "on" + type, {
    get() {
      const m = handlers.get(this);
      return m && m[type] ? m[type].value : null;
    },
    set(value) {
      let m = handlers.get(this);
      if (!m) handlers.set(this, m = { __proto__: null });
      const v = typeof value === "function" || (value !== null && typeof value === "object") ? value : null;
      if (!m[type]) {
        const slot = (m[type] = { value: v });
        this.addEventListener(type, function (event) {
          const f = slot.value;
          if (typeof f === "function") {
            const r = f.call(this, event);
            if (r === false) event.preventDefault();
          }
        });
      } else m[type].value = v;
    },
    enumerable: true,
    configurable: true,
  });
}

const signals = new WeakMap();
function signalState(self) {
  const s = signals.get(self);
  if (!s) throw new TypeError("Illegal invocation");
  return s;
}
let constructing = false;
/** AbortSignal.timeout reads the global setTimeout when it is called (the timers are not this module's). */
export class AbortSignal extends EventTarget {
  constructor() {
    if (!constructing) throw new TypeError("Illegal constructor");
    super();
    signals.set(this, { aborted: false, reason: undefined, dependents: [], sources: [], dependent: false });
  }
  get aborted() {
    return signalState(this).aborted;
  }
  get reason() {
    return signalState(this).reason;
  }
  throwIfAborted() {
    const s = signalState(this);
    if (s.aborted) throw s.reason;
  }
  static abort(reason = undefined) {
    const signal = newSignal();
    const s = signalState(signal);
    s.aborted = true;
    s.reason = reason === undefined ? abortError() : reason;
    return signal;
  }
  static timeout(ms) {
    ms = toMilliseconds(ms);
    const set = globalThis.setTimeout;
    if (typeof set !== "function") throw new TypeError("AbortSignal.timeout needs setTimeout, and this sandbox has none");
    const signal = newSignal();
    const t = set(() => signalAbort(signal, new DOMException("signal timed out", "TimeoutError")), ms);
    // Like Node's, the timer does not keep an execution alive where the timers can say so.
    if (t && typeof t === "object" && typeof t.unref === "function") t.unref();
    return signal;
  }
  static any(list) {
    const result = newSignal();
    const rs = signalState(result);
    const inputs = [];
    for (const sig of list) {
      if (!(sig instanceof AbortSignal)) throw new TypeError("Failed to execute 'any' on 'AbortSignal': Failed to convert value to 'AbortSignal'.");
      inputs.push(sig);
    }
    for (const sig of inputs) {
      const s = signalState(sig);
      if (s.aborted) {
        rs.aborted = true;
        rs.reason = s.reason;
        return result;
      }
    }
    rs.dependent = true;
    for (const sig of inputs) {
      const s = signalState(sig);
      const roots = s.dependent ? s.sources : [sig];
      for (const root of roots) {
        if (rs.sources.indexOf(root) >= 0) continue;
        rs.sources.push(root);
        signalState(root).dependents.push(result);
      }
    }
    return result;
  }
}
Object.defineProperty(AbortSignal.prototype, Symbol.toStringTag, { value: "AbortSignal", configurable: true });
defineHandler(AbortSignal.prototype, "abort");

function toMilliseconds(ms) {
  const n = Number(ms);
  if (!Number.isFinite(n) || n < 0 || n > Number.MAX_SAFE_INTEGER) {
    throw new TypeError("Failed to execute 'timeout' on 'AbortSignal': Value is outside the 'unsigned long long' value range.");
  }
  return Math.trunc(n);
}
function abortError() {
  return new DOMException("signal is aborted without reason", "AbortError");
}
function newSignal() {
  constructing = true;
  try {
    return new AbortSignal();
  } finally {
    constructing = false;
  }
}
function signalAbort(signal, reason) {
  const s = signalState(signal);
  if (s.aborted) return;
  s.aborted = true;
  s.reason = reason === undefined ? abortError() : reason;
  const toRun = [];
  for (const d of s.dependents) {
    const ds = signalState(d);
    if (!ds.aborted) {
      ds.aborted = true;
      ds.reason = s.reason;
      toRun.push(d);
    }
  }
  fire(signal);
  for (const d of toRun) fire(d);
}
function fire(signal) {
  signal.dispatchEvent(new Event("abort"));
}

export class AbortController {
  #signal = newSignal();
  get signal() {
    return this.#signal;
  }
  abort(reason = undefined) {
    signalAbort(this.#signal, reason);
  }
}
Object.defineProperty(AbortController.prototype, Symbol.toStringTag, { value: "AbortController", configurable: true });
