/**
 * The web globals other than URL, as one chunk loaded by the bootstrap's lazy globals on first
 * use (see lib/sandbox/web.ts). `__web` is the chunk function's parameter: `host` holds the
 * marshalled host functions (randomBytes, digest, now), `report(error)` reports a listener's or a
 * microtask's exception.
 */
/* global __web */
import { DOMException } from "./dom-exception.js";
import { AbortController, AbortSignal, Event, EventTarget, hooks } from "./events.js";
import { atob, btoa, TextDecoder, TextEncoder } from "./encoding.js";
import { structuredClone } from "./clone.js";
import { makeCrypto } from "./crypto.js";

const host = __web.host;
const report = __web.report;
hooks.report = report;

const PromiseC = Promise;
function queueMicrotask(callback) {
  if (typeof callback !== "function") throw new TypeError("Failed to execute 'queueMicrotask': parameter 1 is not of type 'Function'.");
  PromiseC.resolve().then(() => {
    try {
      callback();
    } catch (e) {
      report(e);
    }
  });
}

// The host's clock since the sandbox was made, coarsened to 0.1 ms (timing side channels gain
// little from more).
const now = host.now;
const performance = {
  now() {
    return Math.floor(now() * 10) / 10;
  },
  get timeOrigin() {
    return host.timeOrigin;
  },
  toJSON() {
    return { timeOrigin: host.timeOrigin };
  },
};
Object.defineProperty(performance, Symbol.toStringTag, { value: "Performance", configurable: true });

export { AbortController, AbortSignal, atob, btoa, DOMException, Event, EventTarget, performance, queueMicrotask, structuredClone, TextDecoder, TextEncoder };
export const crypto = makeCrypto(host);
