//! Finals and reconciliation (SPEC §6): at the end of the turn, the model's text not
//! confirmed delivered (mapped back to its source so the ledger stays exact), then the host's
//! final payloads reconciled against the model's text, then the error.
//!
//! **The model's remainder.** The ledger knows, by source range, which of the model's text
//! the host confirmed delivered; exactly the rest is sent, split to the platform limit. Token
//! rules were already applied at the edges of each message (the gate), so the remainder is
//! sent as it is: a paragraph in the middle that ends in `NO_REPLY` keeps its words.
//!
//! **The host's final** is compared with the model's text of the turn — what the user has
//! or is about to get, the ledger plus the remainder — ignoring whitespace: against the whole
//! turn and against every run of its last messages (a gateway's final is usually the whole
//! reply or the last assistant message). Equal to one of them: its text is dropped (its media
//! still go, unless already sent). Starting with one of them: only the extension is sent
//! ("Hello, here is the first part." streamed, final "Hello, here is the first part. And here
//! is more." sends "And here is more."). Anything else is sent whole, even when it happens to
//! occur inside the streamed text ("OK" after a stream that said "TOKEN").
//!
//! **Late acks.** A send whose delivery timeout fired may still be acked. What happens in
//! each ordering:
//! 1. *Ack before `Finish`*: recorded in the ledger; the remainder leaves it out.
//! 2. *Ack after the timeout, while the finals wait*: after `Finish`, once every block send
//!    is settled, the engine waits for the timed-out sends, at most one delivery timeout
//!    (an `ArmTimer` for the end of the wait). An ack in that window is recorded before the
//!    remainder is computed, so its text is not sent again. A `DeliveryFailed` ends the wait
//!    for that send.
//! 3. *Ack after the finals were computed*: the ledger records it, and the remainder finals
//!    still queued are computed again without the newly confirmed text (a final in flight
//!    or timed out keeps its text; if it then fails and is to be retried, it is computed
//!    again too).
//!    Only text of a final already handed to the host can reach the user twice: the
//!    platform confirmed, after the engine had waited a second delivery timeout, a message
//!    it had to presume lost.
//! 4. *Never acked*: never confirmed, so its text is in the remainder and sent again.

use std::ops::Range;

use smallvec::SmallVec;

use super::Engine;
use super::text::without_separator_edges;
use crate::action::{SendKind, SendOp};
use crate::payload::{Lane, Payload};
use crate::stage::coalescer::is_code_indent;
use crate::stage::dispatch::Outgoing;
use crate::stage::ledger::SourceSpan;
use crate::text::dedent::item_dedent;
use crate::text::markdown::inline::SpanDelims;
use crate::text::markdown::{FenceSpan, MarkdownScanner, is_indented_code_line};

