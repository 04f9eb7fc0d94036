//! The live preview's wiring (SPEC §10): when an update is due, what it shows, and how each
//! preview ends.
//!
//! With a preview on, block streaming is off for the turn: the model's cleaned text goes to
//! the message text only, and the preview shows it. The preview is split into *segments*:
//! one per stretch of an assistant message between boundaries (the message's start, a tool,
//! a media item, its end). Each segment has its own preview message under its own
//! [`MessageKey`].
//!
//! **Per push** the engine only compares two lengths with what it saw last: nothing is
//! rendered, chunked or allocated until an update may go out (in `block` mode the preview's
//! chunker then gets all the new text at once). **When one is due** (the content changed, the throttle window and
//! any pause are over, nothing is in flight, the dispatcher is free, and the first preview
//! holds its minimum of units) the text is rendered and sent as a `Preview` send:
//! `Create { key }` first, then `Edit { key }` (or `Draft { key }` with the draft transport).
//!
//! **At a boundary** the segment ends, and its text is delivered as final sends: split to
//! the platform limit, the first piece edited into the preview (`Edit { key }`, kind `Final`,
//! cursor gone) when the preview exists, uses the edit transport and its reply target still
//! holds; the other pieces as new messages. A final identical to what the preview shows is
//! not sent again. With nothing left to show (a silent reply), the preview is deleted. With
//! the draft transport, or no preview yet, every piece is a new message. If the final edit
//! fails for good, the preview is deleted and the piece is sent as a new message in its
//! place. Reasoning in `stream` mode, shown live at the top of the preview, is delivered at
//! the boundary as its own message(s) on the reasoning lane; in `on` mode its block is sent
//! as usual.

use smallvec::SmallVec;

use super::finals::ContentMap;
use super::{Engine, Phase};
use crate::action::{MessageKey, SendKind, SendOp};
use crate::config::{PreviewMode, PreviewTransport, ReasoningMode, ResolvedConfig};
use crate::payload::{Lane, Payload, ReplyTarget};
use crate::render::send::SendRenderer;
use crate::stage::dispatch::Outgoing;
use crate::stage::preview::render::{PreviewRenderer, RenderConfig};
use crate::stage::preview::{ClosedSegment, PreviewPolicy, PreviewState, Update};
use crate::text::block::Block;
use crate::text::chunker::BlockChunker;
use crate::text::metric::LengthMetric;
use crate::time::Time;

/// The engine's live preview: the decisions, the renderer, and where the open segment lies
/// in the message text.
#[derive(Debug)]
pub(super) struct PreviewLane {
    state: PreviewState,
    renderer: PreviewRenderer,
    transport: PreviewTransport,
    metric: LengthMetric,
    min_initial_units: usize,
    show_reasoning: bool,
    stream_reasoning: bool,
    prefix_every_message: bool,
    /// `block` mode: cuts the segment's text into preview blocks; the preview shows up to
    /// the end of the last one.
    chunker: Option<BlockChunker>,
    blocks: Vec<Block>,
    /// The assistant message the open segment belongs to.
    message: usize,
    /// Where the open segment starts in the message's text and reasoning.
    text_start: usize,
    reasoning_start: usize,
    /// `block` mode: bytes of the message text given to the chunker, and the end of the
    /// last preview block.
    fed: usize,
    block_end: usize,
    /// The text and reasoning lengths the last check saw.
    seen_text: usize,
    seen_reasoning: usize,
    /// The visible text end and reasoning end the last render showed.
    rendered: (usize, usize),
    /// The open segment's content is below the first preview's minimum.
    below_threshold: bool,
    /// The reply target the open segment's preview was created with.
    created_reply_to: Option<ReplyTarget>,
    /// Preview operations handed to the host.
    updates: u64,
    /// Updates not sent because the text was identical to, or regressed from, what the
    /// platform shows.
    skips: u64,
}

