//! The engine: one reply stream, `push(input, now) -> actions`.
//!
//! It composes the stages in order — delta assembly, tags, directives, tokens, chunker,
//! coalescer, dispatcher — and owns the only queue of pending actions and the timer table.

use std::collections::VecDeque;

use smallvec::SmallVec;

use crate::action::{AbortReason, Action, SendKind, SendOp};
use crate::config::{BreakMode, Config, ReasoningMode, ResolvedConfig};
use crate::error::Error;
use crate::input::Input;
use crate::payload::{Lane, Payload, ReplyTarget};
use crate::stage::assembly::{DeltaAssembler, SequenceFilter};
use crate::stage::coalescer::{BlockMeta, CoalescedText, Coalescer};
use crate::stage::directives::{DirectiveEvent, DirectiveOutput, DirectiveParser};
use crate::stage::dispatch::{AckOutcome, DispatchStats, Dispatcher, Outgoing};
use crate::stage::ledger::{DeliveryLedger, SourceSpan};
use crate::stage::prefix::apply_prefix;
use crate::stage::tags::TagFilter;
use crate::stage::tokens::{TokenConfig, TokenGate, normalize_text};
use crate::text::block::Block;
use crate::text::chunker::BlockChunker;
use crate::text::markdown::MarkdownScanner;
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
}

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
#[derive(Debug, Default)]
struct Message {
    /// The cleaned answer text: exactly what entered the chunker. Block sources index it.
    text: String,
    /// Hidden reasoning (reasoning mode `on`).
    reasoning: String,
    /// Bytes of `text` already handed to the chunker (`message_end` mode feeds late).
    fed: usize,
    /// Sticky reply target (`[[reply_to…]]`).
    reply_to: Option<ReplyTarget>,
    /// `[[audio_as_voice]]` seen.
    audio_as_voice: bool,
    /// The reasoning block was already sent (never twice).
    reasoning_sent: bool,
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
#[derive(Debug)]
pub struct Engine {
    config: ResolvedConfig,
    phase: Phase,
    actions: VecDeque<Action>,
    last_now: Time,
    armed: Option<Time>,
    seq: SequenceFilter,
    assembler: DeltaAssembler,
    tags: TagFilter,
    directives: DirectiveParser,
    tokens: TokenGate,
    token_config: TokenConfig,
    chunker: BlockChunker,
    reasoning_chunker: BlockChunker,
    coalescer: Coalescer,
    dispatcher: Dispatcher,
    splitter: PlatformSplitter,
    ledger: DeliveryLedger,
    messages: Vec<Message>,
    /// Whether a message is open (MessageStart seen, or implied by text).
    message_open: bool,
    host_finals: Vec<Payload>,
    fail_error: Option<String>,
    prefix_uses: u32,
    stats: Stats,
    // Scratch buffers reused across pushes (no per-push allocation).
    answer_scratch: String,
    reasoning_scratch: String,
    clean_scratch: String,
    directive_out: DirectiveOutput,
    blocks: Vec<Block>,
    coalesced: Vec<CoalescedText>,
    /// Keys of payloads confirmed delivered (host payload dedupe, media already sent).
    sent_keys: Vec<PayloadKey>,
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
        Ok(Engine {
            phase: Phase::Streaming,
            actions: VecDeque::with_capacity(16),
            last_now: Time::ZERO,
            armed: None,
            seq: SequenceFilter::new(),
            assembler: DeltaAssembler::new(),
            tags: TagFilter::new(cfg.require_final_tag),
            directives: DirectiveParser::new(),
            tokens: TokenGate::new(&token_config),
            token_config,
            chunker: BlockChunker::new(chunk),
            reasoning_chunker: BlockChunker::new(chunk),
            coalescer: Coalescer::new(config.coalescer()),
            dispatcher: Dispatcher::new(
                cfg.delivery_timeout_ms,
                cfg.human_delay,
                fastrand::Rng::with_seed(seed),
            ),
            splitter,
            ledger: DeliveryLedger::new(),
            messages: Vec::new(),
            message_open: false,
            host_finals: Vec::new(),
            fail_error: None,
            prefix_uses: 0,
            stats: Stats::default(),
            answer_scratch: String::with_capacity(256),
            reasoning_scratch: String::with_capacity(256),
            clean_scratch: String::with_capacity(256),
            directive_out: DirectiveOutput::default(),
            blocks: Vec::with_capacity(8),
            coalesced: Vec::with_capacity(8),
            sent_keys: Vec::new(),
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
        Stats {
            dispatch: self.dispatcher.stats(),
            divergences: self.assembler.divergences(),
            gaps: self.seq.gaps(),
            duplicates_ignored: self.seq.stale(),
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
            return match input {
                Input::Delivered { .. }
                | Input::DeliveryFailed { .. }
                | Input::Timer
                | Input::Cancel => Ok(()),
                other => Err(Error::TurnEnded(other.name())),
            };
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
                if self.cfg().break_mode == BreakMode::TextEnd {
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
                self.flush_token_gate(now);
                self.drain_pending_text();
                self.flush_all(now);
            }
            Input::ToolResult(payload) => {
                self.ensure_streaming("tool_result")?;
                self.flush_token_gate(now);
                self.drain_pending_text();
                self.flush_all(now);
                self.enqueue_host_payload(SendKind::Tool, payload);
            }
            Input::Media(payload) => {
                self.ensure_streaming("media")?;
                self.flush_token_gate(now);
                self.drain_pending_text();
                self.flush_chunker(now);
                self.on_media(payload, now);
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
                self.phase = Phase::Finishing;
            }
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
            Input::Delivered { send_id, .. } => match self.dispatcher.on_delivered(send_id) {
                Ok(outcome) => self.on_ack_outcome(outcome),
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
                match self
                    .dispatcher
                    .on_failed(send_id, retry_after_ms, permanent, now)
                {
                    Ok(outcome) => self.on_ack_outcome(outcome),
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
        self.messages.push(Message {
            text: String::with_capacity(4096),
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
        let reasoning_first = self.cfg().reasoning == ReasoningMode::On
            && self.cfg().break_mode == BreakMode::MessageEnd
            && !self.dispatcher.has_pending(SendKind::Block)
            && !self.ledger.any_delivered(self.message_index());
        if reasoning_first {
            self.send_reasoning_block(now);
        }
        self.flush_all(now);
        if self.cfg().reasoning == ReasoningMode::On {
            self.send_reasoning_block(now);
        }
        self.message_open = false;
    }

    // ---- text path ---------------------------------------------------------------

    /// New raw model text (a slice of the caller's input): run it through tags and
    /// directives.
    fn on_model_text(&mut self, raw: &str, now: Time) {
        if raw.is_empty() {
            return;
        }
        self.reasoning_scratch.clear();
        self.directive_out.clear();
        // The tag filter appends the answer straight into the directive parser's buffer,
        // which then parses it. That is `push` of the answer, one copy fewer; parsing before
        // the reasoning is routed changes nothing, as routing never touches the directive
        // parser or its output, whose events are applied only after.
        let (tags, reasoning) = (&mut self.tags, &mut self.reasoning_scratch);
        let events = self.directives.push_with(
            |answer| tags.push(raw, answer, reasoning),
            &mut self.directive_out,
        );
        // With no block ended and no reasoning, routing does nothing.
        if events.thinking_ended_at.is_some() || !self.reasoning_scratch.is_empty() {
            self.route_reasoning_events(events.thinking_ended_at, now);
        }
        if !self.directive_out.is_empty() {
            self.apply_directive_events(now);
        }
    }

    /// Applies what the directive parser released: text goes on through the token gate;
    /// media flushes the text before it; reply targets and voice flags become sticky.
    ///
    /// The events are read by index, not moved out: nothing called from here touches
    /// `directive_out`.
    fn apply_directive_events(&mut self, now: Time) {
        for i in 0..self.directive_out.events.len() {
            match &self.directive_out.events[i] {
                DirectiveEvent::Text(range) => {
                    let range = range.clone();
                    self.push_token_gate(range, now);
                }
                DirectiveEvent::Media(url) => {
                    let url = url.clone();
                    self.flush_token_gate(now);
                    self.drain_pending_text();
                    self.flush_chunker(now);
                    let msg = self.current_message();
                    let payload = Payload {
                        media: vec![url],
                        reply_to: msg.reply_to.clone(),
                        audio_as_voice: msg.audio_as_voice,
                        ..Payload::default()
                    };
                    self.on_media(payload, now);
                }
                DirectiveEvent::ReplyTo(target) => {
                    let target = target.clone();
                    self.current_message_mut().reply_to = Some(target);
                }
                DirectiveEvent::AudioAsVoice => {
                    self.current_message_mut().audio_as_voice = true;
                }
            }
        }
        self.directive_out.clear();
    }

    /// Bytes `range` of the directive output go through the token gate; what it releases is
    /// cleaned text. The gate appends straight to the message text, which is what
    /// [`Engine::accept_clean`] would append from `clean_scratch`, so one copy is saved.
    fn push_token_gate(&mut self, range: std::ops::Range<usize>, now: Time) {
        let msg = self.messages.last_mut().expect("a message is open");
        let before = msg.text.len();
        self.tokens
            .push(&self.directive_out.text[range], &mut msg.text);
        if msg.text.len() > before {
            self.feed_new_clean(now);
        }
    }

    fn current_message(&self) -> &Message {
        self.messages.last().expect("a message is open")
    }

    fn current_message_mut(&mut self) -> &mut Message {
        self.messages.last_mut().expect("a message is open")
    }

    /// A boundary inside the message (media, tool): the token gate lets go of what it holds
    /// so the text before the boundary leaves before it.
    fn flush_token_gate(&mut self, now: Time) {
        if !self.message_open {
            return;
        }
        self.clean_scratch.clear();
        self.tokens.flush(&mut self.clean_scratch);
        self.accept_clean(now);
    }

    /// Cleaned text is in `clean_scratch`: record it and feed the chunker.
    fn accept_clean(&mut self, now: Time) {
        if self.clean_scratch.is_empty() {
            return;
        }
        let msg = self.messages.last_mut().expect("a message is open");
        msg.text.push_str(&self.clean_scratch);
        self.feed_new_clean(now);
    }

    /// Cleaned text was just appended to the message text: in streaming mode the chunker
    /// gets everything it has not had yet.
    fn feed_new_clean(&mut self, now: Time) {
        let streaming = self.streams_blocks() && self.cfg().break_mode == BreakMode::TextEnd;
        let msg = self.messages.last_mut().expect("a message is open");
        if streaming {
            let from = msg.fed;
            msg.fed = msg.text.len();
            self.chunker.push(&msg.text[from..], &mut self.blocks);
            self.route_blocks(Lane::Answer, now);
        }
    }

    /// Hands any cleaned text not yet given to the chunker (message_end mode) to it.
    fn drain_pending_text(&mut self) {
        if !self.streams_blocks() || !self.message_open {
            return;
        }
        let msg = self.messages.last_mut().expect("a message is open");
        if msg.fed < msg.text.len() {
            let from = msg.fed;
            msg.fed = msg.text.len();
            self.chunker.push(&msg.text[from..], &mut self.blocks);
        }
    }

    fn streams_blocks(&self) -> bool {
        self.cfg().block_streaming
    }

    /// Forced drain of the chunker into the coalescer (the coalescer keeps its buffer).
    fn flush_chunker(&mut self, now: Time) {
        if !self.message_open {
            return;
        }
        self.chunker.flush(&mut self.blocks);
        self.route_blocks(Lane::Answer, now);
        self.coalescer.end_of_text();
    }

    /// Forced drain of the chunker and the coalescer.
    fn flush_all(&mut self, now: Time) {
        self.flush_chunker(now);
        self.reasoning_chunker.flush(&mut self.blocks);
        self.route_blocks(Lane::Reasoning, now);
        self.coalescer.flush(&mut self.coalesced);
        self.enqueue_coalesced();
    }

    /// Blocks in `self.blocks` go to the coalescer.
    fn route_blocks(&mut self, lane: Lane, now: Time) {
        if self.blocks.is_empty() {
            return;
        }
        let meta = {
            let m = self.current_message();
            BlockMeta {
                message: self.messages.len() - 1,
                reply_to: m.reply_to.clone(),
                audio_as_voice: m.audio_as_voice,
                lane,
            }
        };
        let mut blocks = std::mem::take(&mut self.blocks);
        for block in blocks.drain(..) {
            if self.fits(&block.text) {
                self.coalescer
                    .push_block(block, &meta, now, &mut self.coalesced);
                continue;
            }
            // Within the chunk size but over the channel's line cap: split it here, each
            // piece carrying exactly the source it shows.
            let map = ContentMap::of_block(meta.message as u32, &block);
            for (text, spans) in self.split_mapped(&block.text, Some(&map)) {
                let at = block.source.start;
                let source = spans.first().map_or(at..at, |s| s.range.clone());
                self.coalescer
                    .push(text, source, &meta, now, &mut self.coalesced);
            }
        }
        self.blocks = blocks;
        self.enqueue_coalesced();
    }

    /// Splits `text` to the platform limit. With `map`, each piece carries the exact part of
    /// the model's text it shows, so a piece that fails is re-sent in the final and a piece
    /// that arrives is never sent again.
    fn split_mapped(
        &self,
        text: &str,
        map: Option<&ContentMap>,
    ) -> Vec<(String, SmallVec<[SourceSpan; 2]>)> {
        self.splitter
            .split(text)
            .into_iter()
            .map(|piece| {
                let spans = map
                    .and_then(|m| m.span_of(&piece.source))
                    .into_iter()
                    .collect();
                (piece.text, spans)
            })
            .collect()
    }

    /// Coalesced texts become block sends. Answer text carries its source ranges for the
    /// ledger; reasoning text does not (it is never part of the final).
    fn enqueue_coalesced(&mut self) {
        let mut items = std::mem::take(&mut self.coalesced);
        for item in items.drain(..) {
            let (payload, spans) = Self::coalesced_payload(item);
            self.enqueue(SendKind::Block, payload, spans);
        }
        self.coalesced = items;
    }

    fn coalesced_payload(item: CoalescedText) -> (Payload, SmallVec<[SourceSpan; 2]>) {
        let spans = if item.meta.lane == Lane::Answer {
            let message = item.meta.message as u32;
            item.sources
                .iter()
                .map(|r| SourceSpan {
                    message,
                    range: r.clone(),
                })
                .collect()
        } else {
            SmallVec::new()
        };
        let payload = Payload {
            text: item.text,
            media: Vec::new(),
            reply_to: item.meta.reply_to,
            audio_as_voice: item.meta.audio_as_voice,
            is_error: false,
            lane: item.meta.lane,
        };
        (payload, spans)
    }

    // ---- reasoning -----------------------------------------------------------------

    /// Hidden reasoning in `reasoning_scratch` goes where the reasoning mode says.
    /// Routes the reasoning a tag push produced; a thinking block that ended at byte `end`
    /// of it flushes the reasoning lane there (stream mode).
    fn route_reasoning_events(&mut self, ended_at: Option<usize>, now: Time) {
        match ended_at {
            Some(end) if end <= self.reasoning_scratch.len() => {
                let all = std::mem::take(&mut self.reasoning_scratch);
                self.reasoning_scratch.push_str(&all[..end]);
                self.route_reasoning(now);
                self.on_thinking_end(now);
                self.reasoning_scratch.push_str(&all[end..]);
                self.route_reasoning(now);
                let mut all = all;
                all.clear();
                if self.reasoning_scratch.capacity() < all.capacity() {
                    self.reasoning_scratch = all;
                }
            }
            _ => self.route_reasoning(now),
        }
    }

    fn route_reasoning(&mut self, now: Time) {
        if self.reasoning_scratch.is_empty() {
            return;
        }
        match self.cfg().reasoning {
            ReasoningMode::Off => {}
            ReasoningMode::On => {
                let text = std::mem::take(&mut self.reasoning_scratch);
                self.current_message_mut().reasoning.push_str(&text);
                self.reasoning_scratch = text;
            }
            ReasoningMode::Stream => {
                if self.streams_blocks() {
                    self.reasoning_chunker
                        .push(&self.reasoning_scratch, &mut self.blocks);
                    self.route_blocks(Lane::Reasoning, now);
                } else {
                    let text = std::mem::take(&mut self.reasoning_scratch);
                    self.current_message_mut().reasoning.push_str(&text);
                    self.reasoning_scratch = text;
                }
            }
        }
        self.reasoning_scratch.clear();
    }

    fn on_thinking_end(&mut self, now: Time) {
        if self.cfg().reasoning == ReasoningMode::Stream && self.message_open {
            self.reasoning_chunker.flush(&mut self.blocks);
            self.route_blocks(Lane::Reasoning, now);
            self.coalescer.flush(&mut self.coalesced);
            self.enqueue_coalesced();
        }
    }

    /// Reasoning mode `on`: the message's reasoning as one block, once.
    fn send_reasoning_block(&mut self, _now: Time) {
        let Some(msg) = self.messages.last_mut() else {
            return;
        };
        if msg.reasoning_sent || msg.reasoning.trim().is_empty() {
            return;
        }
        msg.reasoning_sent = true;
        let text = format!("Reasoning:\n_{}_", msg.reasoning.trim());
        let payload = Payload {
            text,
            lane: Lane::Reasoning,
            ..Payload::default()
        };
        self.enqueue(SendKind::Block, payload, SmallVec::new());
    }

    // ---- host payloads ---------------------------------------------------------------

    /// A media payload: takes the buffered text as its caption when they agree on reply
    /// target, voice flag and lane; otherwise the buffer goes out first.
    fn on_media(&mut self, mut payload: Payload, _now: Time) {
        if self.is_duplicate_host_payload(&payload) {
            self.stats.payloads_deduped += 1;
            return;
        }
        let mut spans = SmallVec::new();
        let compatible = self.coalescer.buffered().is_some_and(|b| {
            b.meta.reply_to == payload.reply_to
                && b.meta.audio_as_voice == payload.audio_as_voice
                && b.meta.lane == payload.lane
                && payload.text.trim().is_empty()
        });
        if compatible && let Some(caption) = self.coalescer.take() {
            let (text_payload, caption_spans) = Self::coalesced_payload(caption);
            payload.text = text_payload.text;
            spans = caption_spans;
        } else {
            self.coalescer.flush(&mut self.coalesced);
            self.enqueue_coalesced();
        }
        self.enqueue(SendKind::Block, payload, spans);
    }

    fn enqueue_host_payload(&mut self, kind: SendKind, payload: Payload) {
        if self.is_duplicate_host_payload(&payload) {
            self.stats.payloads_deduped += 1;
            return;
        }
        self.enqueue(kind, payload, SmallVec::new());
    }

    /// A host payload whose key (trimmed text, media, reply target) was already sent,
    /// is pending, or is buffered in this turn.
    fn is_duplicate_host_payload(&self, payload: &Payload) -> bool {
        let key = PayloadKey::of(payload);
        self.dispatcher.pending_payloads().any(|p| key.matches(p)) || self.sent_keys.contains(&key)
    }

    // ---- dispatch ----------------------------------------------------------------------

    /// Normalizes a payload (tokens, prefix, limits) and queues it.
    fn enqueue(&mut self, kind: SendKind, mut payload: Payload, spans: SmallVec<[SourceSpan; 2]>) {
        let normalized = normalize_text(&self.token_config, &payload.text);
        if normalized.len() != payload.text.len() {
            payload.text = normalized.to_owned();
        }
        if payload.is_empty() {
            return;
        }
        self.apply_response_prefix(&mut payload);
        let media_only = payload.text.trim().is_empty();
        if media_only || self.fits(&payload.text) {
            self.dispatcher.enqueue(Outgoing {
                kind,
                op: SendOp::CREATE,
                payload,
                spans,
            });
            return;
        }
        // Above the platform limit: only a host payload gets here (blocks are cut to fit and
        // finals go through `enqueue_final`). Any spans travel with the last piece.
        let pieces = self.splitter.split(&payload.text);
        let n = pieces.len();
        for (i, piece) in pieces.into_iter().enumerate() {
            let last = i + 1 == n;
            let p = Payload {
                text: piece.text,
                media: if last {
                    std::mem::take(&mut payload.media)
                } else {
                    Vec::new()
                },
                ..payload.clone()
            };
            let spans = if last { spans.clone() } else { SmallVec::new() };
            self.dispatcher.enqueue(Outgoing {
                kind,
                op: SendOp::CREATE,
                payload: p,
                spans,
            });
        }
    }

    /// Queues a final made of model text: always through the splitter (which also closes a
    /// fence left open at the end), each piece with the exact source it shows.
    fn enqueue_final(&mut self, payload: Payload, map: ContentMap) {
        let text = normalize_text(&self.token_config, &payload.text);
        if text.trim().is_empty() {
            return;
        }
        // Token stripping keeps a sub-slice: shift the map by where it starts.
        let cut = text.as_ptr() as usize - payload.text.as_ptr() as usize;
        let map = map.shifted(cut);
        let text = text.to_owned();
        for (piece, spans) in self.split_mapped(&text, Some(&map)) {
            let mut p = Payload {
                text: piece,
                ..payload.clone()
            };
            self.apply_response_prefix(&mut p);
            self.dispatcher.enqueue(Outgoing {
                kind: SendKind::Final,
                op: SendOp::CREATE,
                payload: p,
                spans,
            });
        }
    }

    fn fits(&self, text: &str) -> bool {
        let cfg = self.cfg();
        let within_len = cfg.metric.len(text) <= cfg.text_limit;
        let within_lines = cfg
            .max_lines
            .is_none_or(|max| text.split('\n').count() <= max);
        within_len && within_lines
    }

    fn apply_response_prefix(&mut self, payload: &mut Payload) {
        let Some(prefix) = self.config.response_prefix() else {
            return;
        };
        if payload.text.trim().is_empty() {
            return;
        }
        if self.prefix_uses > 0 && !self.cfg().prefix_every_message {
            return;
        }
        self.prefix_uses += 1;
        if let std::borrow::Cow::Owned(text) = apply_prefix(prefix, &payload.text) {
            payload.text = text;
        }
    }

    fn on_ack_outcome(&mut self, outcome: AckOutcome) {
        match outcome {
            AckOutcome::Delivered(item) | AckOutcome::LateDelivered(item) => {
                for span in &item.spans {
                    self.ledger.record(span);
                }
                self.sent_keys.push(PayloadKey::of(&item.payload));
            }
            AckOutcome::WillRetry | AckOutcome::Dropped => {}
        }
    }

    fn on_timer(&mut self, now: Time) {
        if self.coalescer.deadline().is_some_and(|d| now >= d) {
            self.coalescer.on_timer(now, &mut self.coalesced);
            self.enqueue_coalesced();
        }
    }

    /// After every input: let sends leave, advance the finish, re-arm the timer.
    fn after_input(&mut self, now: Time) {
        if self.phase == Phase::Cancelled {
            self.arm_timer();
            return;
        }
        if self.phase == Phase::Streaming && self.dispatcher.is_idle() {
            // Nothing is queued, held or in flight: `on_time` would change nothing, and the
            // finishing steps below only run after `Finish`.
            self.arm_timer();
            return;
        }
        self.dispatcher.on_time(now, &mut self.actions);
        if self.phase == Phase::Finishing && !self.dispatcher.has_pending(SendKind::Block) {
            self.queue_finals();
            self.phase = Phase::Finals;
            self.dispatcher.on_time(now, &mut self.actions);
        }
        if self.phase == Phase::Finals && self.dispatcher.is_drained() {
            // Idle is the turn's last action: cancel the timer first.
            self.phase = Phase::Idle;
            self.arm_timer();
            self.actions.push_back(Action::Idle);
            return;
        }
        self.arm_timer();
    }

    fn next_deadline(&self) -> Option<Time> {
        if matches!(self.phase, Phase::Idle | Phase::Cancelled) {
            return None;
        }
        match (self.coalescer.deadline(), self.dispatcher.deadline()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn arm_timer(&mut self) {
        let next = self.next_deadline();
        if next != self.armed {
            self.armed = next;
            self.actions.push_back(Action::ArmTimer { deadline: next });
        }
    }

    // ---- finals --------------------------------------------------------------------------

    /// Reconciles what the user got against what the model wrote and queues the finals:
    /// exactly the text not confirmed delivered, split to the platform limit; then host
    /// final payloads whose text was not already covered; then the error, if the model failed.
    fn queue_finals(&mut self) {
        let mut remainder_texts: Vec<(u32, String, ContentMap)> = Vec::new();
        for (i, msg) in self.messages.iter().enumerate() {
            let i = i as u32;
            let gaps = self.ledger.undelivered(i, msg.text.len());
            if gaps.is_empty() {
                continue;
            }
            let mut scanner = MarkdownScanner::new();
            scanner.finish(&msg.text);
            for gap in gaps {
                let slice = &msg.text[gap.clone()];
                if slice.trim().is_empty() {
                    continue;
                }
                // A gap that starts inside a fence gets the fence's opening line back.
                let mut text = String::new();
                if let Some(f) = scanner.fence_at(gap.start)
                    && !f.continued
                {
                    text.push_str(&msg.text[f.start..f.open_end]);
                    text.push('\n');
                }
                let map = ContentMap {
                    message: i,
                    content: text.len()..text.len() + slice.len(),
                    source_start: gap.start,
                };
                text.push_str(slice);
                remainder_texts.push((i, text, map));
            }
        }
        let streamed_all = normalize_ws(
            &self
                .messages
                .iter()
                .map(|m| m.text.as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        );
        for (message, text, map) in remainder_texts {
            let (reply_to, audio_as_voice) = {
                let m = &self.messages[message as usize];
                (m.reply_to.clone(), m.audio_as_voice)
            };
            let payload = Payload {
                text,
                reply_to,
                audio_as_voice,
                ..Payload::default()
            };
            self.enqueue_final(payload, map);
        }
        for mut payload in std::mem::take(&mut self.host_finals) {
            let text_norm = normalize_ws(&payload.text);
            if !text_norm.is_empty() && streamed_all.contains(&text_norm) {
                payload.text.clear();
            }
            payload.media.retain(|m| !self.media_already_sent(m));
            if payload.is_empty() {
                continue;
            }
            self.enqueue(SendKind::Final, payload, SmallVec::new());
        }
        if let Some(error) = self.fail_error.take() {
            let payload = Payload {
                text: error,
                is_error: true,
                ..Payload::default()
            };
            self.enqueue(SendKind::Final, payload, SmallVec::new());
        }
    }

    fn media_already_sent(&self, media: &str) -> bool {
        self.sent_keys
            .iter()
            .any(|k| k.media.iter().any(|m| m == media))
            || self
                .dispatcher
                .pending_payloads()
                .any(|p| p.media.iter().any(|m| m == media))
    }
}

/// Where the model's text sits inside a text to be split: bytes `content` of it show the
/// message's cleaned text from `source_start` on (what lies outside `content` is synthetic:
/// a reopened fence line, a closing fence line).
#[derive(Clone, Debug)]
struct ContentMap {
    message: u32,
    content: std::ops::Range<usize>,
    source_start: usize,
}

impl ContentMap {
    /// The map of a chunker block: its text is an optional reopened fence line and `\n`,
    /// then its source, then an optional `\n` and closing fence line.
    fn of_block(message: u32, block: &Block) -> ContentMap {
        let len = block.source.len();
        let start = if block.fence_reopened {
            block.text.find('\n').map_or(0, |i| i + 1)
        } else {
            0
        };
        ContentMap {
            message,
            content: start..(start + len).min(block.text.len()),
            source_start: block.source.start,
        }
    }

    /// The same map for the text with its first `cut` bytes removed.
    fn shifted(mut self, cut: usize) -> ContentMap {
        let skipped = cut.saturating_sub(self.content.start);
        self.source_start += skipped;
        self.content = self.content.start.saturating_sub(cut)..self.content.end.saturating_sub(cut);
        self
    }

    /// The source span that bytes `piece` of the text show, if any.
    fn span_of(&self, piece: &std::ops::Range<usize>) -> Option<SourceSpan> {
        let start = piece.start.max(self.content.start);
        let end = piece.end.min(self.content.end);
        (start < end).then(|| SourceSpan {
            message: self.message,
            range: self.source_start + (start - self.content.start)
                ..self.source_start + (end - self.content.start),
        })
    }
}

/// Text with every run of whitespace removed, for "equal ignoring whitespace".
fn normalize_ws(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The dedupe key of a payload: trimmed text, media list, reply target.
#[derive(Clone, Debug, PartialEq, Eq)]
struct PayloadKey {
    text: String,
    media: Vec<String>,
    reply_to: Option<ReplyTarget>,
}

impl PayloadKey {
    /// Whether `p` has this key, compared in place (no copy of its text).
    fn matches(&self, p: &Payload) -> bool {
        self.text == p.text.trim() && self.media == p.media && self.reply_to == p.reply_to
    }

    fn of(p: &Payload) -> PayloadKey {
        PayloadKey {
            text: p.text.trim().to_owned(),
            media: p.media.clone(),
            reply_to: p.reply_to.clone(),
        }
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
