// Type declarations for replystream (hand-written; CI type-checks the examples against them
// with `tsc --noEmit --strict`). The runtime is index.js (CommonJS) and index.mjs (ESM).

/** A text: a string (well-formed UTF-16) or UTF-8 bytes. */
export type Text = string | Uint8Array;

/** Milliseconds from the caller's monotonic clock: a whole, non-negative, safe integer. */
export type Millis = number;

/** The built-in channel profiles (case-insensitive). */
export type Channel =
  | 'telegram'
  | 'discord'
  | 'slack'
  | 'signal'
  | 'whatsapp'
  | 'imessage'
  | 'googlechat'
  | 'generic'
  | (string & {});

/**
 * The format a send's `text` is in, i.e. how to post it (SPEC §16):
 * - `'telegram-html'` (telegram's default): `sendMessage` / `editMessageText` with
 *   `parse_mode: 'HTML'`;
 * - `'telegram-entities'`: the plain `text` with `entities` (Bot API `MessageEntity`
 *   objects, UTF-16 offsets, as JavaScript strings count) and no parse mode;
 * - `'slack-mrkdwn'` (slack): `chat.postMessage` / `chat.update` `text` (mrkdwn);
 * - `'discord'` (discord): the message `content` (tables laid out per `tableMode`,
 *   `@everyone`/`@here` neutralised unless `allowMassMentions`);
 * - `'whatsapp'` (whatsapp): the message body, WhatsApp's markers;
 * - `'plain'` (signal, imessage): plain text, links as `text (url)`;
 * - `'markdown'` (generic, googlechat): the Markdown as written.
 */
export type Format =
  | 'markdown'
  | 'discord'
  | 'telegram-html'
  | 'telegram-entities'
  | 'slack-mrkdwn'
  | 'whatsapp'
  | 'plain';

/** Every format name, in the C ABI's order. */
export const FORMATS: readonly Format[];

/**
 * How a table shows in a format without tables: `'code'` (a monospace block, columns
 * aligned; the default there), `'bullets'` (one bullet per row, `header: value`), `'off'`
 * (the lines as written), `'native'` (only for `'markdown'`, its default). `'block'` is read
 * as `'code'`.
 */
export type TableMode = 'code' | 'bullets' | 'off' | 'native' | 'block';

/**
 * A Telegram message entity of a `'telegram-entities'` text, exactly the Bot API's
 * `MessageEntity` (pass the array as `entities`): offsets and lengths in UTF-16 code units.
 */
export interface Entity {
  type:
    | 'bold'
    | 'italic'
    | 'strikethrough'
    | 'code'
    | 'pre'
    | 'text_link'
    | 'blockquote'
    | 'expandable_blockquote';
  offset: number;
  length: number;
  /** `text_link`: the URL. */
  url?: string;
  /** `pre`: the code block's language, when it names one. */
  language?: string;
}

/** A text rendered by `render()`. */
export interface Rendered {
  /** What to post, as is, in `format`. */
  readonly text: string;
  readonly format: Format;
  /** `'telegram-entities'` only (empty otherwise). */
  readonly entities: readonly Entity[];
}

/** How a channel counts text length. */
export type Metric = 'utf16' | 'chars' | 'bytes' | 'graphemes';

/**
 * Overrides of a channel profile's defaults (every knob of the library's configuration, in
 * camelCase; see the repository README). An option left out keeps the channel's value.
 */