impl PreviewLane {
    /// The preview for `config`, or `None` when previews are off.
    pub(super) fn new(config: &ResolvedConfig) -> Option<PreviewLane> {
        let c = config.config();
        if c.preview == PreviewMode::Off {
            return None;
        }
        // `Config::validate` checked the preview chunker's limits as `BlockChunker::new` would.
        let chunker = (c.preview == PreviewMode::Block)
            .then(|| BlockChunker::from_checked(config.preview_chunker()));
        let show_reasoning = matches!(c.reasoning, ReasoningMode::On | ReasoningMode::Stream);
        Some(PreviewLane {
            state: PreviewState::new(PreviewPolicy {
                throttle_ms: c.preview_throttle_ms,
                transport: c.preview_transport,
            }),
            renderer: PreviewRenderer::new(RenderConfig {
                metric: c.metric,
                limit: c.preview_limit,
                cursor: c.preview_cursor.clone(),
                expandable_quote: c.preview_expandable_quote,
                posted: (c.format != crate::Format::Markdown).then(|| {
                    SendRenderer::new(c.format, config.render_options(), c.preview_cursor.clone())
                }),
            }),
            transport: c.preview_transport,
            metric: c.metric,
            min_initial_units: c.preview_min_initial_units,
            show_reasoning,
            stream_reasoning: c.reasoning == ReasoningMode::Stream,
            prefix_every_message: c.prefix_every_message,
            chunker,
            blocks: Vec::new(),
            message: 0,
            text_start: 0,
            reasoning_start: 0,
            fed: 0,
            block_end: 0,
            seen_text: 0,
            seen_reasoning: 0,
            rendered: (0, 0),
            below_threshold: false,
            created_reply_to: None,
            updates: 0,
            skips: 0,
        })
    }

    /// The next segment starts at these offsets of message `message`.
    fn start_segment(&mut self, message: usize, text: usize, reasoning: usize) {
        self.message = message;
        self.text_start = text;
        self.reasoning_start = reasoning;
        self.fed = text;
        self.block_end = text;
        self.seen_text = text;
        self.seen_reasoning = reasoning;
        self.rendered = (text, reasoning);
        self.below_threshold = false;
        self.created_reply_to = None;
        self.renderer.reset();
        if let Some(chunker) = &mut self.chunker {
            chunker.reset();
        }
    }

    /// Whether the segment's content holds the first preview's minimum of units.
    fn meets_threshold(&self, answer: &str, reasoning: &str) -> bool {
        let min = self.min_initial_units;
        // A unit takes at least one byte in every metric.
        if answer.len() + reasoning.len() < min {
            return false;
        }
        self.metric.len(answer) + self.metric.len(reasoning) >= min
    }

    /// Counters: preview operations sent, and updates skipped as identical or regressive.
    pub(super) fn counters(&self) -> (u64, u64) {
        (self.updates, self.skips)
    }
}

impl Engine {
    /// After every input while streaming: notes whether the preview's content changed and,
    /// when an update is due, renders it and queues it. Cheap when nothing is due.
    pub(super) fn preview_step(&mut self, now: Time) {
        let Some(p) = self.preview.as_deref_mut() else {
            return;
        };
        if self.phase != Phase::Streaming || !self.message_open {
            return;
        }
        let index = self.messages.len() - 1;
        if p.message != index {
            p.start_segment(index, 0, 0);
        }
        let msg = &self.messages[index];
        let reasoning_end = if p.show_reasoning {
            msg.reasoning.len()
        } else {
            p.reasoning_start
        };
        if msg.text.len() != p.seen_text || reasoning_end != p.seen_reasoning {
            p.seen_text = msg.text.len();
            p.seen_reasoning = reasoning_end;
            p.below_threshold = false;
            p.state.mark_dirty();
        }
        if self.dispatcher.is_aborted() {
            p.state.degrade();
        }
        let Some(at) = p.state.ready_at() else {
            return;
        };
        if now < at || p.below_threshold || !self.dispatcher.is_free(now) {
            return;
        }
        // `block` mode: the chunker gets the text only when an update may go out, in one
        // piece (its blocks do not depend on how the text was split).
        let visible = match &mut p.chunker {
            Some(chunker) => {
                if p.fed < msg.text.len() {
                    chunker.push(&msg.text[p.fed..], &mut p.blocks);
                    p.fed = msg.text.len();
                    if let Some(last) = p.blocks.last() {
                        p.block_end = p.text_start + last.source.end;
                    }
                    p.blocks.clear();
                }
                p.block_end
            }
            None => msg.text.len(),
        };
        if (visible, reasoning_end) == p.rendered {
            // No new preview block yet: nothing new to show.
            p.state.settle();
            return;
        }
        let answer = &msg.text[p.text_start..visible];
        let reasoning = &msg.reasoning[p.reasoning_start..reasoning_end];
        if !p.state.has_message() && !p.meets_threshold(answer, reasoning) {
            p.below_threshold = true;
            return;
        }
        let prefix = if self.prefix_uses == 0 || p.prefix_every_message {
            self.config.response_prefix()
        } else {
            None
        };
        let mut text =
            String::with_capacity(answer.len().min(16 * 1024) + reasoning.len().min(4096) + 64);
        let body = p.renderer.render(answer, reasoning, prefix, &mut text);
        p.rendered = (visible, reasoning_end);
        match p.state.prepare(&text, body) {
            Update::Send(op) => {
                let key = op.key().expect("preview operations are keyed");
                if matches!(op, SendOp::Create { .. }) {
                    p.created_reply_to = msg.reply_to.clone();
                }
                p.state.on_sent(key, now);
                p.updates += 1;
                self.dispatcher.enqueue(Outgoing {
                    kind: SendKind::Preview,
                    op,
                    payload: Payload {
                        text,
                        reply_to: msg.reply_to.clone(),
                        ..Payload::default()
                    },
                    spans: SmallVec::new(),
                });
            }
            Update::Identical | Update::Regressive => p.skips += 1,
        }
    }

