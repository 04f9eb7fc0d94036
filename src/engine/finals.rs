//! Finals and reconciliation: at the end of the turn, the model's text not confirmed delivered
//! (mapped back to its source so the ledger stays exact), then the host's final payloads not
//! already covered, then the error.

use smallvec::SmallVec;

use super::Engine;
use crate::action::{SendKind, SendOp};
use crate::payload::Payload;
use crate::stage::dispatch::Outgoing;
use crate::stage::ledger::SourceSpan;
use crate::stage::tokens::normalize_text;
use crate::text::block::Block;
use crate::text::markdown::MarkdownScanner;

impl Engine {
    /// Reconciles what the user got against what the model wrote and queues the finals:
    /// exactly the text not confirmed delivered, split to the platform limit; then host
    /// final payloads whose text was not already covered; then the error, if the model failed.
    pub(super) fn queue_finals(&mut self) {
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

    /// Queues a final made of model text: always through the splitter (which also closes a
    /// fence left open at the end), each piece with the exact source it shows.
    fn enqueue_final(&mut self, payload: Payload, map: ContentMap) {
        for item in self.final_pieces(payload, map) {
            self.dispatcher.enqueue(item);
        }
    }

    /// The final sends of a text of model text, not queued: token rules applied, split to
    /// the platform limit, the response prefix on the first piece it belongs to, each piece
    /// a plain `Create` with the exact source it shows. Empty when nothing is left to send.
    pub(super) fn final_pieces(&mut self, payload: Payload, map: ContentMap) -> Vec<Outgoing> {
        let text = normalize_text(&self.token_config, &payload.text);
        if text.trim().is_empty() {
            return Vec::new();
        }
        // Token stripping keeps a sub-slice: shift the map by where it starts.
        let cut = text.as_ptr() as usize - payload.text.as_ptr() as usize;
        let map = map.shifted(cut);
        let text = text.to_owned();
        let mut out = Vec::new();
        for (piece, spans) in self.split_mapped(&text, Some(&map)) {
            let mut p = Payload {
                text: piece,
                ..payload.clone()
            };
            self.apply_response_prefix(&mut p);
            out.push(Outgoing {
                kind: SendKind::Final,
                op: SendOp::CREATE,
                payload: p,
                spans,
            });
        }
        out
    }
}

/// Where the model's text sits inside a text to be split: bytes `content` of it show the
/// message's cleaned text from `source_start` on (what lies outside `content` is synthetic:
/// a reopened fence line, a closing fence line).
#[derive(Clone, Debug)]
pub(super) struct ContentMap {
    message: u32,
    content: std::ops::Range<usize>,
    source_start: usize,
}

impl ContentMap {
    /// The map of a text that is exactly bytes `source_start..source_start + len` of
    /// message `message`'s cleaned text.
    pub(super) fn of_source(message: u32, source_start: usize, len: usize) -> ContentMap {
        ContentMap {
            message,
            content: 0..len,
            source_start,
        }
    }

    /// The map of a chunker block: its text is an optional synthetic start (a reopened fence
    /// line and `\n`, or 4 spaces), then its source, then an optional `\n` and closing fence
    /// line.
    pub(super) fn of_block(message: u32, block: &Block) -> ContentMap {
        // Synthetic text (a reopened fence line, the indentation of a continued indented
        // code line, a closing fence line) lies outside the source.
        ContentMap {
            message,
            content: block.source_in_text(),
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
    pub(super) fn span_of(&self, piece: &std::ops::Range<usize>) -> Option<SourceSpan> {
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
