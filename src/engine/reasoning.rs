//! Hidden reasoning: routed by the reasoning mode into the reasoning lane's chunker or the
//! message's reasoning, and the one reasoning block of mode `on`.

use smallvec::SmallVec;

use super::Engine;
use super::text::without_separator_edges;
use crate::action::SendKind;
use crate::config::ReasoningMode;
use crate::payload::{Lane, Payload};
use crate::render::{Format, RenderOptions, posted_len};
use crate::stage::ledger::SourceSpan;
use crate::text::markdown::FenceMarker;
use crate::text::markdown::is_indented_code_line;
use crate::text::metric::LengthMetric;
use crate::text::splitter::{PlatformSplitter, SplitConfig, SplitMode};
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
                let msg = self.current_message();
                if self.sends_while_writing()
                    && msg.reasoning_sent < msg.reasoning.len()
                    && msg.text.len() > msg.reasoning_from
                    && !text.trim().is_empty()
                {
                    // Answer was written after the reasoning not sent yet, and more reasoning
                    // follows: the earlier reasoning goes out before that answer.
                    self.send_reasoning_block();
                }
                let msg = self.current_message();
                let new_segment = msg.reasoning_sent == msg.reasoning.len();
                if new_segment && !text.trim().is_empty() {
                    self.answer_before_reasoning(now);
                }
                let msg = self.current_message_mut();
                if new_segment {
                    // New reasoning: it goes before the answer written from here on.
                    msg.reasoning_from = msg.text.len();
                }
                msg.reasoning.push_str(&text);
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

    /// Reasoning mode `on`, new reasoning in the middle of a message while blocks stream:
    /// the answer written before it (held by the token gate, the chunker, the coalescer)
    /// leaves first, as at a media boundary, so the reasoning block lands between the
    /// answer before it and the answer after it.
    ///
    /// Only where that answer ends a word (in whitespace or punctuation): the answer of the
    /// delta that brought the reasoning is not in the message yet, and a cut between the
    /// two would split a word. Otherwise nothing is flushed, and the block that holds the
    /// text on both sides goes out after the reasoning (see [`Engine::send_reasoning_before`]).
    fn answer_before_reasoning(&mut self, now: Time) {
        if !self.message_open || !self.sends_while_writing() {
            return;
        }
        let text = &self.current_message().text;
        let held = self.tokens.held_tail();
        let last = held
            .chars()
            .next_back()
            .or_else(|| text.chars().next_back());
        let word_ended = last.is_some_and(|c| c.is_whitespace() || c.is_ascii_punctuation());
        if text.is_empty() || !word_ended {
            return;
        }
        self.flush_token_gate(now);
        self.drain_pending_text();
        self.flush_chunker(now);
        self.coalescer.flush(&mut self.coalesced);
        self.enqueue_coalesced();
    }

    pub(super) fn on_thinking_end(&mut self, now: Time) {
        if self.cfg().reasoning == ReasoningMode::Stream && self.message_open {
            self.reasoning_chunker.flush(&mut self.blocks);
            self.route_blocks(Lane::Reasoning, now);
            self.coalescer.flush(&mut self.coalesced);
            self.enqueue_coalesced();
        }
    }

    /// Reasoning mode `on`, before a send of the open message leaves (`spans`: the answer
    /// text it shows): the reasoning not yet sent goes first when the send shows answer
    /// text written after the reasoning began, or no answer text at all (media, a tool
    /// summary: they came after it). So the reasoning reaches the user before the answer it
    /// belongs to; a block that also holds answer text from before the reasoning (one
    /// coalesced block around it) follows it whole.
    pub(super) fn send_reasoning_before(&mut self, spans: &[SourceSpan]) {
        if self.cfg().reasoning != ReasoningMode::On || self.preview.is_some() {
            return;
        }
        let index = self.message_index();
        let Some(msg) = self.messages.last() else {
            return;
        };
        if msg.reasoning_sent == msg.reasoning.len() {
            return;
        }
        let after = spans.is_empty()
            || spans
                .iter()
                .any(|s| s.message == index && s.range.end > msg.reasoning_from);
        if after {
            self.send_reasoning_block();
        }
    }

    /// Reasoning mode `on`: the message's reasoning not sent yet, once, as messages that
    /// are each well-formed on their own (see [`reasoning_messages`]).
    pub(super) fn send_reasoning_block(&mut self) {
        let limits = ReasoningLimits {
            metric: self.cfg().metric,
            limit: self.config.text_budget(),
            max_lines: self.cfg().max_lines,
            format: self.cfg().format,
            render: RenderOptions {
                quote: true,
                ..self.config.render_options()
            },
        };
        let Some(msg) = self.messages.last_mut() else {
            return;
        };
        let from = msg.reasoning_sent;
        msg.reasoning_sent = msg.reasoning.len();
        let unsent = &msg.reasoning[from..];
        if unsent.trim().is_empty() {
            return;
        }
        // Blank lines around it go; the first line's indentation stays (it may be code).
        let raw = unsent.trim_end();
        let ws = raw.len() - raw.trim_start().len();
        let raw = &raw[raw[..ws].rfind('\n').map_or(0, |i| i + 1)..];
        for text in reasoning_messages(raw, limits) {
            let payload = Payload {
                text,
                lane: Lane::Reasoning,
                ..Payload::default()
            };
            self.enqueue(SendKind::Block, payload, SmallVec::new());
        }
    }
}

