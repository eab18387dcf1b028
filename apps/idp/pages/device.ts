// deno-fmt-ignore-file -- its html`` (or css``, sql``) templates are what it sends: the formatter would reflow them
/** The device verification page (RFC 8628 §3.3): approve or deny a user code. */
import { html } from "hono/html";
import { page, type Html } from "./layout.ts";

interface DevicePageInput {
  action: string;
  userCode?: string;
  login?: string;
  error?: string;
}

export function devicePage(input: DevicePageInput): Html {
  return page(
    "Connect a device",
    html`${input.error ? html`<p class="error" id="device-result" role="alert">${input.error}</p>` : ""}
<form id="device-form" class="main" method="post" action="${input.action}">
<label for="user_code">Code shown on the device
<input id="user_code" name="user_code" type="text" autocomplete="off" autocapitalize="characters" spellcheck="false" value="${input.userCode ?? ""}" required>
</label>
<label for="login">Approve as (login)
<input id="login" name="login" type="text" autocomplete="username" value="${input.login ?? ""}">
</label>
<label for="password">Password <small>(only seeded users with a password need one)</small>
<input id="password" name="password" type="password" autocomplete="current-password">
</label>
<div class="picks">
<button id="approve" class="primary" type="submit" name="action" value="approve">Approve</button>
<button id="deny" type="submit" name="action" value="deny">Deny</button>
</div>
</form>`,
  );
}

/** The outcome of a decision: `approved`, `denied`, or why nothing happened. */
export function deviceResultPage(message: string): Html {
  return page("Connect a device", html`<p id="device-result" role="status">${message}</p>`);
}
