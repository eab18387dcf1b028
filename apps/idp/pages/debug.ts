// deno-fmt-ignore-file -- its html`` (or css``, sql``) templates are what it sends: the formatter would reflow them
/**
 * The debug page (`GET /debug/ui`, loopback only like the rest of /debug): the counts and the
 * live sessions, access tokens and device grants, refreshed every 2 seconds, the registered
 * clients, and one-click actions. The page's script calls only the /debug API (relative URLs, so
 * a path-based issuer works), and shows each answer or error.
 */
import { html, raw } from "hono/html";
import type { Client } from "../domain/clients.ts";
import type { JwksMode } from "../domain/records.ts";
import { page, type Html } from "./layout.ts";

interface DebugPageInput {
  issuer: string;
  clients: Client[];
  jwksModes: readonly JwksMode[];
}

// Runs in the browser: fetch the lists, render them as text (never as HTML), wire the forms.
const SCRIPT = `
const $ = (s) => document.querySelector(s);
const show = (text, bad) => { const o = $("#result"); o.textContent = text; o.className = bad ? "error" : "ok"; };
async function call(method, path, body) {
  const res = await fetch(path, { method, headers: body ? { "content-type": "application/json" } : {}, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  let data; try { data = JSON.parse(text); } catch { data = text; }
  if (!res.ok) throw new Error(res.status + " " + (data && data.error ? data.error + (data.error_description ? ": " + data.error_description : "") : text));
  return data;
}
function table(id, rows, columns) {
  const t = $(id); t.replaceChildren();
  const head = t.insertRow(); for (const c of columns) { const th = document.createElement("th"); th.textContent = c; head.appendChild(th); }
  for (const r of rows) { const tr = t.insertRow(); for (const c of columns) tr.insertCell().textContent = r[c] === undefined ? "" : String(r[c]); }
  if (rows.length === 0) { const tr = t.insertRow(); const td = tr.insertCell(); td.colSpan = columns.length; td.textContent = "none"; td.className = "muted"; }
}
async function refresh() {
  try {
    const [d, sessions, tokens, grants] = await Promise.all([call("GET", "../debug"), call("GET", "sessions"), call("GET", "tokens"), call("GET", "device-grants")]);
    for (const [k, v] of Object.entries(d.counts)) { const el = document.getElementById("count-" + k); if (el) el.textContent = v; }
    $("#jwks-mode-now").textContent = d.jwks_mode;
    table("#sessions", sessions, ["login", "sub", "auth_time", "expires_at"]);
    table("#tokens", tokens, ["token_prefix", "client_id", "sub", "scope", "token_type", "expires_at"]);
    table("#device-grants", grants, ["user_code", "client_id", "status", "expires_at"]);
    $("#updated").textContent = "updated " + new Date().toLocaleTimeString();
  } catch (err) { $("#updated").textContent = "not updated: " + err.message; }
}
const act = (form, work) => $(form).addEventListener("submit", async (e) => {
  e.preventDefault();
  try { show(await work(new FormData(e.target)), false); await refresh(); } catch (err) { show(err.message, true); }
});
act("#jwks-form", async (f) => { const r = await call("POST", "jwks-mode", { mode: f.get("mode") }); return "JWKS mode is now " + r.mode; });
act("#clock-form", async (f) => { const r = await call("POST", "clock", { advance_seconds: Number(f.get("seconds")) }); return "provider clock: " + r.now + " (offset " + r.offset_seconds + " s)"; });
act("#user-form", async (f) => {
  const user = { login: f.get("login") };
  for (const k of ["name", "email", "password", "tenant"]) if (f.get(k)) user[k] = f.get(k);
  const roles = String(f.get("roles") || "").split(",").map((s) => s.trim()).filter(Boolean);
  if (roles.length) user.roles = roles;
  const r = await call("POST", "scenarios", user);
  return "user " + r.login + " added: it signs in from the login page";
});
act("#keys-form", async () => { const r = await call("POST", "keys/rotate"); return "keys rotated: dev-key-1 is new (" + r.jwks.keys[0].n.slice(0, 12) + "…), the previous one is rotated-key-2"; });
act("#end-sessions-form", async () => { const r = await call("POST", "sessions/end", {}); return r.ended + " session(s) ended; clients with a back-channel logout URI are told"; });
act("#reset-form", async () => { await call("POST", "reset"); return "reset: sessions, codes, tokens, grants and run-time users are gone"; });
refresh(); setInterval(refresh, 2000);
`;

