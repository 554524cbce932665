// Type declarations for sqlite-idem/frameworks (frameworks.js): an agent
// framework's tool through idem.
import type { Calls, Id, ToolOptions, Tool, Database, ExternalContext, LocalContext, Result, ToolExtra } from './index.js';

/** Where a framework's run context keeps the user and the conversation. */
export type ContextName = 'ai-sdk' | 'langchain' | 'openai-agents';

/** who or conv: a fixed string, or a function of the framework's context
 *  arguments (those it passes to execute after the input). */
export type Party = string | ((...ctx: any[]) => string | undefined);

export interface AgentToolOptions<A> extends ToolOptions<A> {
  /** 'ai-sdk': options.experimental_context.{user, conversation};
   *  'langchain': config.configurable.{user_id, thread_id};
   *  'openai-agents': runContext.context.{user, conversation}. */
  context?: ContextName;
  /** The user; overrides context's. */
  who?: Party;
  /** The conversation (thread); overrides context's. */
  conv?: Party;
  /** What the tool gets beside its arguments, from the framework's context
   *  arguments; overrides context's (abortSignal, toolCallId, messages). */
  extra?: (...ctx: any[]) => ToolExtra | undefined;
  /** How long a repeat of a call in progress waits for its result before
   *  answering 'pending' (ms; default 0). */
  waitMs?: number;
}

/** What the model gets, the same shape on every arrival: a done call's
 *  result, with idempotent beside it (false: this arrival ran the tool;
 *  true: a repeat, handed the first arrival's result), or why there is none. */
export type Answer<R> =
  | { status: 'done'; idempotent: boolean; key: string; id: Exclude<Id, bigint> | string; result: R }
  | { status: 'pending' | 'unknown' | 'failed'; idempotent: boolean; key: string; message: string };

/** The execute function a framework calls: an Answer, on every arrival. */
export interface AgentExecute<A, R> {
  (input: A, ...ctx: any[]): Promise<Answer<R>>;
  /** The idem tool underneath (run, key). */
  readonly tool: Tool<A, R>;
  /** The key of this call. */
  key(input: A, ...ctx: any[]): string;
}

export function agentTool<A extends object, R>(
  calls: Calls, options: AgentToolOptions<A> & { kind?: 'local' },
  fn: (db: Database, args: A, context: LocalContext) => R | Result<R>): AgentExecute<A, R>;
export function agentTool<A extends object, R>(
  calls: Calls, options: AgentToolOptions<A> & { kind: 'external' },
  fn: (args: A, context: ExternalContext) => R | Result<R> | Promise<R | Result<R>>): AgentExecute<A, R>;

/** The presets of `context`. */
export const CONTEXTS: Readonly<Record<ContextName, {
  who(...ctx: any[]): string | undefined;
  conv(...ctx: any[]): string | undefined;
  extra(...ctx: any[]): ToolExtra | undefined;
  hint: string;
}>>;
