//! The engine: one reply stream, `push(input, now) -> actions`.
//!
//! It composes the stages in order — delta assembly, tags, directives, tokens, chunker,
//! coalescer, dispatcher — and owns the only queue of pending actions and the timer table.

mod finals;
mod host;
mod outbox;
mod outcome;
mod preview;
mod reasoning;
mod text;

use std::collections::VecDeque;

use self::host::PayloadKey;
pub use self::outcome::{TurnEnding, TurnOutcome, UndeliveredReason, UndeliveredSend};
use self::preview::PreviewLane;
use crate::action::{AbortReason, Action};
use crate::config::{BreakMode, Config, ReasoningMode, ResolvedConfig};
use crate::error::Error;
use crate::input::{Input, SendId};
use crate::payload::{Payload, ReplyTarget};
use crate::render::Format;
use crate::render::send::SendRenderer;
use crate::stage::assembly::{DeltaAssembler, SequenceFilter};
use crate::stage::coalescer::{CoalescedText, Coalescer};
use crate::stage::directives::{DirectiveOutput, DirectiveParser};
use crate::stage::dispatch::{DispatchStats, Dispatcher, Outgoing};
use crate::stage::ledger::DeliveryLedger;
use crate::stage::tags::TagFilter;
use crate::stage::tokens::{TokenConfig, TokenGate};
use crate::text::block::Block;
use crate::text::chunker::{BlockChunker, ChunkerConfig};
use crate::text::splitter::PlatformSplitter;
use crate::time::Time;

/// Counters describing what the engine saw and did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Sequence-number gaps seen (events missing in between).
    pub gaps: u64,
    /// Events ignored because their sequence number was repeated or older.
    pub duplicates_ignored: u64,
    /// Snapshots that diverged from the accepted text.
    pub divergences: u64,
    /// Host payloads (tool results, media) dropped as already sent or pending.
    pub payloads_deduped: u64,
    /// Acks naming a send the engine was not waiting for.
    pub unknown_acks: u64,
    /// Delivery counters.
    pub dispatch: DispatchStats,
    /// Live preview operations (create, edit, draft) handed to the host.
    pub preview_updates: u64,
    /// Live preview updates not sent because the text was identical to, or a strict prefix
    /// of, what the platform showed.
    pub preview_skips: u64,
    /// Media references written by the model (`MEDIA:` items, `[[media:…]]`) that the
    /// [`MediaPolicy`](crate::MediaPolicy) refused: a URL to a private host or of another
    /// scheme (left in the text), a local path outside the media roots (removed).
    pub media_refused: u64,
}

/// A chunker built on first use: the reasoning lane's chunker is needed only when reasoning
/// is streamed, and a fresh stream should not carry one it may never use (SPEC §14: a
/// stream's heap after a short first delta stays within 4 KiB).
#[derive(Debug)]
struct LazyChunker {
    config: ChunkerConfig,
    chunker: Option<Box<BlockChunker>>,
}

impl LazyChunker {
    /// Checks `config` now (as `BlockChunker::new` would), so that building the chunker
    /// later cannot fail.
    fn new(config: ChunkerConfig) -> Result<LazyChunker, Error> {
        Ok(LazyChunker {
            config: config.checked()?,
            chunker: None,
        })
    }

    fn push(&mut self, delta: &str, out: &mut Vec<Block>) {
        let config = self.config;
        self.chunker
            .get_or_insert_with(|| Box::new(BlockChunker::from_checked(config)))
            .push(delta, out);
    }

    fn flush(&mut self, out: &mut Vec<Block>) {
        if let Some(chunker) = &mut self.chunker {
            chunker.flush(out);
        }
    }

    fn reset(&mut self) {
        if let Some(chunker) = &mut self.chunker {
            chunker.reset();
        }
    }
}

/// The most a new message's text reserves, in bytes, from the length of the one before it.
const MESSAGE_TEXT_HINT: usize = 4096;

/// Where the turn is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Model events are arriving.
    Streaming,
    /// `Finish` arrived; waiting for block sends to resolve before the finals.
    Finishing,
    /// Finals are queued; waiting for the last acks.
    Finals,
    /// Everything acknowledged; `Idle` was emitted.
    Idle,
    /// Cancelled: nothing more is sent.
    Cancelled,
}

