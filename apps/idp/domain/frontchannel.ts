/**
 * OpenID Connect Front-Channel Logout 1.0. A client with a `frontchannel_logout_uri` that got
 * tokens in an IdP session is remembered for that session, as back-channel clients are (the
 * `logout_client` records of backchannel.ts, grouped by the session's `sid`). When the browser's
 * session ends at /end-session, the provider's page loads each such URI in an iframe (with `iss`
 * and `sid` in its query when the client set `frontchannel_logout_session_required`), so the
 * client can clear its own cookies in that browser, then goes on to the post-logout redirect.
 *
 * Only the browser's own session has frames: a session in another browser (the other sessions of
 * an `id_token_hint` subject, the debug interface's ends) has no page to render them in; its
 * clients hear of it by back-channel only.
 */
import type { Provider } from "./provider.ts";
import type { LogoutClientRecord } from "./records.ts";

/** One client's frame on the logout page. */
export interface FrontchannelFrame {
  client_id: string;
  /** The URI with `iss` and `sid` added when the client asked for them. */
  url: string;
}

/** Does this client want to hear of logouts through the browser? */
export async function hasFrontchannelUri(p: Provider, clientId: string): Promise<boolean> {
  return (await p.findClient(clientId))?.frontchannel_logout_uri !== undefined;
}

/**
 * A host a CSP source expression can name: DNS labels (an IPv4 address too) or an IPv6 literal.
 * URL parsing lets through hosts such as `a;b`, `a,b` or `*`, which no DNS name has but which
 * would end the `frame-src` directive (or the policy) in the logout page's header or widen it:
 * a client's URI with such a host gets no frame.
 */
const CSP_HOST = /^(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])$/;

/**
 * The frames for the session `sid`: one per client with a front-channel logout URI that got
 * tokens in it. Read before the session ends (ending it takes the records).
 */
export async function frontchannelFrames(p: Provider, sid: string | undefined): Promise<FrontchannelFrame[]> {
  if (sid === undefined) return [];
  const frames: FrontchannelFrame[] = [];
  for (const [, record] of await p.state.groupEntries<LogoutClientRecord>("logout_client", sid)) {
    const client = await p.findClient(record.client_id);
    const uri = client?.frontchannel_logout_uri;
    if (uri === undefined || frames.some((f) => f.client_id === record.client_id)) continue;
    const url = new URL(uri);
    if (!CSP_HOST.test(url.hostname)) continue;
    if (client!.frontchannel_logout_session_required) {
      url.searchParams.set("iss", record.iss);
      url.searchParams.set("sid", record.sid);
    }
    frames.push({ client_id: record.client_id, url: url.toString() });
  }
  return frames;
}

/**
 * The `frame-src` sources that admit exactly these frames (CSP Level 3 §2.3.1: a source with a
 * path not ending in `/` matches that path only; the query is not matched). A path with characters
 * a source expression cannot carry falls back to the frame's origin.
 */
export function frameSources(frames: FrontchannelFrame[]): string[] {
  const sources = frames.map((f) => {
    const url = new URL(f.url);
    return /^[A-Za-z0-9\-._~!$&'()*+=:@%/]*$/.test(url.pathname) ? url.origin + url.pathname : url.origin;
  });
  return [...new Set(sources)];
}
