// Errors by SQLSTATE.
//
// Every error a verb raises reaches the caller as an instance of one of
// the classes below, chosen by its SQLSTATE, with the server's message,
// DETAIL and HINT, and the facts of the DETAIL as fields (the holder, the
// fences).  The driver's own error is kept as `cause`.
//
// Transient errors (the connection was lost, the server is restarting or
// full, a serialization failure or deadlock) extend TransientError; every
// other error is permanent: sending the same call again gets the same
// answer.

export class WorklistError extends Error {
  constructor(message, { code = null, detail = null, hint = null, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = new.target.name;
    this.code = code;
    this.detail = detail;
    this.hint = hint;
  }

  get transient() {
    return false;
  }
}

// WL001: the task or ticket named does not exist in this tenant.
export class NotFoundError extends WorklistError {
  constructor(message, info) {
    super(message, info);
    const m = /^(\w+) "(.*)" does not exist$/s.exec(message);
    this.kind = m ? m[1] : null;
    this.id = m ? m[2] : null;
  }
}

// WL002: the actor is barred from the task (four eyes).
export class ExcludedError extends WorklistError {
  constructor(message, info) {
    super(message, info);
    const m = /^actor "(.*)" is excluded from task "(.*)"$/s.exec(message);
    this.actor = m ? m[1] : null;
    this.id = m ? m[2] : null;
  }
}

// WL003: none of the roles given meets the task's audience.
export class WrongRoleError extends WorklistError {
  constructor(message, info) {
    super(message, info);
    const m = /^actor "(.*)" has no role in the audience of task "(.*)"$/s.exec(message);
    this.actor = m ? m[1] : null;
    this.id = m ? m[2] : null;
  }
}

// WL004: the task is settled; `state` is its state.
export class NotPendingError extends WorklistError {
  constructor(message, info) {
    super(message, info);
    const m = /^task "(.*)" is not pending$/s.exec(message);
    this.id = m ? m[1] : null;
    const d = /^The task is (\w+)\.$/.exec(this.detail || '');
    this.state = d ? d[1] : null;
  }
}

// WL005: somebody else holds the task; `holder` names it.
export class AlreadyClaimedError extends WorklistError {
  constructor(message, info) {
    super(message, info);
    const m = /^task "(.*)" is already claimed$/s.exec(message);
    this.id = m ? m[1] : null;
    this.holder = heldBy(this.detail);
  }
}

// WL006: `actor` does not hold the task; `holder` is who does (null: nobody).
export class NotHeldError extends WorklistError {
  constructor(message, info) {
    super(message, info);
    const m = /^task "(.*)" is not held by "(.*)"$/s.exec(message);
    this.id = m ? m[1] : null;
    this.actor = m ? m[2] : null;
    this.holder = heldBy(this.detail);
  }
}

// WL007: a fenced write whose fence is not the run's current one.  `fence`
// is the write's, `current_fence` the run's (null: the run has none).
// Both are BigInt.
export class StaleFenceError extends WorklistError {
  constructor(message, info) {
    super(message, info);
    const m = /^stale fence for run "(.*)"$/s.exec(message);
    this.run = m ? m[1] : null;
    const detail = this.detail || '';
    const f = /carries fence (-?\d+)/.exec(detail);
    const c = /current fence is (-?\d+)/.exec(detail);
    this.fence = f ? BigInt(f[1]) : null;
    this.current_fence = c ? BigInt(c[1]) : null;
  }
}

// WL008 (0.4): a write, park or claim of a run that conclude_run concluded.
export class RunConcludedError extends WorklistError {
  constructor(message, info) {
    super(message, info);
    const m = /run "(.*)"/s.exec(message);
    this.run = m ? m[1] : null;
  }
}

// 42501: the login may not reach the tenant, or a member named another
// actor, a role it is not in, or moved a write verb's clock.  `argument`
// names the argument refused, `tenant` the tenant refused (either null).
export class InsufficientPrivilegeError extends WorklistError {
  constructor(message, info) {
    super(message, info);
    this.argument = argumentOf(message);
    const t = /tenant "(.*)"$/s.exec(message);
    this.tenant = t ? t[1] : null;
  }
}

// 22023: a bad argument; `argument` names it.
export class InvalidArgumentError extends WorklistError {
  constructor(message, info) {
    super(message, info);
    this.argument = argumentOf(message);
  }
}

// 54000: a document larger than worklist.max_document_size (or another
// limit of the server); `size` and `limit` in bytes when the DETAIL says.
export class LimitExceededError extends WorklistError {
  constructor(message, info) {
    super(message, info);
    this.argument = argumentOf(message);
    const d = /takes (\d+) bytes; worklist\.max_document_size is (\d+) bytes/.exec(this.detail || '');
    this.size = d ? Number(d[1]) : null;
    this.limit = d ? Number(d[2]) : null;
  }
}

// The login, the database or the extension is not what the calls need:
// authentication failed (28xxx), no such database (3D000), the extension
// is missing or older than the call (3F000, 42883, 55000).
export class ConfigurationError extends WorklistError {}

// Any other error the server raised: a bug in the caller, most likely.
export class DatabaseError extends WorklistError {}

// Sending the call again may succeed.
export class TransientError extends WorklistError {
  get transient() {
    return true;
  }
}

// The connection is gone, or could not be made (08xxx, 57P01, 57P02,
// 57P03, 53300, or a socket error without a SQLSTATE).  A call in flight
// may or may not have committed: the server knows (held(), a retried
// complete).
export class ConnectionLostError extends TransientError {}

// 40001, 40P01: the transaction was rolled back; run it again.
export class SerializationError extends TransientError {}

const BY_CODE = {
  WL001: NotFoundError,
  WL002: ExcludedError,
  WL003: WrongRoleError,
  WL004: NotPendingError,
  WL005: AlreadyClaimedError,
  WL006: NotHeldError,
  WL007: StaleFenceError,
  WL008: RunConcludedError,
  42501: InsufficientPrivilegeError,
  22023: InvalidArgumentError,
  54000: LimitExceededError,
  40001: SerializationError,
  '40P01': SerializationError,
  '57P01': ConnectionLostError,
  '57P02': ConnectionLostError,
  '57P03': ConnectionLostError,
  53300: ConnectionLostError,
  '3D000': ConfigurationError,
  '3F000': ConfigurationError,
  42883: ConfigurationError,
  55000: ConfigurationError,
};

function heldBy(detail) {
  const m = /^It is held by "(.*)"\.$/s.exec(detail || '');
  return m ? m[1] : null;
}

function argumentOf(message) {
  const m = /^argument "([^"]*)"/.exec(message);
  return m ? m[1] : null;
}

function classFor(code) {
  if (BY_CODE[code]) return BY_CODE[code];
  if (code.startsWith('08')) return ConnectionLostError;
  if (code.startsWith('28')) return ConfigurationError;
  return DatabaseError;
}

// The error a verb reports for what the driver threw.  Errors of the
// program itself (a TypeError, a RangeError) are returned unchanged.
export function fromDriver(err) {
  if (err instanceof WorklistError) return err;
  if (err && typeof err.severity === 'string' && typeof err.code === 'string') {
    const Class = classFor(err.code);
    return new Class(err.message, { code: err.code, detail: err.detail || null, hint: err.hint || null, cause: err });
  }
  if (err instanceof TypeError || err instanceof RangeError || err instanceof SyntaxError ||
      err instanceof ReferenceError) {
    return err;
  }
  // No SQLSTATE: the socket (refused, reset, closed) or the driver's "not
  // queryable" after a connection error.
  const message = err && err.message ? err.message : String(err);
  return new ConnectionLostError(message, { code: err && err.code ? String(err.code) : null, cause: err });
}

export function isTransient(err) {
  return err instanceof TransientError;
}
