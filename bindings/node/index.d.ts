// Type declarations for sqlite-idem (CommonJS: require('sqlite-idem');
// index.d.mts re-exports them for import).

/** The part of a better-sqlite3 Database that sqlite-idem uses. */
export interface Database {
  loadExtension(path: string, entryPoint?: string): unknown;
  prepare(source: string): any;
  exec(source: string): unknown;
  readonly inTransaction: boolean;
}

/** JSON, as a tool's arguments and results are stored. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A call's `id` column, as a replay reads it (a bigint only beyond 2^53;
 *  bytes as a Buffer). */
export type Id = string | number | bigint | Uint8Array | null;

/** An id as a tool gives it: one SQL value (a BigInt within 64 bits, a
 *  finite number, text, bytes, or null). */
export type IdInput = string | number | bigint | Uint8Array | null;

/** `who` or `conv`: text, an integer (a safe number or a 64-bit BigInt) or
 *  bytes; the integer 42 and the text '42' give one key. */
export type Part = string | number | bigint | Uint8Array;

/** The name of the header an external tool sends its key in. */
export const HEADER: 'Idempotency-Key';

/** The path of the SQLite extension that `npm install` built. */
export function loadablePath(): string;

/** Load idem into a better-sqlite3 Database. */
export function load(db: Database): void;

/** What a tool may return to set the call's `id` column too. */
export class Result<R = unknown> {
  constructor(result: R, id?: IdInput);
  readonly result: R;
  readonly id: IdInput;
}

/**
 * What `tool.run()` resolves to: the result and id as recorded, the call's
 * key, and `replayed`: true when this arrival got an earlier arrival's
 * result (the tool did not run), false when it ran the tool.
 */
export class Outcome<R = unknown> {
  constructor(result: R, id: Id, key: string, replayed: boolean, sends?: number | null);
  readonly result: R;
  readonly id: Id;
  readonly key: string;
  readonly replayed: boolean;
  /** How many times an external call's request was taken for sending
   *  (more than 1: resent to a target that honours the key); null for a
   *  local call.  Not enumerable. */
  readonly sends: number | null;
}

/** The JSON object that idem hands a duplicate arrival. */
export interface Reply {
  id: unknown;
  idempotent: boolean;
  status: 'pending' | 'done' | 'failed' | 'unknown';
  result?: unknown;
  message?: string;
  /** An external call's sends (doc/contract.md §14). */
  sends?: number;
  [more: string]: unknown;
}

/** A call that did not end in `done`. */
export class CallError extends Error {
  readonly key: string;
  readonly reply: Reply;
  readonly status: Reply['status'];
  /** true: told to a duplicate arrival (the status an earlier arrival left);
   *  false: an Unknown thrown to the arrival that ran the tool. */
  readonly replayed: boolean;
}
/** Pending: the first arrival is still running, or its process died. */
export class InProgress extends CallError {}
/**
 * External, outcome unknown: never retried; the target's records decide.
 * Thrown to the first arrival too (its tool threw, or returned a result
 * that cannot be stored), with the reason as `cause`.
 */
export class Unknown extends CallError {}
/** Local, failed and kept (local_failure=keep). */
export class Failed extends CallError {}

/**
 * Thrown by an external tool whose request did not leave: the call is
 * released (reconcile = 'not_sent') and the error goes on, with `key` set.
 * Thrown by a local tool: all of it is rolled back, the call released.
 */
export class NotSent extends Error {
  constructor(message?: string, options?: { cause?: unknown });
  /** The call's key, once the wrapper has released it. */
  key: string | undefined;
}

/**
 * A local tool returned what cannot be stored (not JSON, an id that is not
 * one SQL value, text beyond SQLite's limit): its writes were rolled back,
 * the call recorded failed ('released': a retry runs; 'failed': kept), the
 * error that says where and why as `cause`.
 */
export class Unstorable extends TypeError {
  readonly key: string;
  readonly status: 'released' | 'failed';
}

/**
 * A call whose key was already used with other arguments, refused under
 * args_mismatch=error (the default): nothing ran, nothing was claimed.  The
 * database's error is `cause`, its code `code`.
 */
export class ArgsMismatch extends Error {
  readonly key: string;
  readonly tool: string;
  readonly code: string;
}

/** What an arrival meant to record when Lost or NotRecorded was thrown
 *  ('failed': a local call). */
export type Recording = 'done' | 'unknown' | 'not_sent' | 'failed';

/**
 * The call was released while this arrival ran it (a reconcile), and may
 * have been claimed again: this arrival's outcome was not recorded.
 */
export class Lost extends Error {
  readonly key: string;
  readonly status: Recording;
  /** The tool's result, when it returned one (else null). */
  readonly result: unknown;
  /** The tool's id, when it returned one (else null). */
  readonly id: Id;
}

/**
 * The database refused the record for longer than `calls.recordTimeoutMs`:
 * the call stays pending; reconcile it (`calls.reconcile`).
 */
export class NotRecorded extends Error {
  readonly key: string;
  readonly status: Recording;
  /** The tool's result, when it returned one (else null). */
  readonly result: unknown;
  /** The tool's id, when it returned one (else null). */
  readonly id: Id;
}