/// The header of the first reasoning message.
const HEADER: &str = "Reasoning:";

/// What a reasoning message must fit.
#[derive(Clone, Copy, Debug)]
pub(super) struct ReasoningLimits {
    pub metric: LengthMetric,
    pub limit: usize,
    pub max_lines: Option<usize>,
    /// The format reasoning messages are posted in (quoted), counted as the platform does.
    pub format: Format,
    pub render: RenderOptions,
}

/// The reasoning `raw` as messages (SPEC §8: `"Reasoning:\n_…_"`), each well-formed on its
/// own and within `limits`:
/// - the first starts with the `Reasoning:` header, never alone: text follows it;
/// - every line of prose is italic on its own (`_line_`, after any list, heading or quote
///   marker), so italics never run across a line break, a blank line or a cut; fenced code
///   and indented code are shown as they are;
/// - long reasoning is cut by the platform splitter (fences repaired) with room left for
///   the header and the italics, so no piece is cut again later.
pub(super) fn reasoning_messages(raw: &str, limits: ReasoningLimits) -> Vec<String> {
    let metric = limits.metric;
    let header_cost = metric.len(HEADER) + 1;
    let mut budget = limits.limit.saturating_sub(header_cost);
    // Each round shrinks the raw budget by what the worst piece overflowed; the italics
    // cost at most two units per line, so this settles within a few rounds.
    for _ in 0..32 {
        let Ok(splitter) = PlatformSplitter::new(SplitConfig {
            limit: budget,
            metric,
            mode: SplitMode::Length,
            max_lines: limits.max_lines.map(|n| n.saturating_sub(1).max(1)),
            ..SplitConfig::default()
        }) else {
            break;
        };
        let messages: Vec<String> = splitter
            .split(raw)
            .into_iter()
            .map(|piece| without_separator_edges(raw, piece, |p| is_indented_code_line(raw, p)))
            // A piece that was only a reopened fence and its closer shows nothing.
            .filter(|piece| !piece.is_empty())
            .enumerate()
            .map(|(i, piece)| {
                let mut out = String::with_capacity(piece.len() + 64);
                if i == 0 {
                    out.push_str(HEADER);
                    out.push('\n');
                }
                italic_lines(&piece, &mut out);
                out
            })
            .collect();
        let overflow = messages
            .iter()
            .map(|m| {
                let posted = posted_len(m, limits.format, &limits.render, metric);
                let over_len = posted.max(metric.len(m)).saturating_sub(limits.limit);
                let lines = m.split('\n').count();
                let over_lines = limits.max_lines.map_or(0, |cap| lines.saturating_sub(cap));
                over_len.max(over_lines * 2)
            })
            .max()
            .unwrap_or(0);
        if overflow == 0 {
            return messages;
        }
        budget = budget.saturating_sub(overflow.max(budget / 8).max(1));
    }
    // Unreachable in practice (a text limit leaves room for a header and a short line);
    // the outbox's splitter then keeps every piece within the limit.
    let mut out = String::with_capacity(raw.len() + 64);
    out.push_str(HEADER);
    out.push('\n');
    italic_lines(raw, &mut out);
    vec![out]
}

/// Appends `text` with every line of prose in italics (`_…_`): a line's indentation and its
/// list, heading or quote marker stay outside; an underscore at either end of the content
/// is escaped (`\_`) so it does not merge with the italics' own; blank lines, fence lines,
/// fenced code and indented code stay as they are, as does a line ending in a backslash
/// (which would escape the closing underscore).
fn italic_lines(text: &str, out: &mut String) {
    let mut fence: Option<FenceMarker> = None;
    let mut after_blank = true;
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let (line, cr) = match line.strip_suffix('\r') {
            Some(l) => (l, "\r"),
            None => (line, ""),
        };
        let blank = line.trim().is_empty();
        let verbatim = match fence {
            Some(m) => {
                if m.is_closed_by(line) {
                    fence = None;
                }
                true
            }
            None => {
                fence = FenceMarker::parse_open(line);
                let indented_code = after_blank && line.starts_with("    ");
                fence.is_some() || indented_code || blank
            }
        };
        after_blank = blank || (after_blank && line.starts_with("    "));
        if verbatim {
            out.push_str(line);
        } else {
            let body = line.trim_end();
            let content_at = marker_end(body);
            let content = &body[content_at..];
            if content.is_empty() || content.ends_with('\\') {
                out.push_str(body);
            } else {
                // An underscore at either end would merge with the italics' own: escaped.
                out.push_str(&body[..content_at]);
                out.push('_');
                if content.starts_with('_') {
                    out.push('\\');
                }
                match content.strip_suffix('_') {
                    Some(head) if !head.is_empty() => {
                        out.push_str(head);
                        out.push_str("\\_");
                    }
                    _ => out.push_str(content),
                }
                out.push('_');
            }
        }
        out.push_str(cr);
    }
}

