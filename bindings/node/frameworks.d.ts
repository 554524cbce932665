// Type declarations for sqlite-idem/frameworks (frameworks.js): an agent
// framework's tool through idem.
import type { Calls, Id, ToolOptions, Tool, Database, ExternalContext, Result } from './index.js';

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
  /** How long a repeat of a call in progress waits for its result before
   *  answering 'pending' (ms; default 0). */
  waitMs?: number;
}

/** What the model gets for a call that the tool did not run now. */
export type Answer<R> =
  | { status: 'done'; idempotent: true; key: string; id: Exclude<Id, bigint> | string; result: R }
  | { status: 'pending' | 'unknown' | 'failed'; idempotent: boolean; key: string; message: string };

/** The execute function a framework calls: the tool's result on the first
 *  arrival, an Answer otherwise. */
export interface AgentExecute<A, R> {
  (input: A, ...ctx: any[]): Promise<R | Answer<R>>;
  /** The idem tool underneath (run, key). */
  readonly tool: Tool<A, R>;
  /** The key of this call. */
  key(input: A, ...ctx: any[]): string;
}

export function agentTool<A extends object, R>(
  calls: Calls, options: AgentToolOptions<A> & { kind?: 'local' },
  fn: (db: Database, args: A) => R | Result<R>): AgentExecute<A, R>;
export function agentTool<A extends object, R>(
  calls: Calls, options: AgentToolOptions<A> & { kind: 'external' },
  fn: (args: A, context: ExternalContext) => R | Result<R> | Promise<R | Result<R>>): AgentExecute<A, R>;

/** The presets of `context`. */
export const CONTEXTS: Readonly<Record<ContextName, {
  who(...ctx: any[]): string | undefined;
  conv(...ctx: any[]): string | undefined;
  hint: string;
}>>;
