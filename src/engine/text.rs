//! The answer text path: model text through tags, directives and the token gate into the
//! message text, then the chunker and the coalescer, out as block sends.

use smallvec::SmallVec;

use super::Engine;
use super::finals::ContentMap;
use crate::config::BreakMode;
use crate::payload::{Lane, Payload};
use crate::stage::coalescer::{BlockMeta, CoalescedText, is_code_indent, reopened_then_closed};
use crate::stage::directives::{DirectiveEvent, PlainRelease};
use crate::stage::ledger::SourceSpan;
use crate::stage::{LINE_BREAK, SETTLE_BATCH, TAG_OR_BRACKET, stage_syntax};
use crate::text::block::Block;
use crate::text::dedent::{Dedent, quoted_source_position};
use crate::text::markdown::FenceMarker;
use crate::text::markdown::is_indented_code_line;
use crate::time::Time;

impl Engine {
    /// New raw model text (a slice of the caller's input): run it through tags and
    /// directives.
    pub(super) fn on_model_text(&mut self, raw: &str, now: Time) {
        if raw.is_empty() {
            return;
        }
        self.filter_model_text(Some(raw), now);
    }

    /// A text boundary inside the message (`TextEnd`, a tool call, media): every stage lets
    /// go of what it holds back (a possible tag start, a possible directive, a possible
    /// token), in order, so the text before the boundary leaves before it and the joiner
    /// lands exactly at the boundary.
    pub(super) fn release_at_boundary(&mut self, now: Time) {
        if !self.message_open {
            return;
        }
        self.filter_model_text(None, now);
        self.flush_token_gate(now);
    }

    /// Runs `raw` (or, with `None`, what the stages hold at a boundary) through tags and
    /// directives. In reasoning mode `on` with blocks streaming, a thinking block that opens
    /// in `raw` splits the work there: the answer before it is applied first, so the
    /// reasoning block can go out between the answer before it and the answer after it
    /// (see [`Engine::send_reasoning_before`]). The output is the same either way.
    fn filter_model_text(&mut self, raw: Option<&str>, now: Time) {
        if let Some(raw) = raw
            && self.pass_plain(raw, now)
        {
            return;
        }
        self.catch_up_tags();
        let pause = raw.is_some() && self.pauses_at_thinking;
        let mut raw = raw;
        loop {
            if !self.filter_model_text_once(raw.take(), pause, now) {
                return;
            }
            // Paused after a thinking opener: the rest of the delta is still in the tag
            // filter, read by an empty push.
            raw = Some("");
        }
    }

    /// The common case of [`Engine::filter_model_text`] for `raw`, taken when it applies
    /// (whether it did): a delta with no byte that the tag filter or the directive parser
    /// acts on (`<`, `[`), while neither holds anything back and no thinking block is open,
    /// passes both unchanged (but for spaces the directive tidy holds at its end), as long
    /// as no `MEDIA:` line may start in it and, where it breaks a line, nothing was removed
    /// that the tidy would close the gap of. One search of the delta for all those bytes
    /// instead of one per stage, and the same output as the general path: the tag filter's
    /// answer is the delta itself (no reasoning, no pause, no event), which the directive
    /// parser takes as plain text.
    #[inline]
    fn pass_plain(&mut self, raw: &str, now: Time) -> bool {
        if raw.is_empty() || !self.tags.passes_plain() {
            return false;
        }
        let syntax = stage_syntax(raw.as_bytes());
        if syntax & TAG_OR_BRACKET != 0 {
            return false;
        }
        debug_assert!(self.directive_out.is_empty() && self.directive_out.text.is_empty());
        // The tag filter's copy of the delta is the directive parser's: the filter owes it
        // (see `TagFilter::owe`) while the parser keeps every byte (below a settle batch),
        // and takes the bytes it owes in one copy before the parser may drop any.
        let owe = self.directives.buffered() + raw.len() < SETTLE_BATCH;
        if !owe {
            self.catch_up_tags();
        }
        let released = if syntax & LINE_BREAK != 0 {
            // Rare enough (a line break per line) to take one more look for it.
            let last_nl = raw.rfind('\n').expect("a line break");
            let Some(n) = self.directives.push_lines(raw, last_nl) else {
                return false;
            };
            &raw[..n]
        } else {
            if !self.directives.takes_plain(raw) {
                return false;
            }
            match self.directives.push_plain(raw, &mut self.directive_out) {
                PlainRelease::Whole => raw,
                PlainRelease::Stretch(range) => self.directives.released(range),
                PlainRelease::Out => {
                    self.tags.pass_or_owe(raw, owe);
                    if !self.directive_out.is_empty() {
                        self.apply_directive_events(now);
                    }
                    return true;
                }
            }
        };
        self.tags.pass_or_owe(raw, owe);
        let msg = self.messages.last_mut().expect("a message is open");
        let before = msg.text.len();
        self.tokens.push(released, &mut msg.text);
        if msg.text.len() > before {
            self.feed_new_clean(now);
        }
        true
    }