    /// When the preview next needs the engine: the end of its throttle window or pause,
    /// while an update is wanted and nothing else is queued or in flight (an ack wakes the
    /// engine otherwise).
    pub(super) fn preview_deadline(&self) -> Option<Time> {
        let p = self.preview.as_deref()?;
        if self.phase != Phase::Streaming || p.below_threshold || !self.dispatcher.is_drained() {
            return None;
        }
        let at = p.state.ready_at()?;
        Some(at.max(self.dispatcher.hold_until().unwrap_or(Time::ZERO)))
    }

    /// A boundary (tool, media, end of the message): the open segment ends; its text and
    /// reasoning are delivered as finals (see the module docs), and the next segment starts
    /// after them.
    pub(super) fn preview_boundary(&mut self) {
        let Some(p) = self.preview.as_deref_mut() else {
            return;
        };
        if !self.message_open {
            return;
        }
        let index = self.messages.len() - 1;
        if p.message != index {
            p.start_segment(index, 0, 0);
        }
        let msg = &self.messages[index];
        let text = p.text_start..msg.text.len();
        let reasoning = p.reasoning_start..msg.reasoning.len();
        let closed = p.state.close_segment();
        let created_reply_to = p.created_reply_to.take();
        p.start_segment(index, text.end, reasoning.end);
        let (transport, stream_reasoning) = (p.transport, p.stream_reasoning);

        let payload = Payload {
            text: msg.text[text.clone()].to_owned(),
            reply_to: msg.reply_to.clone(),
            audio_as_voice: msg.audio_as_voice,
            ..Payload::default()
        };
        let reasoning_text = msg.reasoning[reasoning].trim().to_owned();
        let same_target = payload.reply_to == created_reply_to;
        let map = ContentMap::of_source(index as u32, text.start, text.len());
        let mut pieces = self.final_pieces(payload, map);
        if let Some(c) = closed.filter(|c| c.has_message) {
            self.end_preview_message(c, transport, same_target, &mut pieces);
        }
        for item in pieces {
            self.dispatcher.enqueue(item);
        }
        if stream_reasoning && !reasoning_text.is_empty() {
            self.enqueue_segment_reasoning(reasoning_text);
        }
    }