/// One assistant message's state.
///
/// `repr(C)`: `text` and `fed`, which every text push reads, share a cache line.
#[derive(Debug, Default)]
#[repr(C)]
struct Message {
    /// The cleaned answer text: exactly what entered the chunker. Block sources index it.
    text: String,
    /// Bytes of `text` already handed to the chunker (`message_end` mode feeds late).
    fed: usize,
    /// Hidden reasoning (reasoning mode `on`).
    reasoning: String,
    /// Bytes of `reasoning` already sent as reasoning blocks (each byte once).
    reasoning_sent: usize,
    /// Where in `text` the reasoning not yet sent began: it belongs before the answer
    /// written after this point (see [`Engine::send_reasoning_before`]).
    reasoning_from: usize,
    /// Where a forced flush of the chunker (a tool call, a `TextEnd`, media) came in the
    /// middle of a line of `text`: the chunker read the text after it as a new line, and so
    /// does the remainder final.
    line_ends: Vec<usize>,
    /// Sticky reply target (`[[reply_to…]]`).
    reply_to: Option<ReplyTarget>,
    /// `[[audio_as_voice]]` seen.
    audio_as_voice: bool,
}

/// A reply stream: feed it model events and acks with the current time; execute the actions
/// it returns, in order.
///
/// # Calling contract
///
/// 1. Call [`Engine::push`] with each event and the current time from a monotonic clock
///    (time that goes backwards is treated as the last time seen).
/// 2. Execute every returned action in order: deliver each [`Action::Send`] and later push
///    `Input::Delivered` or `Input::DeliveryFailed` with its `send_id`; remember the latest
///    [`Action::ArmTimer`] deadline.
/// 3. Drain the actions before sleeping; actions not read stay queued and come out of the
///    next [`Engine::poll_action`] or `push`.
/// 4. Sleep until [`Engine::poll_timeout`] (the latest `ArmTimer`), then push `Input::Timer`.
///    An early or repeated timer input does nothing.
/// 5. After `Input::Finish`, keep acking until [`Action::Idle`].
///
/// ```
/// use replystream::{Action, Config, Engine, Input, Time};
///
/// let mut engine = Engine::new(Config::default(), 7).unwrap();
/// let t = Time::from_millis;
/// let actions: Vec<Action> = engine.push(Input::TextDelta("Hello there."), t(0)).unwrap().collect();
/// assert!(actions.is_empty(), "one short sentence: the chunker waits for more");
///
/// let actions: Vec<Action> = engine.push(Input::Finish, t(50)).unwrap().collect();
/// let Some(Action::Send(send)) = actions.first() else { panic!("{actions:?}") };
/// assert_eq!(send.payload.text, "Hello there.");
/// assert!(matches!(actions.last(), Some(Action::ArmTimer { deadline: Some(_) })),
///         "the delivery timeout of the send");
///
/// let ack = Input::Delivered { send_id: send.send_id, message_ref: None };
/// let actions: Vec<Action> = engine.push(ack, t(120)).unwrap().collect();
/// assert_eq!(actions.last(), Some(&Action::Idle));
/// assert_eq!(engine.poll_timeout(), None);
/// ```
// Layout: at 100 000 streams no engine is in any CPU cache when its next delta comes, so a
// push costs the cache lines it touches. The struct is `repr(C)` (fields stay in the order
// written) and starts on a cache line: first what every push reads or writes (the clock,
// the timer, the action queue, the open message, the scratch the text stages share), then
// the stages in pipeline order, each with its own per-push fields first, then what only
// acks, boundaries and the end of the turn touch.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Engine {
    // ---- read or written by every push ----
    last_now: Time,
    armed: Option<Time>,
    phase: Phase,
    /// Whether a message is open (MessageStart seen, or implied by text).
    message_open: bool,
    /// Whether blocks are sent while the model writes (see [`Engine::streams_blocks`]),
    /// fixed at construction: a copy here saves reading the configuration.
    streams_blocks: bool,
    /// `config().break_mode`, copied for the same reason.
    break_mode: BreakMode,
    /// Reasoning mode `on` with blocks sent while the model writes: the tag filter pauses
    /// where a thinking block opens (see [`Engine::filter_model_text`]).
    pauses_at_thinking: bool,
    actions: VecDeque<Action>,
    messages: Vec<Message>,
    /// The live preview, when it is on (SPEC §10).
    preview: Option<Box<PreviewLane>>,
    assembler: DeltaAssembler,
    // Scratch buffers reused across pushes (no per-push allocation).
    reasoning_scratch: String,
    directive_out: DirectiveOutput,
    blocks: Vec<Block>,
    // ---- the stages, in pipeline order, each with its per-push fields first ----
    tags: TagFilter,
    directives: DirectiveParser,
    tokens: TokenGate,
    chunker: BlockChunker,
    coalescer: Coalescer,
    dispatcher: Dispatcher,
    // ---- acks, boundaries, the end of the turn ----
    config: ResolvedConfig,
    seq: SequenceFilter,
    token_config: TokenConfig,
    reasoning_chunker: LazyChunker,
    splitter: PlatformSplitter,
    ledger: DeliveryLedger,
    host_finals: Vec<Payload>,
    fail_error: Option<String>,
    prefix_uses: u32,
    stats: Stats,
    answer_scratch: String,
    clean_scratch: String,
    coalesced: Vec<CoalescedText>,
    /// Keys of payloads confirmed delivered (host payload dedupe).
    sent_keys: Vec<PayloadKey>,
    /// Media URLs confirmed delivered (a host final's media is not sent again).
    sent_media: Vec<String>,
    /// When the wait for late acks before the finals ends (set when it begins).
    finals_wait: Option<Time>,
    /// Sends that failed for good, for [`Engine::outcome`].
    lost: Vec<(SendId, Outgoing)>,
    /// `Input::Fail` arrived.
    model_failed: bool,
}

