'use strict';
// The driver: runs engines on Node's event loop. Each turn has one timer (setTimeout, armed
// at the engine's next deadline and re-armed only when it changes); sends are delivered by
// the host's `send` function, whose promise is the ack (resolved: delivered, with the
// platform's message id; rejected: failed), or handed out through an async iterator.

const { performance } = require('node:perf_hooks');
const args = require('./args');
const { Engine } = require('./engine');

// setTimeout's longest delay; a later deadline gets an early timer push, which is harmless.
const MAX_DELAY_MS = 2 ** 31 - 1;

/**
 * A failed delivery, for a `send` function to throw (or reject with): `retryAfterMs` is the
 * platform's retry-after (a 429), `permanent` says retrying will not help. Any other error
 * counts as a failure without either.
 */
class DeliveryError extends Error {
  constructor(message, { retryAfterMs = null, permanent = false } = {}) {
    super(message);
    this.name = 'DeliveryError';
    this.retryAfterMs = retryAfterMs;
    this.permanent = permanent;
  }
}

/** `failure` fields read from whatever a send rejected with. */
function failureOf(reason) {
  const failure = {};
  const retry = reason?.retryAfterMs;
  if (typeof retry === 'number' && Number.isFinite(retry) && retry >= 0) {
    failure.retryAfterMs = Math.min(Math.ceil(retry), Number.MAX_SAFE_INTEGER);
  }
  if (reason?.permanent === true) failure.permanent = true;
  return failure;
}

/**
 * One turn run by a Driver: the engine's pushes without times (the driver's clock gives
 * them), `done` (a promise of the outcome), and, without a `send` function, an async
 * iterator of the actions to execute, acked with `delivered()` / `deliveryFailed()`.
 */
class Turn {
  #driver;
  #engine;
  #send;
  #onAction;
  #timer = null;
  #armedAt = null;
  #inFlight = 0;
  #finished = false;
  #outcome = null;
  #resolve;
  #reject;
  #queue = [];
  #waiters = [];

  constructor(driver, channel, options, handlers) {
    const given = args.plainObject('handlers', handlers);
    if (given.send !== undefined && typeof given.send !== 'function') {
      throw args.typeError('handlers.send', 'a function', given.send);
    }
    if (given.onAction !== undefined && typeof given.onAction !== 'function') {
      throw args.typeError('handlers.onAction', 'a function', given.onAction);
    }
    this.#driver = driver;
    this.#send = given.send ?? null;
    this.#onAction = given.onAction ?? null;
    this.#engine = new Engine(channel, options);
    /** Resolves with the turn's outcome once it is over (idle, or cancelled). */
    this.done = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    // A rejection nobody awaits must not crash the process: it is also thrown by finish().
    this.done.catch(() => {});
  }

  /** The engine itself (for stats(), or anything the driver does not wrap). */
  get engine() {
    return this.#engine;
  }

  /** True once the turn is over. */
  get finished() {
    return this.#finished;
  }

  /** The latest outcome: null while the turn runs; late acks update it. */
  outcome() {
    return this.#engine.closed ? this.#outcome : this.#engine.outcome();
  }

  #push(method, ...values) {
    if (this.#engine.closed) throw new TypeError(`Turn.${method}: the turn is closed`);
    this.#engine[method](...values);
    this.#pump();
  }