export interface Options {
  /** The longest message text (channel default; generic 4000), at least `minLimit(metric)`. */
  textLimit?: number;
  metric?: Metric;
  /** The longest text a live preview may show. */
  previewLimit?: number;
  /** A soft cap on lines per message; null removes the channel's cap; else at least 3. */
  maxLines?: number | null;
  /** The chunker's minimum block length (800). */
  chunkMin?: number;
  /** The chunker's maximum block length (1200), at least `minLimit(metric)`. */
  chunkMax?: number;
  breakPreference?: 'paragraph' | 'newline' | 'sentence';
  chunkMode?: 'length' | 'newline';
  breakMode?: 'text_end' | 'message_end';
  /** Send blocks while the model writes (true), or everything at finish (false). */
  blockStreaming?: boolean;
  /** null: the default (the channel's, else chunkMin). */
  coalesceMin?: number | null;
  /** null: the default (the text limit less the prefix). */
  coalesceMax?: number | null;
  /** The coalescer's idle time; null or 0: no idle timer. */
  coalesceIdleMs?: Millis | null;
  /** The pause between block sends: off, 800-2500 ms, or a custom range (each <= 60000). */
  humanDelay?: 'off' | 'natural' | { minMs: Millis; maxMs: Millis };
  /** How long a send may stay unacknowledged (15000); null or 0: no timeout. */
  deliveryTimeoutMs?: Millis | null;
  /** e.g. "[{model}]"; null for none. */
  responsePrefix?: Text | null;
  prefixEveryMessage?: boolean;
  model?: Text | null;
  provider?: Text | null;
  thinkingLevel?: Text | null;
  identityName?: Text | null;
  reasoning?: 'off' | 'on' | 'stream';
  requireFinalTag?: boolean;
  /** "NO_REPLY" by default; null disables it. */
  silentToken?: Text | null;
  /** "HEARTBEAT_OK" by default; null disables it. */
  heartbeatToken?: Text | null;
  /** Live preview streaming. */
  preview?: 'off' | 'partial' | 'block';
  previewThrottleMs?: Millis;
  /** Appended to the preview while streaming; null for none. */
  previewCursor?: Text | null;
  previewMinInitialUnits?: number;
  previewBlockMin?: number;
  previewBlockMax?: number;
  /** A message edited in place ('edit', the default) or a draft bubble ('draft'). */
  previewTransport?: 'edit' | 'draft';
  previewExpandableQuote?: boolean;
  /**
   * Directories under which a local path the model writes (`MEDIA: /p`,
   * `[[media:file:///p]]`) is media, sent resolved; each absolute, without `..`, not `/`.
   * None (the default): no local path is media; such a reference is removed from the text
   * and counted in `stats().mediaRefused`.
   */
  mediaRoots?: readonly string[];
  /** Whether `http://` URLs are media (true); false keeps them as text (counted refused). */
  mediaAllowHttp?: boolean;
  /**
   * The format every send is rendered in (default: the channel's, see `Format`); null for
   * the channel's. A format the channel cannot show (e.g. `'slack-mrkdwn'` on telegram) is
   * refused with an InvalidConfigError whose field is `format`.
   */
  format?: Format | null;
  /** How tables show where the format has none; null for the format's default. */
  tableMode?: TableMode | null;
  /** Discord: let `@everyone` / `@here` written by the model ping (false). */
  allowMassMentions?: boolean;
  /**
   * The longest caption of a media send (telegram and whatsapp 1024); null for none. A
   * longer text goes as its own message before the media.
   */
  captionLimit?: number | null;
}

/** Options of an engine: the knobs plus the seed of its random pauses. */
export interface EngineOptions extends Options {
  seed?: number;
}

export type SendKind = 'tool' | 'block' | 'final' | 'preview';
export type SendOp = 'create' | 'edit' | 'delete' | 'draft';
export type Lane = 'answer' | 'reasoning' | 'status';

/**
 * Deliver `text` and `media` as `op` says, then ack with `sendId`. `text` is what to post,
 * as is, in `format` (see `Format` for the API call and parse mode of each); `markdown` is
 * the Markdown it was rendered from.
 */
export interface SendAction {
  kind: 'send';
  sendId: number;
  sendKind: SendKind;
  op: SendOp;
  /** The engine's name for the message (edit, delete, draft, a create edited later). */
  messageKey: number | null;
  /** The platform id the host gave when it acked this message's create. */
  messageRef: string | null;
  text: string;
  media: string[];
  isError: boolean;
  audioAsVoice: boolean;
  lane: Lane;
  /** 'current': reply to the user's message; 'id': to the message `replyToId`. */
  replyTo: 'none' | 'current' | 'id';
  replyToId: string | null;
  /** The format `text` is in (the engine's). */
  format: Format;
  /** The Markdown `text` was rendered from (equal to `text` in `'markdown'`). */
  markdown: string;
  /** `'telegram-entities'`: the entities of `text` (empty in every other format). */
  entities: Entity[];
}

/** The earliest deadline changed: push a timer at `deadlineMs` (null: none any more). */
export interface ArmTimerAction {
  kind: 'arm_timer';
  deadlineMs: Millis | null;
}

/** Streaming stopped. */
export interface AbortAction {
  kind: 'abort';
  reason: 'cancelled' | 'delivery_timeout';
}

/** The turn finished and every send is acknowledged; emitted once. */
export interface IdleAction {
  kind: 'idle';
}

export type Action = SendAction | ArmTimerAction | AbortAction | IdleAction;

/** A send that did not reach the user. */
export interface Undelivered {
  readonly sendId: number;
  readonly sendKind: Exclude<SendKind, 'preview'>;
  readonly reason: 'failed' | 'timed_out';
  readonly text: string;
  readonly media: readonly string[];
  readonly isError: boolean;
  readonly lane: Lane;
}

