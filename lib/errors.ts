/**
 * The one base class of the project's errors. Callers match on `code`, a stable string-literal
 * union per area (it appears in HTTP bodies, audit records and tests; messages may change), and
 * `name` is the subclass's own, so a subclass declares its code type and nothing else: no
 * constructor or `name` boilerplate. Turning an error into HTTP is each product's single error
 * handler's job (sessions: `apps/sessions/app.ts`, IdP: `apps/idp/app.ts`, route host:
 * `apps/routes/core/reply.ts`), never the error's.
 */
export class CodedError<C extends string = string> extends Error {
  readonly code: C;

  constructor(code: C, message: string, options?: ErrorOptions) {
    super(message, options);
    // The class the caller constructed (`new.target`), so subclasses need not set it.
    this.name = new.target.name;
    this.code = code;
  }
}