    /// The tag filter takes in the bytes it owes ([`TagFilter::owe`]), the end of the
    /// directive parser's buffer: before anything else reads or feeds it.
    ///
    /// [`TagFilter::owe`]: crate::stage::tags::TagFilter::owe
    #[inline]
    pub(super) fn catch_up_tags(&mut self) {
        let owed = self.tags.owed();
        if owed > 0 {
            self.tags.catch_up(self.directives.recent(owed));
        }
    }

    /// One pass of [`Engine::filter_model_text`]; whether the tag filter paused.
    fn filter_model_text_once(&mut self, raw: Option<&str>, pause: bool, now: Time) -> bool {
        self.reasoning_scratch.clear();
        // Nothing to clear: every use of `directive_out` ends in `apply_directive_events`,
        // which clears it, or releases nothing (no event, and so no text).
        debug_assert!(self.directive_out.is_empty() && self.directive_out.text.is_empty());
        // The tag filter appends the answer straight into the directive parser's buffer,
        // which then parses it. That is `push` of the answer, one copy fewer; parsing before
        // the reasoning is routed changes nothing, as routing never touches the directive
        // parser or its output, whose events are applied only after.
        //
        // Plain text (the common case) comes back as a stretch of the directive parser's
        // buffer instead of a text event in `directive_out`: it goes to the token gate from
        // there, one copy fewer again.
        let (tags, reasoning) = (&mut self.tags, &mut self.reasoning_scratch);
        let (events, plain) = match raw {
            Some(raw) => self.directives.push_with_plain(
                |answer| tags.push_pausing(raw, answer, reasoning, pause),
                &mut self.directive_out,
            ),
            None => {
                let events = self.directives.push_with(
                    |answer| tags.release(answer, reasoning),
                    &mut self.directive_out,
                );
                self.directives.release(&mut self.directive_out);
                (events, None)
            }
        };
        // With no block ended and no reasoning, routing does nothing.
        if events.thinking_ended_at.is_some() || !self.reasoning_scratch.is_empty() {
            self.route_reasoning_events(events.thinking_ended_at, now);
        }
        if let Some(range) = plain {
            // What `apply_directive_events` does with a lone text event.
            debug_assert!(self.directive_out.is_empty());
            let msg = self.messages.last_mut().expect("a message is open");
            let before = msg.text.len();
            self.tokens
                .push(self.directives.released(range), &mut msg.text);
            if msg.text.len() > before {
                self.feed_new_clean(now);
            }
        } else if !self.directive_out.is_empty() {
            self.apply_directive_events(now);
        }
        events.paused
    }