/// Where the content of a prose line starts: after its indentation and a list item,
/// heading or block quote marker.
fn marker_end(line: &str) -> usize {
    let bytes = line.as_bytes();
    let mut at = bytes
        .iter()
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count();
    loop {
        let rest = &bytes[at..];
        let marker = match rest {
            [b'-' | b'*' | b'+', b' ', ..] => 2,
            [b'>', b' ', ..] => 2,
            [b'#', ..] => {
                let hashes = rest.iter().take_while(|&&b| b == b'#').count();
                match rest.get(hashes) {
                    Some(b' ') if hashes <= 6 => hashes + 1,
                    _ => 0,
                }
            }
            [b'0'..=b'9', ..] => {
                let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
                match rest.get(digits..digits + 2) {
                    Some([b'.' | b')', b' ']) if digits <= 9 => digits + 2,
                    _ => 0,
                }
            }
            _ => 0,
        };
        if marker == 0 {
            return at;
        }
        at += marker;
        at += bytes[at..].iter().take_while(|&&b| b == b' ').count();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn italic(text: &str) -> String {
        let mut out = String::new();
        italic_lines(text, &mut out);
        out
    }

    #[test]
    fn every_line_of_prose_is_italic_on_its_own() {
        assert_eq!(italic("one\ntwo"), "_one_\n_two_");
        assert_eq!(italic("para one\n\npara two"), "_para one_\n\n_para two_");
        assert_eq!(
            italic("- item\n1. first\n## Head\n> quote"),
            "- _item_\n1. _first_\n## _Head_\n> _quote_"
        );
        assert_eq!(italic("trailing  \r\nnext"), "_trailing_\r\n_next_");
        assert_eq!(italic("_already_ here"), "_\\_already_ here_");
        assert_eq!(italic("snake_"), "_snake\\__");
        assert_eq!(italic("_"), "_\\__", "a lone underscore, escaped");
        assert_eq!(italic("ends with \\"), "ends with \\");
    }

    #[test]
    fn code_stays_as_it_is() {
        assert_eq!(
            italic("Try:\n```rust\nlet a = 1;\n```\nDone."),
            "_Try:_\n```rust\nlet a = 1;\n```\n_Done._"
        );
        assert_eq!(
            italic("Code:\n\n    x = 1\n    y = 2\n\nAfter."),
            "_Code:_\n\n    x = 1\n    y = 2\n\n_After._"
        );
    }

    #[test]
    fn long_reasoning_is_cut_into_well_formed_messages() {
        let raw: String = (0..=110)
            .map(|i| format!("Reasoning step {i} considers the options carefully."))
            .collect::<Vec<_>>()
            .join("\n\n");
        let limits = ReasoningLimits {
            metric: LengthMetric::Utf16,
            limit: 400,
            max_lines: None,
            format: Format::Markdown,
            render: RenderOptions::default(),
        };
        let messages = reasoning_messages(&raw, limits);
        assert!(messages.len() > 1);
        assert!(messages[0].starts_with("Reasoning:\n_Reasoning step 0 "));
        for m in &messages {
            assert!(LengthMetric::Utf16.len(m) <= 400, "{m:?}");
            for line in m.lines().filter(|l| !l.is_empty() && *l != HEADER) {
                assert!(line.starts_with('_') && line.ends_with('_'), "{line:?}");
            }
        }
        assert!(messages[1..].iter().all(|m| !m.contains(HEADER)));
    }

    #[test]
    fn one_long_line_is_italic_in_every_piece() {
        let raw = "word ".repeat(200);
        let limits = ReasoningLimits {
            metric: LengthMetric::Chars,
            limit: 100,
            max_lines: Some(17),
            format: Format::Markdown,
            render: RenderOptions::default(),
        };
        for m in reasoning_messages(raw.trim(), limits) {
            assert!(m.chars().count() <= 100);
            let body = m.strip_prefix("Reasoning:\n").unwrap_or(&m);
            assert!(body.starts_with('_') && body.ends_with('_'), "{m:?}");
        }
    }
}
