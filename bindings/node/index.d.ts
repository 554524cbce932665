// Type declarations for sqlite-idem.

/** The part of a better-sqlite3 Database that sqlite-idem uses. */
export interface Database {
  loadExtension(path: string, entryPoint?: string): unknown;
  prepare(source: string): any;
  exec(source: string): unknown;
  readonly inTransaction: boolean;
}

/** JSON, as a tool's arguments and results are stored. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The name of the header an external tool sends its key in. */
export const HEADER: 'Idempotency-Key';

/** The path of the SQLite extension that `npm install` built. */
export function loadablePath(): string;

/** Load idem into a better-sqlite3 Database. */
export function load(db: Database): void;

/** What a tool may return to set the call's `id` column too. */
export class Result<R = unknown> {
  constructor(result: R, id?: string | number | bigint | null);
  readonly result: R;
  readonly id: string | number | bigint | null;
}

/** The JSON object that idem hands a duplicate arrival. */
export interface Reply {
  id: unknown;
  idempotent: boolean;
  status: 'pending' | 'done' | 'failed' | 'unknown';
  result?: unknown;
  message?: string;
  [more: string]: unknown;
}

/** A duplicate arrival of a call that did not end in `done`. */
export class CallError extends Error {
  readonly key: string;
  readonly reply: Reply;
  readonly status: Reply['status'];
}
/** Pending: the first arrival is still running, or its process died. */
export class InProgress extends CallError {}
/** External, outcome unknown: never retried; the target's records decide. */
export class Unknown extends CallError {}
/** Local, failed and kept (local_failure=keep). */
export class Failed extends CallError {}

export interface ToolOptions<A> {
  /** 'local' (default): a write into this database; 'external': to another system. */
  kind?: 'local' | 'external';
  /** The tool's name in the key (default: the function's name). */
  name?: string;
  /** The arguments that name the call: their names, or a function of args. */
  keyargs?: ReadonlyArray<keyof A & string> | ((args: A) => unknown);
}

/** The wrapped tool: resolves to the recorded result. */
export interface Tool<A, R> {
  (who: string, conv: string, args?: A): Promise<R>;
  /** The key this call would have. */
  key(who: string, conv: string, args?: A): string;
}

export interface ExternalContext {
  /** The header value to send: `"<key>"` (quotes included). */
  idempotencyKey: string;
  /** The call's key: 32 hex digits. */
  key: string;
}

export class Calls {
  constructor(db: Database, table?: string, options?: Record<string, string | number>);
  readonly db: Database;
  readonly table: string;
  /** idem_key(who, conv, tool, args). */
  key(who: string, conv: string, tool: string, args: unknown): string;
  /** The reply a duplicate of this call gets, or null if it is not claimed. */
  reply(key: string): Reply | null;
  /** Wait for a pending call; resolves to its result once it is done. */
  wait(key: string, timeoutMs?: number, intervalMs?: number): Promise<unknown>;
  /** A local tool: fn runs synchronously inside the claim's transaction. */
  tool<A extends object, R>(
    options: ToolOptions<A> & { kind?: 'local' },
    fn: (db: Database, args: A) => R | Result<R>,
  ): Tool<A, R>;
  /** An external tool: fn runs after the claim has committed. */
  tool<A extends object, R>(
    options: ToolOptions<A> & { kind: 'external' },
    fn: (args: A, context: ExternalContext) => Promise<R | Result<R>> | R | Result<R>,
  ): Tool<A, R>;
}

/** An idem claim table on db (created when missing; options verbatim). */
export function calls(db: Database, table?: string,
                      options?: Record<string, string | number>): Calls;