const EXTRA_STYLE = `body{max-width:64rem}table{border-collapse:collapse;width:100%;font-size:14px}td,th{border-bottom:1px solid #ddd;padding:.2rem .4rem;text-align:left}
.counts{display:flex;flex-wrap:wrap;gap:1rem}.counts div{background:#f3f5f9;border-radius:6px;padding:.3rem .8rem}.counts b{font-size:1.2rem}
form.row{display:flex;flex-wrap:wrap;gap:.4rem;align-items:center;margin:.3rem 0}form.row label{display:inline;min-width:11rem}form.row input{width:9rem}.muted{color:#666}.ok{color:#1e7b34;font-weight:600}
#result{min-height:1.5rem}.help{background:#f3f5f9;border-radius:6px;padding:.6rem .9rem;font-size:14px}`;

export function debugPage(input: DebugPageInput): Html {
  const counts = ["sessions", "codes", "tokens", "refresh_tokens", "device_grants", "replay_entries"];
  return page(
    "Identity provider: debug",
    html`<style>${raw(EXTRA_STYLE)}</style>
<p class="muted">Issuer <code>${input.issuer}</code> · <span id="updated">loading…</span></p>
<div class="counts">${counts.map((k) => html`<div>${k.replace("_", " ")}: <b id="count-${k}">…</b></div>`)}</div>
<p id="result" role="status"></p>
<h2>Actions</h2>
<form id="jwks-form" class="row"><label>JWKS mode (now <span id="jwks-mode-now">…</span>)</label>
<select name="mode" aria-label="JWKS mode">${input.jwksModes.map((m) => html`<option>${m}</option>`)}</select><button id="set-jwks-mode">Set</button></form>
<form id="clock-form" class="row"><label for="clock-seconds">Move the clock forward</label><input id="clock-seconds" name="seconds" type="number" min="0" value="3600"> seconds <button id="move-clock">Move</button></form>
<form id="user-form" class="row"><label>Add a user</label>
<input name="login" placeholder="login" required aria-label="login"><input name="name" placeholder="name" aria-label="name"><input name="email" placeholder="email" aria-label="email">
<input name="roles" placeholder="roles, comma-separated" aria-label="roles"><input name="tenant" placeholder="tenant" aria-label="tenant"><input name="password" type="password" placeholder="password (optional)" aria-label="password">
<button id="add-user">Add</button></form>
<form id="keys-form" class="row"><label>Signing keys</label><button id="rotate-keys">Rotate</button> <span class="muted">(a new dev-key-1; tokens signed before no longer verify)</span></form>
<form id="end-sessions-form" class="row"><label>Sessions</label><button id="end-sessions">End all sessions</button> <span class="muted">(sends back-channel logout tokens)</span></form>
<form id="reset-form" class="row"><button id="reset">Reset state</button> <span class="muted">(keeps the signing keys and configured users)</span></form>
<h2>Clients</h2>
<table id="clients"><tr><th>client_id</th><th>type</th><th>PKCE</th><th>redirect URIs</th></tr>
${input.clients.map((c) => html`<tr><td>${c.client_id}</td><td>${c.secret ? "confidential" : "public"}</td><td>${c.require_pkce ? "required" : "optional"}</td><td>${[...c.redirect_uris].join(" ")}</td></tr>`)}
</table>
<p class="help" id="which-client">Signing in from a page of your own on another port? Use <code>public-spa</code> (public, PKCE S256)
with <code>http://127.0.0.1:&lt;your port&gt;/callback</code> or <code>/auth/callback</code> as the redirect URI: a registered URI on
<code>127.0.0.1</code> admits any port (RFC 8252), so nothing needs registering, and use <code>${input.issuer}</code> as the authority
(the issuer, as written, for the tokens' <code>iss</code>). A <code>localhost</code> URI matches only as registered
(<code>--client-id my-app --redirect-uris http://localhost:4000/callback</code>). To try a sign-in from here:
<a href="client" id="debug-client-link">this provider's debug client</a> (client <code>debug-client</code>, the code flow with PKCE).</p>
<h2>Sessions</h2><table id="sessions"></table>
<h2>Access tokens</h2><table id="tokens"></table>
<h2>Device grants</h2><table id="device-grants"></table>
<script>${raw(SCRIPT)}</script>`,
  );
}
