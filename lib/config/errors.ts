/**
 * Configuration errors: one typed class with a stable code, so a command line can print a single
 * clear line and exit 2, and tests can assert the code instead of the wording.
 */
import { CodedError } from "#lib/errors";

export type ConfigErrorCode =
  | "CONFIG_UNKNOWN_FIELD"
  | "CONFIG_UNKNOWN_SECTION"
  | "CONFIG_UNKNOWN_FLAG"
  | "CONFIG_MISSING_VALUE"
  | "CONFIG_INVALID_VALUE"
  | "CONFIG_TOO_MANY_ARGUMENTS"
  | "CONFIG_FILE_NOT_FOUND"
  | "CONFIG_FILE_INVALID"
  | "CONFIG_CONFLICT"
  | "PROFILE_NOT_FOUND"
  | "PROFILES_FILE_MISSING"
  | "PROFILES_FILE_INVALID";

export class ConfigError extends CodedError<ConfigErrorCode> {
  constructor(
    code: ConfigErrorCode,
    message: string,
    /** Where the offending value came from (`config:<path>`, `env:IDP_X`, ...), when known. */
    readonly source?: string,
    /** The field concerned, when there is one. */
    readonly field?: string,
  ) {
    super(code, message);
  }
}
