// deno-fmt-ignore-file -- its html`` (or css``, sql``) templates are what it sends: the formatter would reflow them
/**
 * The logout page of OpenID Connect Front-Channel Logout 1.0 (§4): one hidden iframe per client of
 * the ended session, then, once every frame has loaded (or after FRAMES_WAIT_MS), on to the
 * post-logout redirect. Without script the Continue link does the same.
 */
import { html, raw } from "hono/html";
import type { FrontchannelFrame } from "../domain/frontchannel.ts";
import { type Html, page } from "./layout.ts";

/** How long the page waits for slow frames before it goes on anyway. */
const FRAMES_WAIT_MS = 5000;

const CONTINUE = `
const frames = [...document.querySelectorAll("iframe.frontchannel-logout")];
const next = document.getElementById("continue");
let done = false;
const go = () => { if (!done && next) { done = true; location.replace(next.href); } };
let loaded = 0;
for (const f of frames) f.addEventListener("load", () => { f.dataset.loaded = "true"; if (++loaded === frames.length) go(); });
setTimeout(go, ${FRAMES_WAIT_MS});`;

export function frontchannelLogoutPage(input: { frames: FrontchannelFrame[]; next?: string }): Html {
  return page(
    "Logged out",
    html`<p id="logged-out" role="status">You are logged out of the identity provider. Signing you out of ${String(input.frames.length)} application${input.frames.length === 1 ? "" : "s"}…</p>
${input.frames.map((f) => html`<iframe class="frontchannel-logout" data-client-id="${f.client_id}" src="${f.url}" title="logout of ${f.client_id}" width="0" height="0" style="display:none"></iframe>\n`)}
${input.next === undefined ? "" : html`<p><a id="continue" href="${input.next}">Continue</a></p>`}
<script>${raw(CONTINUE)}</script>`,
  );
}
