// The API from TypeScript (type-checked in CI with `tsc --noEmit --strict`; not run).
import {
  Action,
  Block,
  Driver,
  Engine,
  Entity,
  FORMATS,
  Format,
  InvalidConfigError,
  ReplystreamError,
  ResultCode,
  SendAction,
  TurnOutcome,
  chunk,
  minLimit,
  render,
  Rendered,
  split,
} from 'replystream';

function runTurn(text: string): TurnOutcome | null {
  const engine = new Engine('discord', { chunkMin: 40, chunkMax: 200, humanDelay: 'off', seed: 7 });
  try {
    let now = 0;
    engine.messageStart(now);
    engine.textDelta(new TextEncoder().encode(text), (now += 10));
    engine.toolResult('ran 3 tests', now, ['https://example.com/a.png']);
    engine.finish(now);
    for (;;) {
      for (const action of engine.actions()) {
        const a: Action = action;
        if (a.kind === 'send') {
          const ref: string | null = a.messageRef;
          engine.delivered(a.sendId, now, ref ?? `m${a.sendId}`);
        } else if (a.kind === 'arm_timer') {
          const when: number | null = a.deadlineMs;
          void when;
        } else if (a.kind === 'abort') {
          const why: 'cancelled' | 'delivery_timeout' = a.reason;
          void why;
        }
      }
      const deadline = engine.nextDeadline();
      if (engine.isDone() || deadline === null) break;
      now = Math.max(now, deadline);
      engine.timer(now);
    }
    engine.deliveryFailed(99, now, { retryAfterMs: 100 });
    return engine.outcome();
  } catch (error) {
    if (error instanceof ReplystreamError && error.code === ResultCode.UNKNOWN_SEND) {
      const field: string | null = error.field;
      void field;
    }
    return engine.outcome();
  } finally {
    engine.close();
  }
}

const pieces: Block[] = split('A long text. '.repeat(100), 'telegram', { textLimit: minLimit('utf16') });
const rebuilt = pieces.map((b) => b.lead + b.sourceText + b.sep).join('');
const streamed: readonly Block[] = chunk(rebuilt, 'generic', { chunkMin: 30, chunkMax: 60 });
void streamed;

try {
  new Engine('generic', { textLimit: 3 });
} catch (error) {
  if (error instanceof InvalidConfigError) console.log(error.field, error.codeName);
}

// Platform formats: what to post, and the Bot API's entities as they are.
const html: Rendered = render('**Done.** See [docs](https://example.com)', 'telegram');
const asEntities = render('**Done.**', 'telegram', { format: 'telegram-entities', tableMode: 'bullets' });
const entities: readonly Entity[] = asEntities.entities;
const formats: readonly Format[] = FORMATS;
console.log(html.text, JSON.stringify(entities), formats.length);

function post(action: SendAction): { text: string; parse_mode?: 'HTML'; entities?: Entity[] } {
  const format: Format = action.format;
  if (format === 'telegram-html') return { text: action.text, parse_mode: 'HTML' };
  if (format === 'telegram-entities') return { text: action.text, entities: action.entities };
  console.log(action.markdown);
  return { text: action.text };
}
void post;
new Engine('discord', { format: null, allowMassMentions: false, captionLimit: null });

async function driven(): Promise<void> {
  const driver = new Driver({ now: () => Math.ceil(performance.now()) });
  const turn = driver.open('telegram', { preview: 'partial' }, {
    send: async (action: SendAction) => (action.op === 'create' ? 'm1' : undefined),
    onAction: (action) => console.log(action.kind),
  });
  turn.textDelta('Hello.');
  const outcome: TurnOutcome = await turn.finish();
  console.log(outcome.allDelivered, runTurn('x'));

  // Without a send function: iterate the actions and ack them.
  const manual = driver.open('generic');
  manual.textDelta('Hi.');
  void manual.finish();
  for await (const action of manual) {
    if (action.kind === 'send') manual.delivered(action.sendId, 'm2');
  }
  driver.close();
}
void driven();
