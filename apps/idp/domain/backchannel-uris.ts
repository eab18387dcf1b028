/**
 * The configured back-channel logout URIs (backchannel.ts delivers to them): from
 * `IDP_BACKCHANNEL_LOGOUT_URIS` and the configured clients, checked when the provider is built.
 */
import { CodedError } from "#lib/errors";

/** A bad back-channel logout URI setting: a configuration error (the CLI prints it and stops). */
export type BackchannelConfigErrorCode = "INVALID_ENV";

export class BackchannelConfigError extends CodedError<BackchannelConfigErrorCode> {
  constructor(message: string) {
    super("INVALID_ENV", `IDP_BACKCHANNEL_LOGOUT_URIS: ${message}`);
  }
}

/**
 * Back-channel logout URIs by client id, from `IDP_BACKCHANNEL_LOGOUT_URIS` (a JSON object
 * `{"client-id": "http://..."}`) and `backchannel_logout_uri` of configured clients. Each must be
 * an absolute http(s) URL without fragment.
 */
export function backchannelUris(clientIds: Iterable<string>, entries: [string, string][]): Map<string, string> {
  const known = new Set(clientIds);
  const out = new Map<string, string>();
  for (const [clientId, uri] of entries) {
    if (!known.has(clientId)) throw new BackchannelConfigError(`unknown client "${clientId}"`);
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      throw new BackchannelConfigError(`the URI of "${clientId}" is not an absolute URL`);
    }
    if ((url.protocol !== "http:" && url.protocol !== "https:") || uri.includes("#")) {
      throw new BackchannelConfigError(`the URI of "${clientId}" must be an http(s) URL without fragment`);
    }
    out.set(clientId, uri);
  }
  return out;
}