/** The options of an idem table (doc/contract.md §5, §9 to §12). */
export interface TableOptions {
  local_failure?: 'release' | 'keep';
  args_mismatch?: 'error' | 'replay';
  durability?: 'full' | 'relaxed';
  /** A duration: '30 days', '24 hours', '90 seconds'. */
  retain?: string;
  /** A duration: '5 minutes'. */
  stale_after?: string;
  /** 'yes': the table's external calls go to targets that honour the key. */
  honours_key?: 'no' | 'yes';
  /** How many sends a call that honours the key may have: '1' to '100' (default '5'). */
  max_sends?: string;
  /** The first resend's wait, doubled with each send: a duration (default '1 second'). */
  resend_after?: string;
}

export interface ToolOptions<A> {
  /** 'local' (default): a write into this database; 'external': to another system. */
  kind?: 'local' | 'external';
  /** The tool's name in the key (default: the function's name). */
  name?: string;
  /** The arguments that name the call: their names, or a function of args. */
  keyargs?: ReadonlyArray<keyof A & string> | ((args: A) => unknown);
  /** The names of the arguments the tool takes, when its body does not
   *  destructure them ({ sku, qty = 1 } says it): a call with another name,
   *  or without one of them, is refused before anything is claimed; a name
   *  ending in '?' is optional.  keyargs are checked against them too. */
  params?: ReadonlyArray<(keyof A & string) | `${keyof A & string}?`>;
  /** An external tool whose target honours Idempotency-Key: an unknown
   *  outcome is sent again, with the same key, while idem allows it. */
  honoursKey?: boolean;
}

/** What a tool gets beside its arguments, from its caller (tool.run()'s
 *  extra; agentTool() puts the framework's there). */
export interface ToolExtra {
  /** The framework's signal: the run was aborted. */
  abortSignal?: AbortSignal;
  /** The framework's id of this tool call (not part of the key). */
  toolCallId?: string;
  /** The conversation so far, where the framework gives it. */
  messages?: unknown[];
  [more: string]: unknown;
}

/** The wrapped tool. */
export interface Tool<A, R> {
  /** Resolves to the recorded result (the first arrival's, on a replay). */
  (who: Part, conv: Part, args?: A, extra?: ToolExtra): Promise<R>;
  /** Resolves to the Outcome: the result, and whether it was replayed.
   *  extra is handed to the tool, beside its arguments. */
  run(who: Part, conv: Part, args?: A, extra?: ToolExtra): Promise<Outcome<R>>;
  /** The key this call would have. */
  key(who: Part, conv: Part, args?: A): string;
  readonly kind: 'local' | 'external';
  readonly name: string;
}

export interface ExternalContext extends ToolExtra {
  /** The header value to send: `"<key>"` (quotes included). */
  idempotencyKey: string;
  /** The call's key: 32 hex digits. */
  key: string;
}

export interface LocalContext extends ToolExtra {
  /** The call's key: 32 hex digits. */
  key: string;
}

/** An operator's verdict on an open call. */
export type Verdict = 'arrived' | 'not_arrived' | 'not_sent';

export interface ReconcileOptions {
  id?: IdInput;
  result?: unknown;
  note?: string;
}

export class Calls<D extends Database = Database> {
  constructor(db: D, table?: string, options?: TableOptions);
  readonly db: D;
  readonly table: string;
  /** How long recording an external call's outcome retries a busy
   *  database before NotRecorded, in ms (default 30000). */
  recordTimeoutMs: number;
  /** How long one call of a tool that honours the key may wait for its
   *  resends, in ms (default 30000). */
  resendWaitMs: number;
  /** idem_key(who, conv, tool, args); args as JSON text or a value. */
  key(who: Part, conv: Part, tool: string, args: unknown): string;
  /** The reply a duplicate of this call gets, or null if it is not claimed. */
  reply(key: string): Reply | null;
  /** Wait for a pending call; resolves to its result once it is done. */
  wait(key: string, timeoutMs?: number, intervalMs?: number): Promise<unknown>;
  /** wait(), resolving to the call's Outcome (replayed: true). */
  waitOutcome(key: string, timeoutMs?: number, intervalMs?: number): Promise<Outcome>;
  /** Settle an open call: 'arrived' makes it done; the others release it. */
  reconcile(key: string, verdict: 'arrived', options?: ReconcileOptions): void;
  reconcile(key: string, verdict: 'not_arrived' | 'not_sent'): void;
  /** A local tool: fn runs synchronously inside the claim's transaction. */
  tool<A extends object, R>(
    options: ToolOptions<A> & { kind?: 'local' },
    fn: (db: D, args: A, context: LocalContext) => R | Result<R>,
  ): Tool<A, R>;
  /** An external tool: fn runs after the claim has committed. */
  tool<A extends object, R>(
    options: ToolOptions<A> & { kind: 'external' },
    fn: (args: A, context: ExternalContext) => Promise<R | Result<R>> | R | Result<R>,
  ): Tool<A, R>;
}

/** An idem claim table on db (created when missing with the options given;
 *  options given for a table that exists must be its options). */
export function calls<D extends Database>(db: D, table?: string, options?: TableOptions): Calls<D>;
