// Streams a reply into a fake chat through the Driver: the chat posts after 20 ms of latency,
// refuses the first post with a 429 (retry after 300 ms), and prints what it shows.
import { DeliveryError, Driver } from 'replystream';

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const chat = new Map(); // message id -> text
let refused = false;

/** @param {import('replystream').SendAction} action */
async function send(action) {
  await sleep(20);
  if (action.op === 'create' && !refused) {
    refused = true;
    throw new DeliveryError('429 Too Many Requests', { retryAfterMs: 300 });
  }
  if (action.op === 'create') {
    const id = `m${chat.size + 1}`;
    chat.set(id, action.text);
    console.log(`[${id}] ${JSON.stringify(action.text)}`);
    return id; // the ack: the platform's message id
  }
  if (action.op === 'edit' && action.messageRef) chat.set(action.messageRef, action.text);
  if (action.op === 'delete' && action.messageRef) chat.delete(action.messageRef);
  return null;
}

const reply =
  'Rivers carry sediment downstream. Where the current slows, the sediment settles.\n\n' +
  'Over centuries that builds a delta 🌊: new land, one grain at a time.\n\n' +
  'So the town really does stand on ground the river made.';

const driver = new Driver();
const turn = driver.open('telegram', { chunkMin: 40, chunkMax: 120, coalesceIdleMs: 100 }, { send });
turn.messageStart();
for (const word of reply.split(/(?<= )/)) {
  turn.textDelta(word); // as the model streams it
  await sleep(25);
}
const outcome = await turn.finish(); // resolves once every message is acknowledged
console.log(`${outcome.ending}, all delivered: ${outcome.allDelivered}, messages: ${chat.size}`);