impl Engine {
    /// Reconciles what the user got against what the model wrote and queues the finals:
    /// exactly the text not confirmed delivered, split to the platform limit; then host
    /// final payloads reconciled against the model's text; then the error, if the model
    /// failed.
    pub(super) fn queue_finals(&mut self) {
        for item in self.remainder_finals(&[]) {
            self.dispatcher.enqueue(item);
        }
        for mut payload in std::mem::take(&mut self.host_finals) {
            self.normalize_host_text(&mut payload);
            self.reconcile_host_final(&mut payload);
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

    /// A late ack recorded more of the model's text after the finals were computed: the
    /// remainder finals still queued are computed again (module docs, ordering 3).
    pub(super) fn requeue_remainder(&mut self) {
        let is_remainder = |o: &Outgoing| o.kind == SendKind::Final && !o.spans.is_empty();
        let withdrawn = self.dispatcher.withdraw(is_remainder);
        if withdrawn.is_empty() {
            return;
        }
        // A withdrawn piece may have carried the response prefix: let the new first piece
        // carry it instead.
        if let Some(prefix) = self.config.response_prefix() {
            let prefixed = withdrawn
                .iter()
                .filter(|o| o.payload.text.starts_with(prefix))
                .count() as u32;
            self.prefix_uses = self.prefix_uses.saturating_sub(prefixed);
        }
        // Text with the host (in flight, or timed out but maybe still arriving) is not sent
        // again; if it never arrives, nothing more can be done for it at this point.
        let with_host: Vec<SourceSpan> = self.dispatcher.unresolved_spans().cloned().collect();
        let items = self.remainder_finals(&with_host);
        self.dispatcher.enqueue_front(items.into_iter());
    }

    /// The finals that carry the model's text not confirmed delivered and not in `pending`,
    /// in source order.
    fn remainder_finals(&mut self, pending: &[SourceSpan]) -> Vec<Outgoing> {
        let mut items = Vec::new();
        for i in 0..self.messages.len() {
            let message = i as u32;
            let msg = &self.messages[i];
            let mut gaps = self.ledger.undelivered(message, msg.text.len());
            for span in pending.iter().filter(|s| s.message == message) {
                gaps = subtract(gaps, &span.range);
            }
            // A forced flush ended a line there: the text on either side went out apart
            // and is read apart, so no final joins them.
            for &end in &msg.line_ends {
                gaps = subtract(gaps, &(end..end));
            }
            // Separator whitespace alone (the line break after the last send) is never a
            // final (see the trimming below): no need to read the message for it.
            let blank = |gap: &Range<usize>| {
                msg.text.as_bytes()[gap.clone()]
                    .iter()
                    .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
            };
            if gaps.iter().all(blank) {
                continue;
            }
            // The text read as the chunker read it: a forced flush ended a line.
            let mut scanner = MarkdownScanner::new();
            for &end in &msg.line_ends {
                scanner.finish(&msg.text[..end]);
            }
            scanner.finish(&msg.text);
            // The whole message is here: a backtick run or an emphasis delimiter still open at
            // its end is literal.
            scanner.end_block(&msg.text);
            // Where a gap's first line starts (blank lines skipped), to tell whether it
            // starts inside a fence.
            let probe_of = |gap: &Range<usize>| {
                let lead = &msg.text[gap.clone()];
                let ws = lead.len() - lead.trim_start_matches([' ', '\t', '\r', '\n']).len();
                gap.start + lead[..ws].rfind('\n').map_or(0, |i| i + 1)
            };
            let open_line = |f: &FenceSpan| {
                let line = &msg.text[f.start..f.open_end];
                line.strip_suffix('\r').unwrap_or(line)
            };
            // A gap that starts in the middle of a fence's opening line: the rest of that
            // line goes out on its own, after the bare marker, and the code after it is
            // reopened as usual (the rest is no opening line to reopen the code with).
            let split_at = |gap: &Range<usize>| {
                let probe = probe_of(gap);
                scanner
                    .fence_at(probe)
                    .filter(|f| !f.continued && probe < f.open_end && f.open_end < gap.end)
                    .map(|f| f.open_end)
            };
            // A gap that starts inside a list item and holds a later item of its list that
            // its text would swallow (see `Block::continues_list`) goes out in two texts, the
            // second starting at that item, as the chunker cuts it.
            let list_at = |gap: &Range<usize>| {
                let start = gap.start + leading_separator(&msg.text, gap.clone());
                scanner
                    .list_cut(&msg.text, start, gap.end)
                    .filter(|&(_, item)| item < gap.end)
            };
            let mut split = Vec::with_capacity(gaps.len());
            for mut gap in gaps {
                loop {
                    if let Some(at) = split_at(&gap) {
                        split.push(gap.start..at);
                        gap.start = at;
                    } else if let Some((end, item)) = list_at(&gap) {
                        split.push(gap.start..end);
                        gap.start = item;
                    } else {
                        break;
                    }
                }
                split.push(gap);
            }
            let gaps = split;
            let mut texts = Vec::new();
            for gap in gaps {
                // Then its text starts past any separator (a send never starts or ends with
                // separator whitespace), keeping the indentation of a code line.
                let probe = probe_of(&gap);
                let mut start = gap.start + leading_separator(&msg.text, gap.clone());
                // A gap that starts at a fence's closing line, where the send before it
                // ended with a synthetic close: that close showed the line, and reopening the
                // fence here would show an empty code block. Where the send before was cut
                // plainly (a fence too wide to close and reopen within its limit), the line
                // is still to be shown.
                // A gap that starts in the middle of a fence's opening line goes on with the
                // rest of that line after the bare marker (see `Block::fence_reopened`).
                let fence = scanner.fence_at(probe).copied();
                let in_opening_line = fence.filter(|f| !f.continued && probe < f.open_end);
                let fence = fence.filter(|_| in_opening_line.is_none());
                let first_line = msg.text[start..gap.end].split('\n').next().unwrap_or("");
                let closed = fence.is_some_and(|f| {
                    f.marker.is_closed_by(first_line)
                        && self.closed_before(message, gap.start, pending, || {
                            self.splitter.closes(f.marker, open_line(&f))
                        })
                });
                if closed {
                    start += first_line.len();
                    start += leading_separator(&msg.text, start..gap.end);
                }
                // Nor is separator whitespace at its end.
                let end = start
                    + msg.text[start..gap.end]
                        .trim_end_matches([' ', '\t', '\r', '\n'])
                        .len();
                let gap = start..end;
                let slice = &msg.text[gap.clone()];
                if slice.trim().is_empty() {
                    continue;
                }
                // A gap in a list item whose text or code a piece starting there shows
                // de-indented (see `text::dedent`): split in the whole message, as the
                // pieces after a cut there are, so it shows what the item shows.
                if in_opening_line.is_none() && de_indented(&scanner, &msg.text, gap.clone()) {
                    let splitter = self.splitter_for(Lane::Answer);
                    let pieces = splitter.split_span(&msg.text, &scanner, gap);
                    let code_line = |p: usize| is_indented_code_line(&msg.text, p);
                    let pieces = pieces.into_iter().map(|piece| {
                        let span = SourceSpan {
                            message,
                            range: piece.source.clone(),
                            closes_fence: piece.fence_closed,
                        };
                        let text = without_separator_edges(&msg.text, piece, code_line);
                        (text, SmallVec::from_iter([span]))
                    });
                    texts.push(FinalText::Split(pieces.collect()));
                    continue;
                }
                // A gap that starts inside a fence gets the fence's opening line back; not
                // when the fence cannot be closed and reopened within the limit (a piece cut
                // inside it is not reopened either, SPEC §9): its text is then read as going
                // on inside the fence, so its closing line is read as one.
                let mut text = String::new();
                let mut in_fence = None;
                if let Some(f) = fence.filter(|f| !closed && !f.continued) {
                    if self
                        .splitter
                        .reopen_line(f.marker, open_line(&f), &mut text)
                    {
                        text.push('\n');
                    } else {
                        in_fence = Some(f.start..f.start + open_line(&f).len());
                    }
                } else if let Some(f) = in_opening_line {
                    f.marker.push_close(&mut text);
                    if slice.as_bytes()[0] == f.marker.ch {
                        text.push(' ');
                    }
                }
                // Outside fences, a gap that starts or ends inside emphasis or an inline code
                // span (the sends around it closed and reopened them) reopens and closes them,
                // as the chunker does.
                let (open, close) = match fence.is_some() || in_opening_line.is_some() {
                    true => (SpanDelims::NONE, SpanDelims::NONE),
                    false => (inline_open(&scanner, start), inline_open(&scanner, end)),
                };
                open.push_open(&mut text);
                let map = ContentMap {
                    message,
                    content: text.len()..text.len() + slice.len(),
                    source_start: gap.start,
                    in_fence,
                };
                text.push_str(slice);
                close.push_close(&mut text);
                texts.push(FinalText::Mapped(text, map));
            }
            let (reply_to, audio_as_voice) = (msg.reply_to.clone(), msg.audio_as_voice);
            for text in texts {
                let payload = Payload {
                    reply_to: reply_to.clone(),
                    audio_as_voice,
                    ..Payload::default()
                };
                match text {
                    FinalText::Mapped(text, map) => {
                        items.extend(self.final_pieces(Payload { text, ..payload }, map))
                    }
                    FinalText::Split(pieces) => items.extend(self.finals_of(payload, pieces)),
                }
            }
        }
        items
    }

    /// Whether the send that ended at byte `at` of message `message`, right before a
    /// fence's own closing line, ended with a synthetic close of that fence (which showed
    /// the line): a delivered send or one still with the host (`pending`) says so itself;
    /// else the text before `at` goes out in the finals too, split here, and
    /// `splitter_closes` says whether the splitter closes the fence at its end.
    fn closed_before(
        &self,
        message: u32,
        at: usize,
        pending: &[SourceSpan],
        splitter_closes: impl FnOnce() -> bool,
    ) -> bool {
        if let Some(closed) = self.ledger.end_at(message, at) {
            return closed;
        }
        let mut ending = pending
            .iter()
            .filter(|s| s.message == message && s.range.end == at)
            .peekable();
        if ending.peek().is_some() {
            return ending.any(|s| s.closes_fence);
        }
        splitter_closes()
    }

    /// The final sends of a text of model text, not queued: split to the platform limit
    /// (which also closes a fence left open at its end), the response prefix on the first
    /// piece it belongs to, each piece a plain `Create` with the exact source it shows. The
    /// text is sent as it is: token rules were applied at the edges of its message. Empty
    /// when there is nothing to send.
    pub(super) fn final_pieces(&mut self, payload: Payload, map: ContentMap) -> Vec<Outgoing> {
        if payload.text.trim().is_empty() {
            return Vec::new();
        }
        let pieces = self.split_mapped_on(payload.lane, &payload.text, Some(&map));
        self.finals_of(payload, pieces)
    }

    /// The final sends of `pieces` (texts and the source they show), each a plain `Create`
    /// with `payload`'s target, the response prefix on the first it belongs to.
    fn finals_of(
        &mut self,
        payload: Payload,
        pieces: Vec<(String, SmallVec<[SourceSpan; 2]>)>,
    ) -> Vec<Outgoing> {
        let mut out = Vec::new();
        for (piece, spans) in pieces {
            // Only a reopened fence and its own closer: the piece before showed that line
            // with its synthetic close, and counts it as its own.
            if piece.is_empty() {
                if let Some(last) = out.last_mut() {
                    let last: &mut Outgoing = last;
                    last.spans.extend(spans);
                }
                continue;
            }
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

    /// Drops the part of a host final that the model's text already says (module docs).
    fn reconcile_host_final(&self, payload: &mut Payload) {
        let final_ws: String = without_ws(&payload.text).collect();
        if final_ws.is_empty() {
            return;
        }
        // The model's text without whitespace, and where each message starts in it: the
        // candidates are the whole turn and every run of its last messages.
        let mut model = String::new();
        let mut starts = Vec::with_capacity(self.messages.len());
        for msg in &self.messages {
            starts.push(model.len());
            model.extend(without_ws(&msg.text));
        }
        for said in starts.iter().map(|&s| &model[s..]) {
            if said.is_empty() || !final_ws.starts_with(said) {
                continue;
            }
            // The final's text after the first `said.chars().count()` non-space chars; it
            // extends the model's text only if it goes on after whitespace ("OK" does not
            // say the start of "OKAY").
            let mut left = said.chars().count();
            let mut cut = payload.text.len();
            for (i, c) in payload.text.char_indices() {
                if left == 0 {
                    cut = i;
                    break;
                }
                if !c.is_whitespace() {
                    left -= 1;
                }
            }
            let rest = &payload.text[cut..];
            if rest.is_empty() || rest.starts_with(char::is_whitespace) {
                payload.text = rest.trim().to_owned();
                return;
            }
        }
    }
}

/// One text of the model's remainder, in source order.
enum FinalText {
    /// A text to split on its own: synthetic edges and the slice of the message it shows.
    Mapped(String, ContentMap),
    /// Pieces already split in the whole message (see `de_indented`).
    Split(Vec<(String, SmallVec<[SourceSpan; 2]>)>),
}

/// Whether a piece that starts at bytes `gap` of the message's `text` (read by `scanner`)
/// shows its lines de-indented: it starts in a list item's text or deep code that alone,
/// without the item, would read otherwise (see `text::dedent`).
fn de_indented(scanner: &MarkdownScanner, text: &str, gap: Range<usize>) -> bool {
    let line_start = gap.start == 0 || text.as_bytes()[gap.start - 1] == b'\n';
    // The item's column as the scanner followed the containers (see `SplitRun::emit_with`).
    let item = || scanner.item_column_at(gap.start);
    item_dedent(scanner, text, gap.start, gap.end, line_start, Some(item)).cols > 0
}

/// The inline delimiters a cut at `p` leaves open (emphasis, and an inline code span of one
/// or two backticks on one line), outermost first, as the chunker repairs them (it cannot
/// know, while streaming, that a span open over a line break will close: it cuts those
/// plainly, so a final does not reopen them either).
fn inline_open(scanner: &MarkdownScanner, p: usize) -> SpanDelims {
    let mut delims = scanner.emphasis_at(p);
    if let Some(code) = scanner
        .code_at(p)
        .filter(|c| c.end.is_some() && c.run < 3 && !c.crossed_line)
    {
        let mut run = SpanDelims::NONE;
        if !run.push(b'`', code.run) || !delims.extend(run) {
            return SpanDelims::NONE;
        }
    }
    delims
}

/// `text`'s chars without whitespace, for "equal ignoring whitespace".
fn without_ws(text: &str) -> impl Iterator<Item = char> + '_ {
    text.chars().filter(|c| !c.is_whitespace())
}

/// `gaps` (sorted, disjoint) without `cut`.
fn subtract(gaps: Vec<Range<usize>>, cut: &Range<usize>) -> Vec<Range<usize>> {
    let mut out = Vec::with_capacity(gaps.len() + 1);
    for g in gaps {
        // An empty cut strictly inside a gap splits it there.
        if g.end <= cut.start || cut.end <= g.start || (cut.is_empty() && cut.start == g.start) {
            out.push(g);
            continue;
        }
        if g.start < cut.start {
            out.push(g.start..cut.start);
        }
        if cut.end < g.end {
            out.push(cut.end..g.end);
        }
    }
    out
}

/// Where the model's text sits inside a text to be split: bytes `content` of it show the
/// message's cleaned text from `source_start` on (what lies outside `content` is synthetic:
/// a reopened fence line, a closing fence line).
#[derive(Clone, Debug)]
pub(super) struct ContentMap {
    pub(super) message: u32,
    content: std::ops::Range<usize>,
    source_start: usize,
    /// The text goes on inside a fence it does not reopen: the byte range of the fence's
    /// opening line in the message's cleaned text.
    pub(super) in_fence: Option<std::ops::Range<usize>>,
}

impl ContentMap {
    /// The map of a text that is exactly bytes `source_start..source_start + len` of
    /// message `message`'s cleaned text.
    pub(super) fn of_source(message: u32, source_start: usize, len: usize) -> ContentMap {
        ContentMap {
            message,
            content: 0..len,
            source_start,
            in_fence: None,
        }
    }

    /// The message and the byte of its cleaned text that byte `p` of the text shows, if it
    /// shows one.
    pub(super) fn source_of(&self, p: usize) -> Option<(u32, usize)> {
        self.content
            .contains(&p)
            .then(|| (self.message, self.source_start + (p - self.content.start)))
    }

    /// The source span that bytes `piece` of the text show, if any.
    pub(super) fn span_of(&self, piece: &std::ops::Range<usize>) -> Option<SourceSpan> {
        let start = piece.start.max(self.content.start);
        let end = piece.end.min(self.content.end);
        (start < end).then(|| SourceSpan {
            message: self.message,
            range: self.source_start + (start - self.content.start)
                ..self.source_start + (end - self.content.start),
            closes_fence: false,
        })
    }
}

/// The separator whitespace at the start of `range` of `text`, in bytes: all of it, unless
/// its end indents a line of code (four columns or more after a line break).
fn leading_separator(text: &str, range: std::ops::Range<usize>) -> usize {
    let whole = &text[range.clone()];
    let ws = whole.len() - whole.trim_start_matches([' ', '\t', '\r', '\n']).len();
    let line_start = range.start == 0 || text.as_bytes()[range.start - 1] == b'\n';
    let nl = whole[..ws].rfind('\n');
    let indent_at = nl.map_or(0, |i| i + 1);
    let code = || {
        is_code_indent(&whole[indent_at..ws])
            && is_indented_code_line(text, range.start + indent_at)
    };
    match nl.is_some() || line_start {
        true if code() => indent_at,
        _ => ws,
    }
}

#[cfg(test)]
mod tests {
    use super::subtract;

    #[test]
    #[allow(clippy::single_range_in_vec_init)]
    fn subtract_cuts_ranges() {
        assert_eq!(subtract(vec![0..10, 20..30], &(5..25)), vec![0..5, 25..30]);
        assert_eq!(subtract(vec![0..10], &(0..10)), vec![]);
        assert_eq!(subtract(vec![0..10], &(3..4)), vec![0..3, 4..10]);
        assert_eq!(subtract(vec![0..10], &(10..12)), vec![0..10]);
        assert_eq!(subtract(vec![0..10], &(4..4)), vec![0..4, 4..10]);
        assert_eq!(subtract(vec![0..10], &(0..0)), vec![0..10]);
    }
}
