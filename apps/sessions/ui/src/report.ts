// deno-fmt-ignore-file -- its html`` (or css``, sql``) templates are what it sends: the formatter would reflow them
/** How a view hands an error to the page, and the banner that shows it (with the API's code). */
import { html } from "htm/preact";
import { ApiFailure } from "./api.ts";

export type Report = (err: unknown) => void;

export function ErrorBanner({ error, clear }: { error: ApiFailure | Error | null; clear: () => void }) {
  if (!error) return null;
  const code = error instanceof ApiFailure ? error.code : "ERROR";
  return html`<div class="error" role="alert" data-testid="error"><code>${code}</code> ${error.message} <button class="link" onClick=${clear}>dismiss</button></div>`;
}
