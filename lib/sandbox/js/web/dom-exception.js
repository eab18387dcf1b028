/**
 * DOMException (WebIDL). Its prototype chain reaches Error.prototype, as WebIDL says, so
 * `e instanceof Error` holds and the console shows it like an error.
 */
const LEGACY_CODES = {
  __proto__: null,
  IndexSizeError: 1,
  HierarchyRequestError: 3,
  WrongDocumentError: 4,
  InvalidCharacterError: 5,
  NoModificationAllowedError: 7,
  NotFoundError: 8,
  NotSupportedError: 9,
  InvalidStateError: 11,
  SyntaxError: 12,
  InvalidModificationError: 13,
  NamespaceError: 14,
  InvalidAccessError: 15,
  TypeMismatchError: 17,
  SecurityError: 18,
  NetworkError: 19,
  AbortError: 20,
  URLMismatchError: 21,
  QuotaExceededError: 22,
  TimeoutError: 23,
  InvalidNodeTypeError: 24,
  DataCloneError: 25,
};
const CONSTANTS = [
  "INDEX_SIZE_ERR",
  "DOMSTRING_SIZE_ERR",
  "HIERARCHY_REQUEST_ERR",
  "WRONG_DOCUMENT_ERR",
  "INVALID_CHARACTER_ERR",
  "NO_DATA_ALLOWED_ERR",
  "NO_MODIFICATION_ALLOWED_ERR",
  "NOT_FOUND_ERR",
  "NOT_SUPPORTED_ERR",
  "INUSE_ATTRIBUTE_ERR",
  "INVALID_STATE_ERR",
  "SYNTAX_ERR",
  "INVALID_MODIFICATION_ERR",
  "NAMESPACE_ERR",
  "INVALID_ACCESS_ERR",
  "VALIDATION_ERR",
  "TYPE_MISMATCH_ERR",
  "SECURITY_ERR",
  "NETWORK_ERR",
  "ABORT_ERR",
  "URL_MISMATCH_ERR",
  "QUOTA_EXCEEDED_ERR",
  "TIMEOUT_ERR",
  "INVALID_NODE_TYPE_ERR",
  "DATA_CLONE_ERR",
];

const state = new WeakMap();

export class DOMException extends Error {
  constructor(message = "", name = "Error") {
    super(String(message));
    delete this.message; // WebIDL has only the prototype's getter
    state.set(this, { name: String(name), message: String(message) });
  }
  get name() {
    return brand(this).name;
  }
  get message() {
    return brand(this).message;
  }
  get code() {
    return LEGACY_CODES[brand(this).name] || 0;
  }
}

function brand(self) {
  const s = state.get(self);
  if (!s) throw new TypeError("Illegal invocation");
  return s;
}

const construct = DOMException;
Object.defineProperty(DOMException.prototype, Symbol.toStringTag, { value: "DOMException", configurable: true });
for (let i = 0; i < CONSTANTS.length; i++) {
  const d = { value: i + 1, enumerable: true };
  Object.defineProperty(construct, CONSTANTS[i], d);
  Object.defineProperty(construct.prototype, CONSTANTS[i], d);
}