  messageStart() { this.#push('messageStart', this.#driver.now()); }
  textDelta(text) { this.#push('textDelta', text, this.#driver.now()); }
  textSnapshot(text) { this.#push('textSnapshot', text, this.#driver.now()); }
  textEnd(text = null) { this.#push('textEnd', text, this.#driver.now()); }
  thinkingDelta(text) { this.#push('thinkingDelta', text, this.#driver.now()); }
  thinkingEnd() { this.#push('thinkingEnd', this.#driver.now()); }
  toolStart(name) { this.#push('toolStart', name, this.#driver.now()); }
  toolResult(text, media) { this.#push('toolResult', text, this.#driver.now(), media); }
  media(urls, caption) { this.#push('media', urls, this.#driver.now(), caption); }
  messageEnd(text = null) { this.#push('messageEnd', text, this.#driver.now()); }
  finalReply(text, media) { this.#push('finalReply', text, this.#driver.now(), media); }

  /** The turn is complete; resolves with the outcome once every send is answered. */
  finish() {
    this.#push('finish', this.#driver.now());
    return this.done;
  }

  /** The model failed; resolves with the outcome once the error is delivered. */
  fail(error) {
    this.#push('fail', error, this.#driver.now());
    return this.done;
  }

  /** Stops the turn now; resolves with the outcome (ending 'cancelled'). */
  cancel() {
    if (!this.#engine.closed) this.#push('cancel', this.#driver.now());
    return this.done;
  }

  /** Iterator mode: the host delivered send `sendId`. */
  delivered(sendId, messageRef) {
    this.#ackCheck('delivered');
    this.#push('delivered', sendId, this.#driver.now(), messageRef);
  }

  /** Iterator mode: send `sendId` failed ({ retryAfterMs, permanent }). */
  deliveryFailed(sendId, failure) {
    this.#ackCheck('deliveryFailed');
    this.#push('deliveryFailed', sendId, this.#driver.now(), failure);
  }

  #ackCheck(method) {
    if (this.#send) {
      throw new TypeError(`Turn.${method}: this turn's sends are acked by its send function`);
    }
  }

  /** Executes every pending action, then re-arms the timer or settles the turn. */
  #pump() {
    const engine = this.#engine;
    if (engine.closed) return;
    for (const action of engine.actions()) {
      if (action.kind === 'arm_timer') continue; // the timer follows nextDeadline() below
      if (this.#onAction) this.#onAction(action);
      if (action.kind === 'send' && this.#send) this.#deliver(action);
      else if (!this.#send) this.#enqueue(action);
    }
    if (engine.isDone()) this.#settle();
    else this.#arm();
  }

  #deliver(action) {
    this.#inFlight++;
    // The send function runs after this drain, in action order (promise jobs are FIFO).
    // The count drops before the ack, so a turn the ack completes is freed at once.
    Promise.resolve()
      .then(() => this.#send(action))
      .then(
        (ref) => {
          this.#inFlight--;
          if (ref !== null && ref !== undefined && typeof ref !== 'string') {
            throw args.typeError('the value of send()', 'a message id string, null or undefined', ref);
          }
          this.#ack(() => this.#engine.delivered(action.sendId, this.#driver.now(), ref ?? null));
        },
        (reason) => {
          this.#inFlight--;
          this.#ack(() => this.#engine.deliveryFailed(action.sendId, this.#driver.now(), failureOf(reason)));
        },
      )
      .catch((error) => this.#abandon(error));
  }

  #ack(push) {
    if (!this.#engine.closed) {
      push();
      this.#pump();
    }
    this.#release();
  }

  #arm() {
    const deadline = this.#engine.nextDeadline();
    if (deadline === this.#armedAt) return;
    this.#disarm();
    if (deadline === null) return;
    const delay = Math.min(Math.max(deadline - this.#driver.now(), 0), MAX_DELAY_MS);
    this.#armedAt = deadline;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#armedAt = null;
      try {
        if (this.#engine.closed) return;
        this.#engine.timer(this.#driver.now());
        this.#pump();
      } catch (error) {
        this.#abandon(error);
      }
    }, delay);
  }

  #disarm() {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#armedAt = null;
  }

  #settle() {
    this.#disarm();
    if (!this.#finished) {
      this.#finished = true;
      this.#outcome = this.#engine.outcome();
      this.#resolve(this.#outcome);
      this.#end();
    }
    this.#release();
  }

  /** Closes the engine once the turn is over and no send is still awaited. */
  #release() {
    if (this.#finished && this.#inFlight === 0 && !this.#engine.closed) {
      this.#outcome = this.#engine.outcome() ?? this.#outcome;
      this.#engine.close();
      this.#driver._forget(this);
    }
  }

  /** A bug in the host's code (or the driver's): the turn stops and `done` rejects. */
  #abandon(error) {
    this.#disarm();
    if (!this.#engine.closed) this.#engine.close();
    this.#driver._forget(this);
    if (!this.#finished) {
      this.#finished = true;
      this.#reject(error);
      this.#end(error);
    }
  }

  /** Driver.close(): cancel if still running, free the engine. */
  _close() {
    if (!this.#engine.closed && !this.#finished) {
      // A broken clock must not keep the engine alive: an earlier time counts as the last.
      let now = 0;
      try {
        now = this.#driver.now();
      } catch {
        // keep 0
      }
      this.#engine.cancel(now);
      while (this.#engine.poll() !== null) {
        // the cancel's abort: nobody is left to tell
      }
      this.#settle();
    }
    this.#disarm();
    if (!this.#engine.closed) {
      this.#outcome = this.#engine.outcome() ?? this.#outcome;
      this.#engine.close();
    }
  }

  // -- iterator mode ---------------------------------------------------------------------

  #enqueue(action) {
    const waiter = this.#waiters.shift();
    if (waiter) waiter.resolve({ value: action, done: false });
    else this.#queue.push(action);
  }

  #end(error) {
    for (const waiter of this.#waiters.splice(0)) {
      if (error) waiter.reject(error);
      else waiter.resolve({ value: undefined, done: true });
    }
  }

  /**
   * Without a `send` function: yields each action to execute ('send', 'abort', 'idle'),
   * ending when the turn is over. Ack each send with `delivered()` or `deliveryFailed()`.
   */
  [Symbol.asyncIterator]() {
    if (this.#send) {
      throw new TypeError("this turn's sends go to its send function; open it without one to iterate");
    }
    return {
      next: () => {
        if (this.#queue.length) return Promise.resolve({ value: this.#queue.shift(), done: false });
        if (this.#finished) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
      },
      return: () => Promise.resolve({ value: undefined, done: true }),
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }
}

/**
 * Runs turns on the event loop. `now` is the clock in whole milliseconds (default:
 * `Math.ceil(performance.now())`).
 */
class Driver {
  #now;
  #turns = new Set();

  constructor(options = {}) {
    const given = args.plainObject('options', options);
    if (given.now !== undefined && typeof given.now !== 'function') {
      throw args.typeError('options.now', 'a function returning milliseconds', given.now);
    }
    this.#now = given.now ?? (() => Math.ceil(performance.now()));
  }

  /** The driver's clock, checked. */
  now() {
    return args.millis('the driver clock', this.#now());
  }

  /**
   * Starts a turn: an engine for `channel` with `options` (as for Engine), and `handlers`:
   * `send(action)` delivers a send and returns (a promise of) the platform's message id;
   * `onAction(action)` sees every action first (sends, aborts, idle).
   */
  open(channel = 'generic', options = {}, handlers = {}) {
    const turn = new Turn(this, channel, options, handlers);
    this.#turns.add(turn);
    return turn;
  }

  /** How many turns are still open (running, or awaiting a send's ack). */
  get size() {
    return this.#turns.size;
  }

  /** Cancels every running turn and frees every engine. */
  close() {
    for (const turn of [...this.#turns]) turn._close();
    this.#turns.clear();
  }

  _forget(turn) {
    this.#turns.delete(turn);
  }
}

module.exports = { DeliveryError, Driver, Turn };
