// deno-fmt-ignore-file -- its html`` (or css``, sql``) templates are what it sends: the formatter would reflow them
/**
 * The login page. Every authorization request parameter rides along as a hidden input, so the
 * POST to /authorize carries the whole request. Quick-pick buttons (one per scenario, grouped by
 * category) are submit buttons named `quick_login`: clicking one submits the form with that login
 * directly (the typed login field is then ignored, the password field is sent as typed). A search
 * box filters them by login or category. Optional extra claims (a JSON object) apply to the
 * session being started, whichever way the form is submitted.
 */
import { html, raw } from "hono/html";
import type { ScenarioRegistry } from "../domain/scenarios.ts";
import { page, type Html } from "./layout.ts";

interface LoginPageInput {
  action: string;
  params: [string, string][];
  loginHint?: string;
  /** The extra claims text as last typed (shown again with an error). */
  extraClaims?: string;
  error?: string;
  scenarios: ScenarioRegistry;
  /** The authentication levels (acr) to choose from, and the one preselected (the request's). */
  acr: { values: readonly string[]; selected: string };
}

// The search box filters the quick picks as one types (it belongs to no form, so Enter in it
// submits nothing); without script the page works as before.
const FILTER = `
const box = document.getElementById("scenario-search");
box.addEventListener("input", () => {
  const q = box.value.trim().toLowerCase();
  let shown = 0;
  for (const section of document.querySelectorAll("section[data-category]")) {
    let inSection = 0;
    for (const b of section.querySelectorAll("button[data-login]")) {
      const hit = q === "" || b.dataset.login.toLowerCase().includes(q) || section.dataset.category.toLowerCase().includes(q);
      b.hidden = !hit;
      if (hit) inSection++;
    }
    section.hidden = inSection === 0;
    shown += inSection;
  }
  document.getElementById("no-scenario").hidden = shown > 0;
});`;

export function loginPage(input: LoginPageInput): Html {
  const groups = input.scenarios.groups();
  return page(
    "Sign in",
    html`${input.error ? html`<p class="error" id="login-error" role="alert">${input.error}</p>` : ""}
<form id="login-form" class="main" method="post" action="${input.action}">
${input.params.map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">\n`)}
<label for="login">Login
<input id="login" name="login" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" value="${input.loginHint ?? ""}" autofocus>
</label>
<label for="password">Password <small>(only seeded users with a password need one)</small>
<input id="password" name="password" type="password" autocomplete="current-password">
</label>
<details id="extra-claims-section"${input.extraClaims ? raw(" open") : ""}>
<summary>Extra claims for this session <small>(optional)</small></summary>
<label for="extra-claims">JSON object, added to the ID token and userinfo
<textarea id="extra-claims" name="extra_claims" rows="4" spellcheck="false" placeholder='{"roles": ["admin"], "tenant": "acme"}'>${input.extraClaims ?? ""}</textarea>
</label>
</details>
<label for="acr">Authentication level (acr) <small>(mfa stands for a second factor, not asked)</small>
<select id="acr" name="acr">${input.acr.values.map((v) => html`<option value="${v}"${v === input.acr.selected ? raw(" selected") : ""}>${v}</option>`)}</select>
</label>
<button id="sign-in" class="primary" type="submit">Sign in</button>
<p>Or pick a scenario: <input id="scenario-search" type="search" form="scenario-filter" placeholder="filter scenarios" aria-label="filter scenarios" autocomplete="off"></p>
${groups.map(
  (g) => html`<section data-category="${g.category}" aria-label="${g.category}">
<h2>${g.category}</h2>
<div class="picks">${g.scenarios.map(
    (s) => html`<button type="submit" name="quick_login" value="${s.login}" data-login="${s.login}" formnovalidate>${s.login}</button>`,
  )}</div>
</section>
`,
)}
<p id="no-scenario" hidden>No scenario matches.</p>
</form>
<script>${raw(FILTER)}</script>`,
  );
}
