//! Hidden reasoning: routed by the reasoning mode into the reasoning lane's chunker or the
//! message's reasoning, and the one reasoning block of mode `on`.

use smallvec::SmallVec;

use super::Engine;
use crate::action::SendKind;
use crate::config::ReasoningMode;
use crate::payload::{Lane, Payload};
use crate::time::Time;

impl Engine {
    /// Hidden reasoning in `reasoning_scratch` goes where the reasoning mode says.
    /// Routes the reasoning a tag push produced; a thinking block that ended at byte `end`
    /// of it flushes the reasoning lane there (stream mode).
    pub(super) fn route_reasoning_events(&mut self, ended_at: Option<usize>, now: Time) {
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

    pub(super) fn route_reasoning(&mut self, now: Time) {
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

    pub(super) fn on_thinking_end(&mut self, now: Time) {
        if self.cfg().reasoning == ReasoningMode::Stream && self.message_open {
            self.reasoning_chunker.flush(&mut self.blocks);
            self.route_blocks(Lane::Reasoning, now);
            self.coalescer.flush(&mut self.coalesced);
            self.enqueue_coalesced();
        }
    }

    /// Reasoning mode `on`: the message's reasoning as one block, once.
    pub(super) fn send_reasoning_block(&mut self, _now: Time) {
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
}