    /// The preview message of a closed segment becomes the first final piece (edited in
    /// place), or is deleted.
    fn end_preview_message(
        &mut self,
        closed: ClosedSegment,
        transport: PreviewTransport,
        same_target: bool,
        pieces: &mut Vec<Outgoing>,
    ) {
        let key = closed.key;
        let delete = || Outgoing {
            kind: SendKind::Preview,
            op: SendOp::Delete { key },
            payload: Payload::default(),
            spans: SmallVec::new(),
        };
        let editable = transport == PreviewTransport::Edit && same_target;
        let Some(first) = pieces.first_mut() else {
            // Nothing to show (a silent reply): remove the preview.
            pieces.push(delete());
            return;
        };
        if transport == PreviewTransport::Draft {
            // A draft bubble is replaced by the first message the chat gets.
        } else if !editable {
            // A reply target the preview was not created with cannot be added by an edit.
            pieces.insert(0, delete());
        } else if !closed.in_flight && first.payload.text == closed.shown {
            // The preview already shows exactly this piece: it is delivered.
            let first = pieces.remove(0);
            for span in &first.spans {
                self.ledger.record(span);
            }
        } else {
            first.op = SendOp::Edit { key };
        }
    }

    /// Reasoning `stream` mode with a preview: the segment's reasoning, shown live at the top
    /// of the preview, is delivered as its own message(s) on the reasoning lane.
    fn enqueue_segment_reasoning(&mut self, reasoning: String) {
        for (text, _) in self.split_mapped_on(Lane::Reasoning, &reasoning, None) {
            if text.is_empty() {
                continue;
            }
            self.dispatcher.enqueue(Outgoing {
                kind: SendKind::Final,
                op: SendOp::CREATE,
                payload: Payload {
                    text,
                    lane: Lane::Reasoning,
                    ..Payload::default()
                },
                spans: SmallVec::new(),
            });
        }
    }

    /// A preview operation was delivered: the platform shows its text now.
    pub(super) fn preview_delivered(&mut self, item: Outgoing, late: bool) {
        let Some(p) = self.preview.as_deref_mut() else {
            return;
        };
        let Some(key) = item.op.key() else {
            return;
        };
        if matches!(item.op, SendOp::Delete { .. }) {
            return;
        }
        let turn_over = matches!(self.phase, Phase::Idle | Phase::Cancelled);
        if late && self.dispatcher.is_superseded(key) && !turn_over {
            // The create timed out and its final went out as a new message; the preview
            // exists after all: remove it. (After `Idle` nothing more is sent: a host that
            // acks a create after the turn ended keeps that message.)
            self.dispatcher.enqueue(Outgoing {
                kind: SendKind::Preview,
                op: SendOp::Delete { key },
                payload: Payload::default(),
                spans: SmallVec::new(),
            });
            return;
        }
        p.state.on_delivered(key, item.payload.text);
    }

    /// A preview operation failed (it is not retried: the next update sends the latest
    /// text).
    pub(super) fn preview_failed(
        &mut self,
        item: &Outgoing,
        retry_after_ms: Option<u64>,
        permanent: bool,
        now: Time,
    ) {
        if let Some(p) = self.preview.as_deref_mut()
            && let Some(key) = item.op.key()
        {
            p.state.on_failed(key, retry_after_ms, permanent, now);
        }
    }

    /// A preview operation timed out: the preview degrades.
    pub(super) fn preview_timed_out(&mut self, op: SendOp) {
        if let Some(p) = self.preview.as_deref_mut()
            && let Some(key) = op.key()
        {
            p.state.on_timed_out(key);
        }
    }

    /// Removes the preview under `key` (its final edit timed out: whether it landed is not
    /// known, so the text goes out again as a new message and the preview must not stay).
    pub(super) fn delete_preview(&mut self, key: MessageKey, now: Time) {
        self.dispatcher.enqueue_front(std::iter::once(Outgoing {
            kind: SendKind::Preview,
            op: SendOp::Delete { key },
            payload: Payload::default(),
            spans: SmallVec::new(),
        }));
        self.dispatcher.pump(now, &mut self.actions);
    }

    /// A final edit of a preview failed for good: delete the preview and send the piece as a
    /// new message in its place, before anything queued after it.
    pub(super) fn replace_failed_final_edit(&mut self, item: Outgoing) {
        let SendOp::Edit { key } = item.op else {
            return;
        };
        let delete = Outgoing {
            kind: SendKind::Preview,
            op: SendOp::Delete { key },
            payload: Payload::default(),
            spans: SmallVec::new(),
        };
        let create = Outgoing {
            op: SendOp::CREATE,
            ..item
        };
        self.dispatcher.enqueue_front([delete, create].into_iter());
    }
}