/** How a turn ended. */
export interface TurnOutcome {
  readonly ending: 'finished' | 'failed' | 'cancelled';
  /** The user got the whole reply: not cancelled and nothing undelivered. */
  readonly allDelivered: boolean;
  /** No final message is undelivered. */
  readonly finalDelivered: boolean;
  readonly undelivered: readonly Undelivered[];
}

/** The engine's counters. */
export interface Stats {
  gaps: number;
  duplicatesIgnored: number;
  divergences: number;
  payloadsDeduped: number;
  unknownAcks: number;
  sends: number;
  delivered: number;
  failures: number;
  retries: number;
  dropped: number;
  timeouts: number;
  skippedBlocks: number;
  previewUpdates: number;
  previewSkips: number;
  /** Media references the media policy refused (see `mediaRoots`, `mediaAllowHttp`). */
  mediaRefused: number;
}

/** How a send failed: a 429's retry-after, or a failure retrying will not fix. */
export interface Failure {
  retryAfterMs?: Millis | null;
  permanent?: boolean;
}

/**
 * One reply stream (one turn). Push each model event with the current time, drain `poll()`
 * or `actions()` after each push and execute the actions in order; `close()` when done.
 * Bad types throw TypeError, bad values RangeError, refusals a ReplystreamError.
 */
export class Engine {
  constructor(channel?: Channel, options?: EngineOptions);
  readonly closed: boolean;
  close(): void;

  setSeq(seq: number): void;
  messageStart(nowMs: Millis): void;
  textDelta(text: Text, nowMs: Millis): void;
  textSnapshot(text: Text, nowMs: Millis): void;
  textEnd(text: Text | null, nowMs: Millis): void;
  thinkingDelta(text: Text, nowMs: Millis): void;
  thinkingEnd(nowMs: Millis): void;
  toolStart(name: Text, nowMs: Millis): void;
  toolResult(text: Text | null, nowMs: Millis, media?: Text | Text[] | null): void;
  media(urls: Text | Text[], nowMs: Millis, caption?: Text | null): void;
  messageEnd(text: Text | null, nowMs: Millis): void;
  finalReply(text: Text | null, nowMs: Millis, media?: Text | Text[] | null): void;
  finish(nowMs: Millis): void;
  fail(error: Text, nowMs: Millis): void;
  cancel(nowMs: Millis): void;
  timer(nowMs: Millis): void;
  delivered(sendId: number, nowMs: Millis, messageRef?: Text | null): void;
  deliveryFailed(sendId: number, nowMs: Millis, failure?: Failure): void;

  /** The next pending action, or null. */
  poll(): Action | null;
  /** Every pending action (acks pushed while iterating add to it). */
  actions(): Generator<Action, void, undefined>;
  nextDeadline(): Millis | null;
  isDone(): boolean;
  stats(): Stats;
  /** null while the turn runs. */
  outcome(): TurnOutcome | null;
}

/** One piece of a text from split() or chunk(). */
export interface Block {
  /** What to display: the source, plus synthetic fence lines or indent where code was cut. */
  readonly text: string;
  /** The source between this piece and the next. */
  readonly sep: string;
  /** Whitespace before the piece that no earlier sep holds. */
  readonly lead: string;
  /** The source's range in the input: UTF-16 indices for a string, byte offsets for bytes. */
  readonly start: number;
  readonly end: number;
  readonly fenceReopened: boolean;
  readonly fenceClosed: boolean;
  readonly indentReopened: boolean;
  /** The piece starts with a table's header and delimiter rows again (a table cut between
   * two rows goes on). */
  readonly tableHeaderRepeated: boolean;
  /** The piece starts with inline delimiters reopening an emphasis or code span cut before it. */
  readonly spansReopened: boolean;
  /** The piece ends with inline delimiters closing an emphasis or code span cut after it. */
  readonly spansClosed: boolean;
  /** Columns taken off the lines of `text` (0: none): a piece that starts inside a list
   * item's code (or text) 4+ columns deep is shown as the item's content reads. */
  readonly dedent: number;
  /** Quote markers kept at each line's start before the `dedent` columns (0: leading
   * columns): a piece inside a list item's fence in a block quote, 4+ columns past the `>`. */
  readonly dedentQuotes: number;
  /** The UTF-16 range of `text` that is source (de-indented when `dedent` > 0). */
  readonly sourceInText: readonly [number, number];
  /** `text.slice(...sourceInText)`: where `dedent` is 0, the input's `start..end`; over all
   * pieces, lead + input.slice(start, end) + sep is the input. */
  readonly sourceText: string;
}