    /// Applies what the directive parser released: text goes on through the token gate;
    /// media flushes the text before it; reply targets and voice flags become sticky.
    ///
    /// The events are read by index, not moved out: nothing called from here touches
    /// `directive_out`.
    pub(super) fn apply_directive_events(&mut self, now: Time) {
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
                    // What the model wrote is never deduplicated: said twice, sent twice.
                    self.attach_media(payload, now);
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

    /// A boundary inside the message (media, tool): the token gate lets go of what it holds
    /// so the text before the boundary leaves before it.
    pub(super) fn flush_token_gate(&mut self, now: Time) {
        if !self.message_open {
            return;
        }
        self.clean_scratch.clear();
        self.tokens.flush(&mut self.clean_scratch);
        self.accept_clean(now);
    }

    /// Cleaned text is in `clean_scratch`: record it and feed the chunker.
    pub(super) fn accept_clean(&mut self, now: Time) {
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
        let streaming = self.sends_while_writing();
        let msg = self.messages.last_mut().expect("a message is open");
        if streaming {
            let from = msg.fed;
            msg.fed = msg.text.len();
            self.chunker.push(&msg.text[from..], &mut self.blocks);
            self.route_blocks(Lane::Answer, now);
        }
    }

    /// Whether blocks leave while the model writes: blocks stream and the break mode is
    /// `text_end` (in `message_end` mode they wait for the message's end).
    #[inline]
    pub(super) fn sends_while_writing(&self) -> bool {
        self.streams_blocks && self.break_mode == BreakMode::TextEnd
    }

    /// Hands any cleaned text not yet given to the chunker (message_end mode) to it.
    pub(super) fn drain_pending_text(&mut self) {
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

    /// Whether blocks are sent while the model writes: block streaming is on and no live
    /// preview is (with a preview, block streaming is off for the turn, SPEC §10).
    pub(super) fn streams_blocks(&self) -> bool {
        debug_assert_eq!(
            self.streams_blocks,
            self.cfg().block_streaming && self.preview.is_none()
        );
        self.streams_blocks
    }

    /// Forced drain of the chunker into the coalescer (the coalescer keeps its buffer).
    pub(super) fn flush_chunker(&mut self, now: Time) {
        if !self.message_open {
            return;
        }
        self.chunker.flush(&mut self.blocks);
        if self.streams_blocks() {
            let msg = self.messages.last_mut().expect("a message is open");
            let end = msg.text.len();
            let line = msg.text.rsplit('\n').next().unwrap_or("");
            let ended = !line.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\r'));
            if ended && msg.line_ends.last() != Some(&end) {
                msg.line_ends.push(end);
            }
        }
        self.route_blocks(Lane::Answer, now);
        self.coalescer.end_of_text();
    }

    /// Forced drain of the chunker and the coalescer (a boundary: the live preview's
    /// segment ends too).
    pub(super) fn flush_all(&mut self, now: Time) {
        self.preview_boundary();
        self.flush_chunker(now);
        self.reasoning_chunker.flush(&mut self.blocks);
        self.route_blocks(Lane::Reasoning, now);
        self.coalescer.flush(&mut self.coalesced);
        self.enqueue_coalesced();
    }

    /// Blocks in `self.blocks` go to the coalescer. Inlined for its test: most pushes end
    /// no block.
    #[inline]
    pub(super) fn route_blocks(&mut self, lane: Lane, now: Time) {
        if !self.blocks.is_empty() {
            self.route_some_blocks(lane, now);
        }
    }

    /// [`Engine::route_blocks`] once there are blocks.
    #[inline(never)]
    fn route_some_blocks(&mut self, lane: Lane, now: Time) {
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
            if self.fits(&block.text, lane) {
                self.coalesce_block(block, &meta, now);
                continue;
            }
            // Within the chunk size but over the channel's line cap: split it here, each
            // piece a block of the message in its own right.
            let pieces = self.splitter_for(lane).split(&block.text);
            let source = match lane {
                Lane::Answer => self.messages.last().map(|m| m.text.as_str()),
                _ => None,
            };
            // (Collected: the message's text is read while the pieces are made.)
            let pieces: Vec<Block> = line_cap_pieces(&block, source, pieces).collect();
            for piece in pieces {
                self.coalesce_block(piece, &meta, now);
            }
        }
        self.blocks = blocks;
        self.enqueue_coalesced();
    }

    /// One block into the coalescer. Answer blocks index the message's cleaned text, which
    /// then gives the exact separator to the previous block; reasoning blocks carry theirs.
    fn coalesce_block(&mut self, block: Block, meta: &BlockMeta, now: Time) {
        let source = match meta.lane {
            Lane::Answer => self.messages.last().map(|m| m.text.as_str()),
            _ => None,
        };
        self.coalescer
            .push_block(block, meta, source, now, &mut self.coalesced);
    }

    /// Splits `text` to the platform limit. With `map`, each piece carries the exact part of
    /// the model's text it shows, so a piece that fails is re-sent in the final and a piece
    /// that arrives is never sent again.
    /// Sends on `lane` are measured as they are posted (reasoning quoted).
    pub(super) fn split_mapped_on(
        &self,
        lane: Lane,
        text: &str,
        map: Option<&ContentMap>,
    ) -> Vec<(String, SmallVec<[SourceSpan; 2]>)> {
        let splitter = self.splitter_for(lane);
        // Text that goes on inside a fence not reopened is read as it is in the source.
        let pieces = match map.and_then(|m| Some((m.message, m.in_fence.clone()?))) {
            Some((message, line)) => {
                splitter.split_in_fence(&self.messages[message as usize].text[line], text)
            }
            None => splitter.split(text),
        };
        pieces
            .into_iter()
            .map(|piece| {
                let spans = map
                    .and_then(|m| m.span_of(&piece.source))
                    .map(|span| SourceSpan {
                        closes_fence: piece.fence_closed,
                        ..span
                    })
                    .into_iter()
                    .collect();
                // Whether an indented line is code is read in the whole message where the
                // piece shows it (the text may start in the middle of one of its lines).
                let code_line = |p: usize| match map.and_then(|m| m.source_of(p)) {
                    Some((message, at)) => {
                        is_indented_code_line(&self.messages[message as usize].text, at)
                    }
                    None => true,
                };
                (without_separator_edges(text, piece, code_line), spans)
            })
            .collect()
    }

    /// Coalesced texts become block sends. Answer text carries its source ranges for the
    /// ledger; reasoning text does not (it is never part of the final).
    pub(super) fn enqueue_coalesced(&mut self) {
        let mut items = std::mem::take(&mut self.coalesced);
        for mut item in items.drain(..) {
            let measured = item.measured.take();
            let (payload, spans) = Self::coalesced_payload(item);
            self.enqueue_coalesced_text(payload, spans, measured);
        }
        self.coalesced = items;
    }

    pub(super) fn coalesced_payload(item: CoalescedText) -> (Payload, SmallVec<[SourceSpan; 2]>) {
        let spans = if item.meta.lane == Lane::Answer {
            let message = item.meta.message as u32;
            let last = item.sources.len().saturating_sub(1);
            item.sources
                .iter()
                .enumerate()
                .map(|(i, r)| SourceSpan {
                    message,
                    range: r.clone(),
                    closes_fence: i == last && item.fence_closed,
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
}

/// The pieces the platform splitter cut from `block.text` (a block over the line cap), as
/// blocks of the message: source ranges in the message's text, synthetic starts (a reopened
/// fence line, 4 spaces continuing an indented code line) and synthetic closes flagged
/// whether the chunker or the splitter added them, and separators taken from the block's own
/// text (the exact source between two pieces), the last piece's being the block's. The
/// first piece carries the block's lead.
///
/// `message` is the message's text that `block.source` indexes (`None` on lanes that keep
/// none): a de-indented block's text ([`Block::dedent`]) is mapped back through it line by
/// line ([`quoted_source_position`]), and each piece carries the columns in force where it starts.
/// Without it such a block's text is taken as its source, clamped to it.
fn line_cap_pieces<'a>(
    block: &'a Block,
    message: Option<&'a str>,
    pieces: Vec<Block>,
) -> impl Iterator<Item = Block> + 'a {
    let text = block.text.as_str();
    let content = block.source_in_text();
    let de_indented = match message.and_then(|m| m.get(block.source.clone())) {
        Some(source) if block.dedent > 0 => {
            let start = block.source.start;
            let line_start =
                start == 0 || message.is_some_and(|m| m.as_bytes()[start - 1] == b'\n');
            let head = &text[..content.start];
            Some((
                source,
                line_start && (head.is_empty() || head.ends_with('\n')),
            ))
        }
        _ => None,
    };
    // (byte of the message, columns of de-indentation in force there).
    let to_source = move |at: usize| {
        let rel = at.clamp(content.start, content.end) - content.start;
        match de_indented {
            Some((source, line_start)) => {
                let d = Dedent {
                    cols: block.dedent,
                    quotes: block.dedent_quotes,
                };
                let (p, d) = quoted_source_position(source, d, line_start, rel);
                (block.source.start + p, d.cols)
            }
            None => (block.source.start + rel, block.dedent),
        }
    };
    let starts: Vec<usize> = pieces.iter().skip(1).map(|p| p.source.start).collect();
    pieces.into_iter().enumerate().map(move |(i, piece)| {
        let (start, cols) = to_source(piece.source.start);
        let (end, _) = to_source(piece.source.end);
        let ws = |gap: &str| {
            gap.bytes()
                .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        };
        let sep = match starts.get(i) {
            // The source between the two pieces, where it is only whitespace.
            Some(&next) => match (de_indented, message) {
                (Some(_), Some(m)) => match m.get(end..to_source(next).0) {
                    Some(gap) if ws(gap) => gap.to_owned(),
                    _ => piece.sep,
                },
                _ => match text.get(piece.source.end..next) {
                    Some(gap) if ws(gap) => gap.to_owned(),
                    _ => piece.sep,
                },
            },
            None => block.sep.clone(),
        };
        // A piece that starts in the block's synthetic start shows it as its own.
        let in_head = piece.source.start < content.start;
        let lead = match i {
            0 => format!("{}{}", block.lead, piece.lead),
            _ => piece.lead,
        };
        // The block's synthetic edges that the piece shows are synthetic in the piece too.
        let head_len = piece.head_len + content.start.saturating_sub(piece.source.start);
        let tail_len = piece.tail_len + piece.source.end.saturating_sub(content.end);
        Block {
            head_len,
            tail_len,
            fence_reopened: piece.fence_reopened || (in_head && block.fence_reopened),
            indent_reopened: piece.indent_reopened || (in_head && block.indent_reopened),
            table_header_repeated: piece.table_header_repeated
                || (in_head && block.table_header_repeated),
            fence_closed: piece.fence_closed
                || (piece.source.end > content.end && block.fence_closed),
            spans_reopened: piece.spans_reopened || (in_head && block.spans_reopened),
            spans_closed: piece.spans_closed
                || (piece.source.end > content.end && block.spans_closed),
            // Both de-indentations apply, one after the other: the block's as it stands
            // where the piece starts, then the splitter's.
            dedent: cols + piece.dedent,
            // (After the block's quote markers when it was de-indented after them.)
            dedent_quotes: block.dedent_quotes.max(piece.dedent_quotes),
            // The block's mark on its first piece; a later piece that the splitter started
            // at such an item (see `MarkdownScanner::list_cut`) carries the splitter's.
            continues_list: (block.continues_list && i == 0) || piece.continues_list,
            // The block's mark on its last piece (a piece of the block's text alone reads
            // no item).
            ends_item_fence: block.ends_item_fence && i == starts.len(),
            // The block's first row, without the splitter's repairs: the header the block
            // would show before it suits the piece as well.
            table_head: block
                .table_head
                .clone()
                .filter(|_| i == 0 && head_len == 0 && piece.dedent == 0),
            source: start..end,
            text: piece.text,
            lead,
            sep,
        }
    })
}

/// A piece's text without separator whitespace at its edges (the message rule: a send
/// never starts or ends with it): whitespace at its start unless it indents a line of code
/// (nothing after a synthetic reopen line goes), whitespace at its end (unless it ends
/// with a synthetic close). Its span still covers what was dropped.
/// `code_line(p)` says whether an indentation of 4 columns or more at the line starting at
/// byte `p` of `text` makes indented code (not a paragraph's lazy continuation line).
pub(super) fn without_separator_edges(
    text: &str,
    piece: Block,
    code_line: impl Fn(usize) -> bool,
) -> String {
    let is_ws = |b: u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n');
    // A reopened fence whose own closing line comes first: the piece before closed it (its
    // synthetic close showed that line), so both go, or they would show an empty code block.
    let head = piece.source_in_text().start;
    let closed_at = match piece.fence_reopened {
        true => reopened_then_closed(&piece.text, head),
        false => 0,
    };
    let mut out = piece.text;
    if !piece.fence_closed {
        let keep = out.len() - out.bytes().rev().take_while(|&b| is_ws(b)).count();
        out.truncate(keep.max(closed_at));
    }
    out.drain(..closed_at);
    if !piece.fence_reopened || closed_at > 0 {
        let run = out.bytes().take_while(|&b| is_ws(b)).count();
        let at = piece.source.start + closed_at.saturating_sub(head);
        let line_start = at == 0 || text.as_bytes().get(at - 1) == Some(&b'\n');
        let nl = out[..run].rfind('\n');
        let indent_at = nl.map_or(0, |i| i + 1);
        let code = || {
            is_code_indent(&out[indent_at..run])
                && (piece.indent_reopened || code_line((at + indent_at).min(text.len())))
        };
        // A fence opening line keeps its indentation (3 spaces at most): its code lines are
        // indented alike, and the fence takes that much off each of them.
        let fence_line = || {
            let line = &out[indent_at..];
            let end = line.find('\n').unwrap_or(line.len());
            FenceMarker::parse_open(&line[..end]).is_some()
        };
        let strip = match nl.is_some() || line_start {
            true if code() || fence_line() => indent_at,
            _ => run,
        };
        out.drain(..strip);
    }
    out
}
