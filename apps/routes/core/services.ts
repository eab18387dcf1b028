/**
 * The host services the pipeline calls (spec: Host options, `Auth.*`). Each is an interface; the
 * host fails closed when a route needs one that is not configured (500, never open).
 */
import { CodedError } from "#lib/errors";
import type { RoutePlan } from "./plan.ts";
import type { ScriptRequest } from "./request.ts";
import type { HostSession } from "./session.ts";

export interface Actor {
  id: string;
  kind: string;
  tenantIds?: string[];
  claims?: Record<string, unknown>;
}

/** At least `id` and `tenantId`; resolvers may add fields (owner, attributes, ...). */
export interface ResourceRef {
  id: string;
  tenantId: string;
  [field: string]: unknown;
}

/** What every service gets to look at for one request. */
export interface PipelineRequest {
  /** The original request (its body already read: use `script.body` / `script.rawBody`). */
  request: Request;
  /** The parsed request as the handler will see it. */
  script: ScriptRequest;
  route: RoutePlan;
  requestId: string;
}

export interface Authenticator {
  /**
   * The actor, or null when the request carries no credentials. Credentials that are present
   * but invalid throw `AuthenticationError` (also 401, with its reason in the audit).
   */
  authenticate(req: PipelineRequest): Promise<Actor | null> | Actor | null;
  /** The `WWW-Authenticate` value sent with a 401. */
  challenge?(req: PipelineRequest, error?: AuthenticationError): string | undefined;
  /** Where a browser without credentials signs in: a page request (GET, accepting HTML) is
   * redirected there instead of answered 401. */
  signInUrl?(req: PipelineRequest): string | undefined;
}

export interface ResourceQuery {
  type: string;
  id?: string;
  tenantId?: string;
  actor: Actor | null;
  route: RoutePlan;
}

export interface ResourceResolver {
  /** The resource, or null / `ResourceNotFoundError` when there is none. */
  resolve(query: ResourceQuery): Promise<ResourceRef | null> | ResourceRef | null;
}

export interface AuthorizationInput {
  actor: Actor | null;
  action: string;
  /** The first declared resource (the usual case of one), or null. */
  resource: ResourceRef | null;
  resources: Record<string, ResourceRef | null>;
  route: RoutePlan;
}

export interface AuthorizationDecision {
  allow: boolean;
  /** Why it was denied (audit only; never sent to the client). */
  reason?: string;
  /** The denial in a sentence for the person who runs the host: the rule that decided and what it
   * looked at (the token's scopes, roles, groups; whether a policy is loaded). Logged; shown on the
   * page in dev mode only. */
  explanation?: string;
}

export interface Authorizer {
  authorize(input: AuthorizationInput): Promise<AuthorizationDecision> | AuthorizationDecision;
}

export interface CsrfProtector {
  /** Whether an unsafe-method request carries a valid token. */
  verify(req: PipelineRequest): Promise<boolean> | boolean;
  /** The token a page embeds (`ctx.csrfToken`), bound to the host session. */
  token?(session: HostSession): Promise<string> | string;
}

export type AuditOutcome = "allowed" | "denied" | "completed" | "failed";

/** The audit record (docs/routes.md#the-pipeline). */
export interface AuditEvent {
  event: string;
  outcome: AuditOutcome;
  reason?: string;
  statusCode?: number;
  routeName?: string;
  method: string;
  pattern: string;
  action?: string;
  actor?: Actor;
  resource?: ResourceRef;
  resources?: Record<string, ResourceRef | null>;
  requestId: string;
  /** RFC 3339 with milliseconds. */
  at: string;
}

export interface AuditSink {
  record(event: AuditEvent): Promise<void> | void;
}

export interface AuthServices {
  authenticator?: Authenticator;
  resources?: ResourceResolver;
  authorizer?: Authorizer;
  csrf?: CsrfProtector;
  audit?: AuditSink;
}

export type AuthenticationErrorCode = "invalid_token" | "invalid_dpop_proof" | "invalid_request";

/** Present but invalid credentials (bad signature, expired, wrong audience, ...): 401. The code is
 * the bearer error (RFC 6750 §3.1, RFC 9449 §7.1) and the audit record's reason. */
export class AuthenticationError extends CodedError<AuthenticationErrorCode> {}

export type ResourceNotFoundErrorCode = "RESOURCE_NOT_FOUND";

/** The host not-found error a ResourceResolver may throw: 404 (or null without `.mustExist()`). */
export class ResourceNotFoundError extends CodedError<ResourceNotFoundErrorCode> {
  constructor(message: string) {
    super("RESOURCE_NOT_FOUND", message);
  }
}