export function split(text: Text, channel?: Channel, options?: Options): Block[];
export function chunk(text: Text, channel?: Channel, options?: Options): Block[];
/**
 * Renders a whole Markdown text into the channel's format (or `options.format`), as the
 * engine renders each send. Options `format`, `tableMode` and `allowMassMentions` apply.
 */
export function render(text: Text, channel?: Channel, options?: Options): Rendered;
/** The smallest text limit accepted in `metric`: 29 UTF-16 units, 24 chars, 49 bytes, 15 graphemes. */
export function minLimit(metric?: Metric): number;

/** The library's version, e.g. "0.1.0". */
export function version(): string;
/** Where the shared library was loaded from. */
export function libraryPath(): string;
/** The library's static message for a result code. */
export function resultMessage(code: number): string;

/** The C ABI's result codes. */
export const ResultCode: {
  readonly OK: 0;
  readonly DONE: 1;
  readonly NULL_POINTER: 2;
  readonly INVALID_UTF8: 3;
  readonly UNKNOWN_CHANNEL: 4;
  readonly INVALID_CONFIG: 5;
  readonly UNKNOWN_SEND: 6;
  readonly TURN_ENDED: 7;
  readonly OUT_OF_RANGE: 8;
  readonly INVALID_ARGUMENT: 9;
  readonly PANIC: 10;
  readonly POISONED: 11;
  readonly ERROR: 12;
};

/** A call refused by the library. */
export class ReplystreamError extends Error {
  /** The result code (see ResultCode). */
  readonly code: number;
  /** Its name, e.g. "UNKNOWN_SEND". */
  readonly codeName: string;
  /** The library's reason. */
  readonly detail: string;
  /** The option or argument refused (e.g. "textLimit", "media[1]", "sendId"), or null. */
  readonly field: string | null;
}
export class InvalidConfigError extends ReplystreamError {}
export class UnknownChannelError extends ReplystreamError {}
export class InvalidUtf8Error extends ReplystreamError {}
export class InvalidArgumentError extends ReplystreamError {}
export class UnknownSendError extends ReplystreamError {}
export class TurnEndedError extends ReplystreamError {}

/** What a `send` function throws (or rejects with) to say how a delivery failed. */
export class DeliveryError extends Error {
  constructor(message: string, failure?: { retryAfterMs?: Millis | null; permanent?: boolean });
  readonly retryAfterMs: Millis | null;
  readonly permanent: boolean;
}

/** What a Driver does with a turn's actions. */
export interface TurnHandlers {
  /**
   * Delivers a send; the promise is the ack: resolve with the platform's message id (or
   * nothing), reject (a DeliveryError for a retry-after or a permanent failure) on failure.
   * Without it, the turn is an async iterator of its actions.
   */
  send?: (action: SendAction) => Promise<string | null | undefined | void> | string | null | undefined | void;
  /** Sees every action first (sends, aborts, idle). */
  onAction?: (action: Exclude<Action, ArmTimerAction>) => void;
}

/** A turn run by a Driver: pushes take the driver's clock. */
export class Turn implements AsyncIterable<Exclude<Action, ArmTimerAction>> {
  private constructor();
  /** The outcome, once the turn is over. */
  readonly done: Promise<TurnOutcome>;
  readonly finished: boolean;
  readonly engine: Engine;
  outcome(): TurnOutcome | null;

  messageStart(): void;
  textDelta(text: Text): void;
  textSnapshot(text: Text): void;
  textEnd(text?: Text | null): void;
  thinkingDelta(text: Text): void;
  thinkingEnd(): void;
  toolStart(name: Text): void;
  toolResult(text: Text | null, media?: Text | Text[] | null): void;
  media(urls: Text | Text[], caption?: Text | null): void;
  messageEnd(text?: Text | null): void;
  finalReply(text: Text | null, media?: Text | Text[] | null): void;
  finish(): Promise<TurnOutcome>;
  fail(error: Text): Promise<TurnOutcome>;
  cancel(): Promise<TurnOutcome>;

  /** Without a send function: ack a send. */
  delivered(sendId: number, messageRef?: Text | null): void;
  deliveryFailed(sendId: number, failure?: Failure): void;

  [Symbol.asyncIterator](): AsyncIterator<Exclude<Action, ArmTimerAction>>;
}

/** Runs turns on Node's event loop, one setTimeout per turn. */
export class Driver {
  /** `now`: the clock in whole ms (default: Math.ceil(performance.now())). */
  constructor(options?: { now?: () => Millis });
  now(): Millis;
  open(channel?: Channel, options?: EngineOptions, handlers?: TurnHandlers): Turn;
  /** Turns still open. */
  readonly size: number;
  /** Cancels every running turn and frees every engine. */
  close(): void;
}
