// deno-fmt-ignore-file -- its html`` (or css``, sql``) templates are what it sends: the formatter would reflow them
/**
 * Pages for browsers, JSON for programs: when the host itself refuses or misses a request (401,
 * 403, 404, 405, 413, 500 ... in the `{"error": {code, message}}` envelope) and the request
 * accepts HTML (a browser's navigation or form post sends `Accept: text/html`), the answer
 * becomes a small HTML page with the same status: a heading, a plain sentence, a hint (sign in,
 * or sign out to sign in as another user), a link back, and the code and request id for a bug
 * report. API clients (`Accept: application/json`, `*\/*`, none) keep the JSON. Answers a
 * handler or a mounted service made are never touched; only the host's own errors are marked.
 *
 * And `Cache-Control: no-store` for answers to a signed-in actor, so Back after signing out does
 * not show the last person's pages from the browser's cache (unless the answer set its own).
 */
import { html } from "hono/html";
import { FRAME_DENY, withEditedHeaders } from "#lib/http";

const hostErrors = new WeakSet<Response>();

/** Marks a response as one of the host's own errors (JSON envelope), which a browser may get as a page. */
export function hostError(response: Response): Response {
  hostErrors.add(response);
  return response;
}

/** A request that accepts HTML: the browser, not a script's fetch (which sends `*\/*`). */
function acceptsHtml(request: Request): boolean {
  return /\btext\/html\b/i.test(request.headers.get("accept") ?? "");
}

/** The answer with `Cache-Control: no-store`, unless it says otherwise already. */
export function noStore(response: Response): Response {
  if (response.headers.has("cache-control")) return response;
  return withEditedHeaders(response, (h) => h.set("cache-control", "no-store"));
}

interface PageOptions {
  /** The host signs browsers in at /auth/login (and out at /auth/logout). */
  signIn: boolean;
  /** Shown for a bug report. */
  requestId?: string;
}

const TITLES: Record<number, string> = {
  400: "Bad request",
  401: "Sign-in needed",
  403: "Not allowed",
  404: "Not found",
  405: "Not on this page",
  413: "Too large",
  429: "Too many requests",
  500: "Something went wrong",
};

interface Said {
  sentence: string;
  hint?: ReturnType<typeof html> | string;
  /** Dev mode's reason, for the developer (authorize.ts puts it in the message). */
  why?: string;
}

function explain(status: number, code: string, message: string, path: string, method: string, options: PageOptions): Said {
  const login = `/auth/login?return_to=${encodeURIComponent(path)}`;
  if (status === 401) {
    return {
      sentence: "This page is only for people who are signed in, and this browser is not (or its sign-in has ended).",
      hint: options.signIn ? html`<a href="${login}">Sign in</a>, and you come back here.` : "This host has no browser sign-in: it takes access tokens only.",
    };
  }
  if (code === "CSRF_FAILED") {
    return {
      sentence: "The form you sent was out of date or did not come from this site's own page, so nothing was changed.",
      hint: "Go back, reload the page, and send the form again.",
    };
  }
  if (status === 403) {
    return {
      sentence: "You are signed in, but what you asked for is not yours to see or change.",
      ...(message.startsWith("not allowed: ") ? { why: message.slice("not allowed: ".length) } : {}),
      hint: options.signIn ? html`Signed in as the wrong person? <a href="/auth/logout">Sign out</a>, then sign in as another user.` : "Use credentials that are allowed this action.",
    };
  }
  if (status === 404 && code === "NOT_FOUND" && message.startsWith("no route")) {
    // Dev mode says when the script's last edit failed to load (host.ts): the route may be in it.
    const broken = /\(the script's last edit did not load, so the previous routes are served: (.*); see (\/\S+)\)$/.exec(message);
    if (broken) {
      return {
        sentence: `There is no page at ${path}, and the script's last edit did not load (${broken[1]}), so the routes served are the previous script's.`,
        hint: html`Fix the script and reload this page; <a href="${broken[2]}">${broken[2]}</a> shows the error and the routes served.`,
      };
    }
    return { sentence: `There is no page at ${path}.`, hint: "Check the address, or start again from the home page." };
  }
  if (status === 404) return { sentence: `What this page shows does not exist (${message}): it may have been deleted, or the link is wrong.` };
  if (status === 405) return { sentence: `${path} does not answer ${method} requests.` };
  if (status === 413) return { sentence: "What you sent is larger than this site accepts." };
  if (status === 429) return { sentence: "Too many requests came from you in a short time.", hint: "Wait a little (Retry-After says how long), then try again." };
  if (status >= 500) return { sentence: "The site failed to answer this request. Trying again may work; if not, the request id below helps whoever runs it." };
  return { sentence: message };
}

/** The page for a host error, or the answer as it is. */
export async function pageFor(request: Request, response: Response, options: PageOptions): Promise<Response> {
  if (!hostErrors.has(response) || !acceptsHtml(request)) return response;
  let code = "ERROR";
  let message = "";
  try {
    const body = (await response.clone().json()) as { error?: { code?: string; message?: string } };
    code = body.error?.code ?? code;
    message = body.error?.message ?? "";
  } catch {
    return response;
  }
  const url = new URL(request.url);
  const status = response.status;
  const title = TITLES[status] ?? (status >= 500 ? TITLES[500]! : "Refused");
  const { sentence, hint, why } = explain(status, code, message, url.pathname, request.method, options);
  const requestId = options.requestId || response.headers.get("x-request-id");
  const page = await html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${status} ${title}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d2330}main{padding:2rem;max-width:44rem}h1{margin:0 0 .6rem}.hint{background:#f1f3f7;padding:.6rem .9rem;border-radius:4px}.muted{color:#69707d;font-size:13px}.why{background:#fff4e0;padding:.6rem .9rem;border-radius:4px;font-size:14px}</style>
</head><body><main>
<h1>${status} ${title}</h1>
<p id="sentence">${sentence}</p>
${hint ? html`<p class="hint" id="hint">${hint}</p>` : ""}
${why ? html`<p class="why" id="why"><strong>Why (dev mode only):</strong> ${why}</p>` : ""}
<p><a href="/" id="back">Back to the home page</a></p>
<p class="muted">Code <code>${code}</code>${requestId ? html` · request <code>${requestId}</code>` : ""}</p>
</main></body></html>`;
  const headers = new Headers(response.headers);
  headers.set("content-type", "text/html; charset=utf-8");
  headers.delete("content-length");
  headers.set("cache-control", "no-store");
  for (const [name, value] of Object.entries(FRAME_DENY)) headers.set(name, value);
  await response.body?.cancel();
  return new Response(request.method === "HEAD" ? null : page.toString(), { status, headers });
}