impl Engine {
    /// Creates an engine for one turn. `seed` seeds the RNG used for human delays, so the
    /// same inputs, times and seed give the same actions.
    pub fn new(config: Config, seed: u64) -> Result<Engine, Error> {
        let config = config.validate()?;
        let cfg = config.config();
        let chunk = config.chunker();
        let splitter = PlatformSplitter::new(config.splitter())?;
        let token_config = TokenConfig {
            silent: cfg.silent_token.clone(),
            heartbeat: cfg.heartbeat_token.clone(),
        };
        let preview = PreviewLane::new(&config).map(Box::new);
        let mut dispatcher = Dispatcher::new(
            cfg.delivery_timeout_ms,
            cfg.human_delay,
            fastrand::Rng::with_seed(seed),
        );
        if cfg.format != Format::Markdown {
            dispatcher.set_renderer(SendRenderer::new(
                cfg.format,
                config.render_options(),
                cfg.preview_cursor.clone(),
            ));
        }
        Ok(Engine {
            streams_blocks: cfg.block_streaming && preview.is_none(),
            break_mode: cfg.break_mode,
            pauses_at_thinking: cfg.block_streaming
                && preview.is_none()
                && cfg.break_mode == BreakMode::TextEnd
                && cfg.reasoning == ReasoningMode::On,
            phase: Phase::Streaming,
            actions: VecDeque::new(),
            last_now: Time::ZERO,
            armed: None,
            seq: SequenceFilter::new(),
            assembler: DeltaAssembler::new(),
            tags: TagFilter::new(cfg.require_final_tag),
            directives: DirectiveParser::with_policy(cfg.media.clone()),
            tokens: TokenGate::new(&token_config),
            token_config,
            chunker: BlockChunker::new(chunk)?,
            reasoning_chunker: LazyChunker::new(chunk)?,
            coalescer: Coalescer::new(config.coalescer()),
            dispatcher,
            splitter,
            ledger: DeliveryLedger::new(),
            messages: Vec::new(),
            message_open: false,
            host_finals: Vec::new(),
            fail_error: None,
            prefix_uses: 0,
            stats: Stats::default(),
            answer_scratch: String::new(),
            reasoning_scratch: String::new(),
            clean_scratch: String::new(),
            directive_out: DirectiveOutput::default(),
            blocks: Vec::new(),
            coalesced: Vec::new(),
            sent_keys: Vec::new(),
            sent_media: Vec::new(),
            finals_wait: None,
            preview,
            lost: Vec::new(),
            model_failed: false,
            config,
        })
    }

    /// The configuration in force (validated and clamped).
    pub fn config(&self) -> &Config {
        self.config.config()
    }

    fn cfg(&self) -> &Config {
        self.config.config()
    }

    /// Counters so far.
    #[must_use]
    pub fn stats(&self) -> Stats {
        let (preview_updates, preview_skips) = self
            .preview
            .as_deref()
            .map_or((0, 0), PreviewLane::counters);
        Stats {
            preview_updates,
            preview_skips,
            dispatch: self.dispatcher.stats(),
            divergences: self.assembler.divergences(),
            gaps: self.seq.gaps(),
            duplicates_ignored: self.seq.stale(),
            media_refused: self.directives.media_refused(),
            ..self.stats
        }
    }

    /// Feeds one input at time `now` and returns the actions it caused (plus any not yet
    /// read). See the calling contract on [`Engine`].
    pub fn push(&mut self, input: Input<'_>, now: Time) -> Result<Actions<'_>, Error> {
        let now = self.clamp_time(now);
        self.handle(input, now)?;
        self.after_input(now);
        Ok(Actions { engine: self })
    }

    /// Like [`Engine::push`] for an event carrying a sequence number: a repeated or older
    /// number is ignored (counted), a gap is counted and processing continues.
    pub fn push_seq(
        &mut self,
        seq: u64,
        input: Input<'_>,
        now: Time,
    ) -> Result<Actions<'_>, Error> {
        if self.seq.accept(Some(seq)) {
            return self.push(input, now);
        }
        let now = self.clamp_time(now);
        self.after_input(now);
        Ok(Actions { engine: self })
    }

    /// The next pending action, if any.
    #[must_use]
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// When the engine next needs `Input::Timer`, if ever.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Time> {
        self.next_deadline()
    }

    /// Whether the turn is over (idle or cancelled) and no action is pending.
    #[must_use]
    pub fn is_done(&self) -> bool {
        matches!(self.phase, Phase::Idle | Phase::Cancelled) && self.actions.is_empty()
    }

    fn clamp_time(&mut self, now: Time) -> Time {
        if now < self.last_now {
            return self.last_now;
        }
        self.last_now = now;
        now
    }

    fn ensure_streaming(&self, what: &'static str) -> Result<(), Error> {
        match self.phase {
            Phase::Streaming => Ok(()),
            _ => Err(Error::TurnEnded(what)),
        }
    }

    fn handle(&mut self, input: Input<'_>, now: Time) -> Result<(), Error> {
        if self.phase == Phase::Cancelled {
            // Acks still go to the dispatcher: the send that was in flight may be acked, an
            // ack of a send never made is still unknown.
            match input {
                Input::Delivered { .. } | Input::DeliveryFailed { .. } => {}
                Input::Timer | Input::Cancel => return Ok(()),
                other => return Err(Error::TurnEnded(other.name())),
            }
        }
        match input {
            Input::MessageStart => {
                self.ensure_streaming("message_start")?;
                self.end_message(now);
                self.begin_message();
            }
            Input::TextDelta(delta) => {
                self.ensure_streaming("text_delta")?;
                self.ensure_message();
                let new = self.assembler.delta(delta);
                self.on_model_text(new, now);
            }
            Input::TextSnapshot(full) => {
                self.ensure_streaming("text_snapshot")?;
                self.ensure_message();
                let new = self.assembler.snapshot(full);
                self.on_model_text(new, now);
            }
            Input::TextEnd(full) => {
                self.ensure_streaming("text_end")?;
                self.ensure_message();
                if let Some(full) = full {
                    let new = self.assembler.snapshot(full);
                    self.on_model_text(new, now);
                }
                if self.break_mode == BreakMode::TextEnd {
                    // A text boundary, like a tool call: what the stages hold (a possible
                    // tag start, directive or token prefix such as "N") belongs before it,
                    // so the joiner lands exactly at the boundary.
                    self.release_at_boundary(now);
                    self.drain_pending_text();
                    self.flush_chunker(now);
                }
            }
            Input::ThinkingDelta(text) => {
                self.ensure_streaming("thinking_delta")?;
                self.ensure_message();
                self.reasoning_scratch.clear();
                self.reasoning_scratch.push_str(text);
                self.route_reasoning(now);
            }
            Input::ThinkingEnd => {
                self.ensure_streaming("thinking_end")?;
                self.on_thinking_end(now);
            }
            Input::ToolStart { .. } => {
                self.ensure_streaming("tool_start")?;
                self.release_at_boundary(now);
                self.drain_pending_text();
                self.flush_all(now);
            }
            Input::ToolResult(payload) => {
                self.ensure_streaming("tool_result")?;
                self.release_at_boundary(now);
                self.drain_pending_text();
                self.flush_all(now);
                self.on_tool_result(payload);
            }
            Input::Media(payload) => {
                self.ensure_streaming("media")?;
                self.release_at_boundary(now);
                self.drain_pending_text();
                self.flush_chunker(now);
                self.on_host_media(payload, now);
            }
            Input::MessageEnd(full) => {
                self.ensure_streaming("message_end")?;
                if let Some(full) = full {
                    self.ensure_message();
                    let new = self.assembler.snapshot(full);
                    self.on_model_text(new, now);
                }
                self.end_message(now);
            }
            Input::FinalReply(payload) => {
                self.ensure_streaming("final_reply")?;
                self.host_finals.push(payload);
            }
            Input::Finish => {
                self.ensure_streaming("finish")?;
                self.end_message(now);
                self.phase = Phase::Finishing;
            }
            Input::Fail { error } => {
                self.ensure_streaming("fail")?;
                self.end_message(now);
                self.fail_error = Some(error.to_owned());
                self.model_failed = true;
                self.phase = Phase::Finishing;
            }
            // The turn is already over: there is nothing left to stop.
            Input::Cancel if self.phase == Phase::Idle => {}
            Input::Cancel => {
                self.phase = Phase::Cancelled;
                self.dispatcher.cancel();
                self.actions.push_back(Action::Abort {
                    reason: AbortReason::Cancelled,
                });
            }
            Input::Timer => {
                self.on_timer(now);
            }
            Input::Delivered {
                send_id,
                message_ref,
            } => match self.dispatcher.on_delivered(send_id, message_ref) {
                Ok(outcome) => self.on_ack_outcome(outcome, None, now),
                Err(e) => {
                    self.stats.unknown_acks += 1;
                    return Err(e);
                }
            },
            Input::DeliveryFailed {
                send_id,
                retry_after_ms,
                permanent,
            } => {
                let failure = outbox::Failure {
                    retry_after_ms,
                    permanent,
                    in_flight: self.dispatcher.is_in_flight(send_id),
                };
                match self
                    .dispatcher
                    .on_failed(send_id, retry_after_ms, permanent, now)
                {
                    Ok(outcome) => self.on_ack_outcome(outcome, Some(failure), now),
                    Err(e) => {
                        self.stats.unknown_acks += 1;
                        return Err(e);
                    }
                }
            }
        }
        Ok(())
    }

    // ---- messages ------------------------------------------------------------------

    fn ensure_message(&mut self) {
        if !self.message_open {
            self.begin_message();
        }
    }

    fn begin_message(&mut self) {
        // The text starts with room for as much as the previous message held (up to
        // `MESSAGE_TEXT_HINT`): a turn's messages tend to be alike, so after the first one
        // text is appended without reallocating. The first message starts empty, so a fresh
        // stream costs no text buffer; `end_message` gives back what was not used.
        let hint = self
            .messages
            .last()
            .map_or(0, |m| m.text.len().min(MESSAGE_TEXT_HINT));
        // Most turns have one assistant message: the first takes room for itself only (a
        // `Vec`'s first push would take room for four, 336 bytes more per stream).
        if self.messages.capacity() == 0 {
            self.messages.reserve_exact(1);
        }
        self.messages.push(Message {
            text: String::with_capacity(hint),
            ..Message::default()
        });
        self.message_open = true;
        self.assembler.reset();
        self.tags.reset();
        self.directives.reset();
        self.tokens.reset();
        self.chunker.reset();
        self.reasoning_chunker.reset();
    }

    fn message_index(&self) -> u32 {
        self.messages.len().saturating_sub(1) as u32
    }

    /// Ends the open message: releases every held-back tail, drains the chunker and the
    /// coalescer, and sends the reasoning block in `on` mode.
    fn end_message(&mut self, now: Time) {
        if !self.message_open {
            return;
        }
        // Release held-back text from tags, directives and tokens, in pipeline order.
        self.catch_up_tags();
        self.answer_scratch.clear();
        self.reasoning_scratch.clear();
        let events = self
            .tags
            .finish(&mut self.answer_scratch, &mut self.reasoning_scratch);
        self.route_reasoning_events(events.thinking_ended_at, now);
        self.directive_out.clear();
        self.directives
            .push(&self.answer_scratch, &mut self.directive_out);
        self.directives.finish(&mut self.directive_out);
        self.apply_directive_events(now);
        self.clean_scratch.clear();
        self.tokens.finish(&mut self.clean_scratch);
        self.accept_clean(now);
        self.drain_pending_text();
        self.flush_all(now);
        if self.cfg().reasoning == ReasoningMode::On {
            self.send_reasoning_block();
        }
        // The message's text is kept for the turn (the final is reconciled against it): keep
        // only what it holds, not the room it grew into.
        let msg = self.current_message_mut();
        msg.text.shrink_to_fit();
        msg.reasoning.shrink_to_fit();
        self.message_open = false;
    }

    fn current_message(&self) -> &Message {
        self.messages.last().expect("a message is open")
    }

    fn current_message_mut(&mut self) -> &mut Message {
        self.messages.last_mut().expect("a message is open")
    }
}

/// The actions an input caused, drained from the engine's queue in order. Actions not read
/// stay queued for [`Engine::poll_action`] or the next push.
#[must_use = "actions must be executed in order"]
pub struct Actions<'a> {
    engine: &'a mut Engine,
}

impl Iterator for Actions<'_> {
    type Item = Action;
    fn next(&mut self) -> Option<Action> {
        self.engine.actions.pop_front()
    }
}
