//! Reply directives (SPEC §2): `MEDIA:` lines, `[[media:…]]`, `[[reply_to_current]]`,
//! `[[reply_to: ID]]` and `[[audio_as_voice]]`, found outside code, removed from the text and
//! reported as events in the order they appear. This module is the streaming parser; its
//! parts have their own modules: [`media`] (where a `MEDIA:` line starts and how its payload
//! splits into items), [`policy`] (which URLs and paths may be sent, under the host's
//! [`MediaPolicy`]), [`paths`] (local paths read lexically) and [`tidy`] (the whitespace
//! left where something was removed).
//!
//! **Code** is read as CommonMark reads it (the tag filter reads it the same way): syntax in
//! a fence or a closed inline code span is text. After a backtick run that has not closed
//! yet, a directive may still turn out to be in a span (its closing run comes) or not (the
//! paragraph ends first, and the run is literal): the parser holds it back until that is
//! decided, or until [`CODE_HOLD`] bytes have passed, when it stays text.
//!
//! **`MEDIA:` lines** are decided when their line break arrives. Each item of the line (see
//! [`media`]) is judged by [`policy`]: an allowed URL or path becomes a media event; a path
//! that is not allowed is removed and not sent; a URL that is not allowed, and anything
//! else, stays as text. A line with no media and nothing removed is prose and stays
//! untouched (`MEDIA: https://localhost/a.png` reads as written). Each refused reference is
//! counted once, when its line or bracket is decided ([`DirectiveParser::media_refused`]).
//!
//! **Bracket directives** `[[keyword]]` / `[[keyword: value]]`: keywords are matched ignoring
//! ASCII case, with spaces allowed around the keyword, the colon and the value. The reply tags
//! must start the text or a line, or follow whitespace; `[[media:…]]` and
//! `[[audio_as_voice]]` may appear anywhere. A `[[media:…]]` whose value is a URL that is
//! not allowed, or no reference at all, stays as text; one whose value is a local path that
//! is not allowed is removed, as for `MEDIA:`. A `[[` whose `]]` has not arrived is
//! held back until it does, the line ends, [`MAX_BRACKET_LEN`] bytes pass, or the message ends;
//! then it is text. Unknown keywords (`[[wiki]]`) are text at once.
//!
//! **Malformed reply tags at the start.** When a message's text begins (after whitespace
//! only) with a reply tag that is broken — `[[reply_to_current]` with one closing bracket,
//! `[[reply_to:` with no id or no `]]` before the line ends — the broken tag is removed and
//! takes no effect, as the newest OpenClaw does (`[[reply_to_current] Visible reply` →
//! `Visible reply`). Anywhere else such text is left as it is.
//!
//! **Reply target.** `[[reply_to: ID]]` sets an explicit target; the last explicit id wins.
//! `[[reply_to_current]]` sets the current message only while no explicit id was seen. The
//! target is sticky until [`DirectiveParser::reset`] (the next assistant message); a
//! [`DirectiveEvent::ReplyTo`] is emitted each time the effective target changes.

pub(crate) mod media;
pub(crate) mod paths;
pub(crate) mod policy;
mod tidy;

use std::ops::Range;

use memchr::memchr2;
use smallvec::SmallVec;

use self::media::{LineStart, media_items, media_line_start, unquote};
use self::policy::{Verdict, classify};
use self::tidy::LineTidy;
use super::tags::CODE_HOLD;
use super::{
    CodeState, CodeTracker, SETTLE_BATCH, find_byte2, is_ascii_ws, may_become, skip_blanks,
};
use crate::config::MediaPolicy;
use crate::payload::ReplyTarget;

/// The longest bracket directive, in bytes, from `[[` through `]]`.
pub(crate) const MAX_BRACKET_LEN: usize = 4096;

/// One step of the parser's output, in text order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum DirectiveEvent {
    /// Released text: this range of [`DirectiveOutput::text`].
    Text(Range<usize>),
    /// A media URL or local path to send, in place: text before it was released before it.
    Media(String),
    /// The reply target changed (it stays in force for the rest of the message).
    ReplyTo(ReplyTarget),
    /// `[[audio_as_voice]]` was seen for the first time in this message.
    AudioAsVoice,
}

/// Reusable output buffer of [`DirectiveParser`]: the released text and the ordered events.
/// [`DirectiveOutput::clear`] it after consuming; its capacity is kept.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct DirectiveOutput {
    /// All text released since the last clear.
    pub text: String,
    /// Events in order; adjacent text is merged into one [`DirectiveEvent::Text`]. A push
    /// of plain text releases one event: it is kept inline, in the engine's per-push cache
    /// lines, rather than in a heap buffer of its own.
    pub events: SmallVec<[DirectiveEvent; 1]>,
}

impl DirectiveOutput {
    /// An empty output.
    #[cfg(test)]
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Empties the output, keeping its capacity.
    #[inline]
    pub(crate) fn clear(&mut self) {
        self.text.clear();
        self.events.clear();
    }

    /// Whether nothing was released.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    #[inline]
    fn push_text(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        let start = self.text.len();
        self.text.push_str(s);
        let end = self.text.len();
        match self.events.last_mut() {
            Some(DirectiveEvent::Text(r)) if r.end == start => r.end = end,
            _ => self.events.push(DirectiveEvent::Text(start..end)),
        }
    }
}

/// What [`DirectiveParser::push_plain`] released.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PlainRelease {
    /// The text pushed, as it is.
    Whole,
    /// This stretch of the parser's buffer ([`DirectiveParser::released`]).
    Stretch(Range<usize>),
    /// What is in the output, if anything.
    Out,
}

/// Streaming directive parser. One per stream; [`DirectiveParser::reset`] at each new
/// assistant message. See the module docs for the rules.
///
/// Layout (`repr(C)`): what a push of plain text reads and writes comes first (the
/// position, the line state, the tidy flags, the input's buffer), the sticky directive
/// state last.
#[derive(Clone, Debug)]
#[repr(C)]
pub(crate) struct DirectiveParser {
    /// Bytes of `input.text` already decided.
    done: usize,
    /// The input byte just before `done` (`None` at the start of the message).
    prev_byte: Option<u8>,
    /// `done` is at the start of a line (a `MEDIA:` line may begin there).
    at_line_start: bool,
    reply_explicit: bool,
    audio_as_voice: bool,
    tidy: LineTidy,
    input: CodeTracker,
    reply_target: Option<ReplyTarget>,
    /// Which references may be sent (read only when a media directive is decided).
    policy: MediaPolicy,
    /// Media references refused so far (kept across messages: a count for the turn).
    refused: u64,
}

impl Default for DirectiveParser {
    fn default() -> Self {
        Self::new()
    }
}

/// What a `[[` turned out to be.
enum BracketOutcome {
    /// Not decided yet: wait for more text.
    Hold,
    /// A directive of this many bytes was applied and removed.
    Removed(usize),
    /// Text.
    Text,
}

impl DirectiveParser {
    /// A parser at the start of a message, with the default [`MediaPolicy`] (public URLs
    /// only, no local path).
    pub(crate) fn new() -> Self {
        Self::with_policy(MediaPolicy::default())
    }

    /// A parser at the start of a message that judges media references by `policy` (whose
    /// roots are already checked: see `MediaPolicy::checked`).
    pub(crate) fn with_policy(policy: MediaPolicy) -> Self {
        DirectiveParser {
            policy,
            refused: 0,
            input: CodeTracker::default(),
            done: 0,
            at_line_start: true,
            prev_byte: None,
            tidy: LineTidy::new(),
            reply_target: None,
            reply_explicit: false,
            audio_as_voice: false,
        }
    }

    /// How many media references were refused since the parser was made (across messages).
    pub(crate) fn media_refused(&self) -> u64 {
        self.refused
    }

    /// The reply target in force (sticky for the rest of the message).
    #[cfg(test)]
    pub(crate) fn reply_target(&self) -> Option<&ReplyTarget> {
        self.reply_target.as_ref()
    }

    /// Feeds the next piece of answer text; appends released text and events to `out`.
    pub(crate) fn push(&mut self, text: &str, out: &mut DirectiveOutput) {
        self.input.text.push_str(text);
        self.run(false, out);
    }

    /// Like [`DirectiveParser::push`] for text that `write` appends straight into the
    /// parser's own buffer, which saves copying it from a scratch buffer. `write` must only
    /// append. Nothing is parsed when it appends nothing (as a caller skips an empty push).
    pub(crate) fn push_with<R>(
        &mut self,
        write: impl FnOnce(&mut String) -> R,
        out: &mut DirectiveOutput,
    ) -> R {
        let (result, plain) = self.push_with_plain(write, out);
        if let Some(range) = plain {
            out.push_text(&self.input.text[range]);
        }
        result
    }

    /// [`DirectiveParser::push_with`], except that plain text is not copied into `out`: when
    /// what `write` appends is plain (mid-line, after decided text, no `[` or line break, no
    /// removal to tidy around), the text it releases is a stretch of the parser's own
    /// buffer, and that stretch is returned instead (`out` is left as it was). It is exactly
    /// the text `push_with` would have added to `out` as one text event, and stays readable
    /// with [`DirectiveParser::released`] until the parser is next changed.
    #[inline]
    pub(crate) fn push_with_plain<R>(
        &mut self,
        write: impl FnOnce(&mut String) -> R,
        out: &mut DirectiveOutput,
    ) -> (R, Option<Range<usize>>) {
        let before = self.input.text.len();
        let result = write(&mut self.input.text);
        let len = self.input.text.len();
        debug_assert!(len >= before, "write may only append");
        if len == before {
            return (result, None);
        }
        if self.done == before
            && !self.at_line_start
            && find_byte2(b'[', b'\n', &self.input.text.as_bytes()[before..]).is_none()
        {
            return (result, self.plain_appended(before, out));
        }
        self.run(false, out);
        (result, None)
    }

    /// Whether `text` (not empty), without `[` or a line break, is plain for this parser:
    /// all text so far is decided, and `text` goes on in the middle of a line or starts a
    /// line that cannot be a `MEDIA:` line (its first byte is neither the marker's `M` nor
    /// a space that may indent it).
    #[inline]
    pub(crate) fn takes_plain(&self, text: &str) -> bool {
        self.done == self.input.text.len()
            && (!self.at_line_start || !matches!(text.as_bytes()[0], b'M' | b' '))
    }

    /// [`DirectiveParser::push_with_plain`] of non-empty `text` without `[` or a line break,
    /// when [`DirectiveParser::takes_plain`]: the same output, without looking for them.
    /// When it releases `text` itself, whole and with nothing held after it, that is said
    /// ([`PlainRelease::Whole`]) and `out` is left as it is.
    #[inline(always)]
    pub(crate) fn push_plain(&mut self, text: &str, out: &mut DirectiveOutput) -> PlainRelease {
        debug_assert!(self.takes_plain(text));
        debug_assert!(find_byte2(b'[', b'\n', text.as_bytes()).is_none());
        // A line start was decided: no `MEDIA:` line (what `run` finds there first).
        self.at_line_start = false;
        let before = self.input.text.len();
        self.input.text.push_str(text);
        if self.tidy.passes_whole(text) {
            // What `plain_appended` does then, whether it hands back the stretch or, at a
            // settle batch, copies `text` into `out`: `text` is released as it is.
            self.tidy.passed_whole();
            let len = self.input.text.len();
            self.prev_byte = Some(self.input.text.as_bytes()[len - 1]);
            self.done = len;
            self.done -= self.input.settle(len);
            return PlainRelease::Whole;
        }
        match self.plain_appended(before, out) {
            Some(range) => PlainRelease::Stretch(range),
            None => PlainRelease::Out,
        }
    }

    /// Plain text was appended at `before`, after decided text, mid-line: what `run` does
    /// with it (its first and only round: no line start to look at, no `[` or line break to
    /// stop at), without the call. See [`DirectiveParser::push_with_plain`] for the return.
    #[inline(always)]
    fn plain_appended(&mut self, before: usize, out: &mut DirectiveOutput) -> Option<Range<usize>> {
        let len = self.input.text.len();
        self.prev_byte = Some(self.input.text.as_bytes()[len - 1]);
        self.done = len;
        // Below a settle batch nothing is dropped, so the stretch stays where it is.
        if len < SETTLE_BATCH
            && let Some(range) = self.tidy.plain(&self.input.text, before, len)
        {
            return Some(range);
        }
        self.tidy.text(&self.input.text[before..len], out);
        self.done -= self.input.settle(len);
        None
    }

    /// [`DirectiveParser::push`] of `text` (not empty) without `[` whose line breaks come at
    /// `last_nl` at the latest, when all text so far is decided, nothing was removed where
    /// the tidy would close the gap ([`LineTidy::pass_lines`]) and no line that starts in
    /// `text` (nor `text` at a line start) begins like a `MEDIA:` line (with `M` or a space
    /// that may indent it). Then `text` goes out as written but for the spaces at its end
    /// after its last line break, which are held: returns how many of its bytes go out.
    /// `None`, with nothing changed, when that is not so.
    #[inline]
    pub(crate) fn push_lines(&mut self, text: &str, last_nl: usize) -> Option<usize> {
        let b = text.as_bytes();
        debug_assert!(b[last_nl] == b'\n' && !b.contains(&b'['));
        let media_may_start = |i: usize| matches!(b.get(i), Some(b'M' | b' '));
        if self.done != self.input.text.len()
            || (self.at_line_start && media_may_start(0))
            || b[..=last_nl]
                .iter()
                .enumerate()
                .any(|(i, &c)| c == b'\n' && media_may_start(i + 1))
        {
            return None;
        }
        let released = self.tidy.pass_lines(b, last_nl)?;
        self.tidy.hold_spaces(&text[released..]);
        self.input.text.push_str(text);
        let len = self.input.text.len();
        self.at_line_start = last_nl + 1 == b.len();
        self.prev_byte = Some(b[b.len() - 1]);
        self.done = len;
        self.done -= self.input.settle(len);
        Some(released)
    }

    /// How many bytes the parser's buffer holds: while below [`SETTLE_BATCH`], none is
    /// dropped from it.
    #[inline]
    pub(crate) fn buffered(&self) -> usize {
        self.input.text.len()
    }

    /// The last `n` bytes pushed (they must still be buffered: see
    /// [`DirectiveParser::buffered`]).
    #[inline]
    pub(crate) fn recent(&self, n: usize) -> &str {
        &self.input.text[self.input.text.len() - n..]
    }

    /// Bytes `range` of the parser's buffer: text that [`DirectiveParser::push_with_plain`]
    /// released.
    #[inline]
    pub(crate) fn released(&self, range: Range<usize>) -> &str {
        &self.input.text[range]
    }

    /// A text boundary inside the message (`TextEnd`, a tool call, media): decides what is
    /// held back (a `[` that may start `[[…`, a `MEDIA:` line without its line break) as if
    /// nothing followed, so it goes out before the boundary.
    pub(crate) fn release(&mut self, out: &mut DirectiveOutput) {
        self.run(true, out);
    }

    /// Ends the message's text: decides everything held back (an unfinished `[[…` or a
    /// `MEDIA:` line without a line break). The reply target and audio flag stay readable
    /// until [`DirectiveParser::reset`].
    pub(crate) fn finish(&mut self, out: &mut DirectiveOutput) {
        self.run(true, out);
        self.tidy.finish(out);
        self.input.reset();
        self.done = 0;
        self.at_line_start = true;
        self.prev_byte = None;
    }

    /// Forgets the current message, sticky state included, keeping buffer capacity.
    pub(crate) fn reset(&mut self) {
        self.input.reset();
        self.done = 0;
        self.at_line_start = true;
        self.prev_byte = None;
        self.tidy.reset();
        self.reply_target = None;
        self.reply_explicit = false;
        self.audio_as_voice = false;
    }

    #[inline(never)]
    fn run(&mut self, at_end: bool, out: &mut DirectiveOutput) {
        loop {
            let len = self.input.text.len();
            if self.done >= len {
                break;
            }
            if self.at_line_start {
                let bytes = &self.input.text.as_bytes()[self.done..];
                match media_line_start(bytes, at_end) {
                    LineStart::Hold => break,
                    LineStart::NotMedia => self.at_line_start = false,
                    LineStart::Line {
                        marker,
                        end,
                        newline,
                    } => {
                        let (start, marker, end) = (self.done, self.done + marker, self.done + end);
                        // After an unmatched backtick run the line may be inside a span that
                        // closes later, or literal text once the paragraph ends: wait to see
                        // (still undecided past the look-ahead: left as text).
                        let state = self.input.code_state(marker, CODE_HOLD, at_end);
                        if state == CodeState::Pending {
                            break;
                        }
                        if state == CodeState::Text && self.media_line(start, marker, end, out) {
                            if newline {
                                self.tidy.newline(out);
                                self.done = end + 1;
                                self.prev_byte = Some(b'\n');
                            } else {
                                self.done = end;
                                self.at_line_start = false;
                            }
                            continue;
                        }
                        self.at_line_start = false;
                    }
                }
            }
            let bytes = self.input.text.as_bytes();
            let Some(i) = find_byte2(b'[', b'\n', &bytes[self.done..]) else {
                self.emit_text(self.done, len, out);
                self.done = len;
                break;
            };
            let p = self.done + i;
            let is_newline = bytes[p] == b'\n';
            self.emit_text(self.done, p, out);
            self.done = p;
            if is_newline {
                self.tidy.newline(out);
                self.done = p + 1;
                self.prev_byte = Some(b'\n');
                self.at_line_start = true;
                continue;
            }
            match self.bracket_at(p, at_end, out) {
                BracketOutcome::Hold => break,
                // A removed directive is invisible: `prev_byte` stays what preceded it, so
                // `[[audio_as_voice]][[reply_to_current]]` at a line start is two directives.
                BracketOutcome::Removed(n) => self.done = p + n,
                BracketOutcome::Text => {
                    self.emit_text(p, p + 1, out);
                    self.done = p + 1;
                }
            }
        }
        self.done -= self.input.settle(self.done);
    }

    /// Releases input bytes `start..end` (no line break among them) as text.
    #[inline]
    fn emit_text(&mut self, start: usize, end: usize, out: &mut DirectiveOutput) {
        if start < end {
            self.tidy.text(&self.input.text[start..end], out);
            self.prev_byte = Some(self.input.text.as_bytes()[end - 1]);
        }
    }

    /// Decides the `[` at `p`.
    fn bracket_at(&mut self, p: usize, at_end: bool, out: &mut DirectiveOutput) -> BracketOutcome {
        let bytes = self.input.text.as_bytes();
        match bytes.get(p + 1) {
            None if at_end => return BracketOutcome::Text,
            None => return BracketOutcome::Hold,
            Some(b'[') => {}
            Some(_) => return BracketOutcome::Text,
        }
        // As for `MEDIA:` lines: an open code span is decided first.
        match self.input.code_state(p, CODE_HOLD, at_end) {
            CodeState::Text => {}
            CodeState::Pending => return BracketOutcome::Hold,
            CodeState::Code | CodeState::Unresolved => return BracketOutcome::Text,
        }
        let bytes = &self.input.text.as_bytes()[p..];
        let (kind, value, len) = match match_bracket(bytes) {
            BracketMatch::Partial if !at_end => return BracketOutcome::Hold,
            BracketMatch::Partial | BracketMatch::NotDirective => {
                // A broken reply tag that begins the message is removed without effect.
                let leading = !self.tidy.released_text() && self.prev_byte.is_none_or(is_ascii_ws);
                return match malformed_reply_len(bytes).filter(|_| leading) {
                    Some(len) => {
                        self.tidy.removal();
                        BracketOutcome::Removed(len)
                    }
                    None => BracketOutcome::Text,
                };
            }
            BracketMatch::Directive { kind, value, len } => (kind, value, len),
        };
        // Values are ASCII-delimited ranges of valid UTF-8, so this slice is on boundaries.
        let value = &self.input.text[p + value.start..p + value.end];
        match kind {
            BracketKind::ReplyCurrent | BracketKind::ReplyTo => {
                if !self.prev_byte.is_none_or(is_ascii_ws) {
                    return BracketOutcome::Text;
                }
                if kind == BracketKind::ReplyTo {
                    let changed =
                        !matches!(&self.reply_target, Some(ReplyTarget::Id(id)) if id == value);
                    self.reply_explicit = true;
                    if changed {
                        self.reply_target = Some(ReplyTarget::Id(value.to_string()));
                        out.events
                            .push(DirectiveEvent::ReplyTo(ReplyTarget::Id(value.to_string())));
                    }
                } else if !self.reply_explicit && self.reply_target.is_none() {
                    self.reply_target = Some(ReplyTarget::Current);
                    out.events
                        .push(DirectiveEvent::ReplyTo(ReplyTarget::Current));
                }
            }
            BracketKind::AudioAsVoice => {
                if !self.audio_as_voice {
                    self.audio_as_voice = true;
                    out.events.push(DirectiveEvent::AudioAsVoice);
                }
            }
            BracketKind::Media => {
                let verdict = classify(unquote(value), &self.policy);
                self.refused += u64::from(verdict.is_refused());
                match verdict {
                    Verdict::Keep | Verdict::Refused => return BracketOutcome::Text,
                    Verdict::Drop => {}
                    Verdict::Send(item) => {
                        out.events.push(DirectiveEvent::Media(item.into_owned()));
                    }
                }
            }
        }
        self.tidy.removal();
        BracketOutcome::Removed(len)
    }

    /// Handles the `MEDIA:` line `start..end` whose marker is at `marker`. Returns false
    /// (and outputs nothing) when the line is prose.
    fn media_line(
        &mut self,
        start: usize,
        marker: usize,
        end: usize,
        out: &mut DirectiveOutput,
    ) -> bool {
        let line = &self.input.text[marker + b"MEDIA:".len()..end];
        // A line break written as CRLF: the CR belongs to the break, not to the last item.
        let line = line.strip_suffix('\r').unwrap_or(line);
        let items = media_items(line);
        let verdicts: Vec<Verdict<'_>> = items
            .iter()
            .map(|item| classify(&line[item.value.clone()], &self.policy))
            .collect();
        self.refused += verdicts.iter().filter(|v| v.is_refused()).count() as u64;
        if verdicts
            .iter()
            .all(|v| matches!(v, Verdict::Keep | Verdict::Refused))
        {
            return false;
        }
        let tidy = &mut self.tidy;
        tidy.text(&self.input.text[start..marker], out);
        tidy.removal();
        let mut pos = 0;
        for (item, verdict) in items.into_iter().zip(verdicts) {
            tidy.text(&line[pos..item.raw.start], out);
            match verdict {
                Verdict::Send(value) => {
                    out.events.push(DirectiveEvent::Media(value.into_owned()));
                    tidy.removal();
                }
                Verdict::Drop => tidy.removal(),
                Verdict::Keep | Verdict::Refused => tidy.text(&line[item.raw.clone()], out),
            }
            pos = item.raw.end;
        }
        tidy.text(&line[pos..], out);
        true
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BracketKind {
    ReplyCurrent,
    ReplyTo,
    AudioAsVoice,
    Media,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum BracketMatch {
    /// A directive of `len` bytes; `value` (trimmed, relative to the `[[`) is empty for
    /// keywords without one.
    Directive {
        kind: BracketKind,
        value: Range<usize>,
        len: usize,
    },
    Partial,
    NotDirective,
}

/// Keywords (lower case) and whether they take a `: value`.
const BRACKET_KEYWORDS: [(&[u8], BracketKind, bool); 4] = [
    (b"reply_to_current", BracketKind::ReplyCurrent, false),
    (b"reply_to", BracketKind::ReplyTo, true),
    (b"audio_as_voice", BracketKind::AudioAsVoice, false),
    (b"media", BracketKind::Media, true),
];

/// The length of a broken reply tag at the start of `s` (which starts with `[[` and is no
/// valid directive): the reply keyword, then a lone `]`, or a value without its `]]`, up to
/// the line's end. `None` when `s` is no reply tag at all.
fn malformed_reply_len(s: &[u8]) -> Option<usize> {
    let n = s.len().min(MAX_BRACKET_LEN);
    let mut i = skip_blanks(s, 2, n);
    let kw_start = i;
    while i < n && (s[i].is_ascii_alphabetic() || s[i] == b'_') {
        i += 1;
    }
    let kw = &s[kw_start..i];
    let takes_value = if kw.eq_ignore_ascii_case(b"reply_to") {
        true
    } else if kw.eq_ignore_ascii_case(b"reply_to_current") {
        false
    } else {
        return None;
    };
    i = skip_blanks(s, i, n);
    let line_end = |from: usize| {
        (from..n)
            .find(|&k| s[k] == b'\n' || s[k] == b'\r')
            .unwrap_or(n)
    };
    match s.get(i).filter(|_| i < n) {
        None | Some(b'\n' | b'\r') => Some(i),
        Some(b']') => Some(if s.get(i + 1) == Some(&b']') {
            i + 2
        } else {
            i + 1
        }),
        Some(b':') if takes_value => {
            let end = line_end(i + 1);
            match s[i + 1..end].iter().position(|&b| b == b']') {
                Some(k) if s.get(i + 2 + k) == Some(&b']') => Some(i + 3 + k),
                Some(k) => Some(i + 2 + k),
                None => Some(end),
            }
        }
        _ => None,
    }
}

/// Matches a bracket directive at the start of `s` (which starts with `[[`).
fn match_bracket(s: &[u8]) -> BracketMatch {
    let n = s.len().min(MAX_BRACKET_LEN);
    let ran_out = if s.len() >= MAX_BRACKET_LEN {
        BracketMatch::NotDirective
    } else {
        BracketMatch::Partial
    };
    let skip_spaces = |i: usize| skip_blanks(s, i, n);
    let mut i = skip_spaces(2);
    let kw_start = i;
    while i < n && (s[i].is_ascii_alphabetic() || s[i] == b'_') {
        i += 1;
    }
    let kw = &s[kw_start..i];
    if i == n {
        let could_be = may_become(kw, BRACKET_KEYWORDS.iter().map(|(full, _, _)| *full));
        return if could_be {
            ran_out
        } else {
            BracketMatch::NotDirective
        };
    }
    let Some(&(_, kind, takes_value)) = BRACKET_KEYWORDS
        .iter()
        .find(|(full, _, _)| full.eq_ignore_ascii_case(kw))
    else {
        return BracketMatch::NotDirective;
    };
    i = skip_spaces(i);
    if i == n {
        return ran_out;
    }
    if !takes_value {
        return match (s[i], s.get(i + 1).filter(|_| i + 1 < n)) {
            (b']', Some(b']')) => BracketMatch::Directive {
                kind,
                value: i..i,
                len: i + 2,
            },
            (b']', None) => ran_out,
            _ => BracketMatch::NotDirective,
        };
    }
    if s[i] != b':' {
        return BracketMatch::NotDirective;
    }
    let value_start = i + 1;
    let mut j = value_start;
    loop {
        let Some(k) = memchr2(b']', b'\n', &s[j..n]) else {
            return ran_out;
        };
        let at = j + k;
        if s[at] == b'\n' {
            return BracketMatch::NotDirective;
        }
        if at + 1 == n {
            return ran_out;
        }
        if s[at + 1] == b']' {
            let mut a = value_start;
            let mut b = at;
            while a < b && (s[a] == b' ' || s[a] == b'\t') {
                a += 1;
            }
            while b > a && (s[b - 1] == b' ' || s[b - 1] == b'\t') {
                b -= 1;
            }
            if a == b {
                return BracketMatch::NotDirective;
            }
            return BracketMatch::Directive {
                kind,
                value: a..b,
                len: at + 2,
            };
        }
        j = at + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Output flattened for comparison: text pieces and events in order.
    #[derive(Debug, PartialEq, Eq, Clone)]
    enum Ev {
        T(String),
        M(String),
        R(ReplyTarget),
        V,
    }

    /// The media roots the tests' local paths live under.
    fn test_policy() -> MediaPolicy {
        MediaPolicy::with_roots(["/tmp", "/path", "/Users", "C:\\Users"])
            .checked()
            .unwrap()
    }

    fn run_split(text: &str, cuts: &[usize]) -> Vec<Ev> {
        run_split_with(text, cuts, test_policy()).0
    }

    /// The events for `text` cut at `cuts`, under `policy`, and the count of refused
    /// references.
    fn run_split_with(text: &str, cuts: &[usize], policy: MediaPolicy) -> (Vec<Ev>, u64) {
        let mut p = DirectiveParser::with_policy(policy);
        let mut out = DirectiveOutput::new();
        let mut evs = Vec::new();
        let mut start = 0;
        let take = |out: &mut DirectiveOutput, evs: &mut Vec<Ev>| {
            for e in &out.events {
                let ev = match e {
                    DirectiveEvent::Text(r) => Ev::T(out.text[r.clone()].to_string()),
                    DirectiveEvent::Media(m) => Ev::M(m.clone()),
                    DirectiveEvent::ReplyTo(t) => Ev::R(t.clone()),
                    DirectiveEvent::AudioAsVoice => Ev::V,
                };
                // Merge text across pushes so the result does not depend on the split.
                match (evs.last_mut(), ev) {
                    (Some(Ev::T(prev)), Ev::T(s)) => prev.push_str(&s),
                    (_, ev) => evs.push(ev),
                }
            }
            out.clear();
        };
        for &c in cuts {
            p.push(&text[start..c], &mut out);
            take(&mut out, &mut evs);
            start = c;
        }
        p.push(&text[start..], &mut out);
        take(&mut out, &mut evs);
        p.finish(&mut out);
        take(&mut out, &mut evs);
        (evs, p.media_refused())
    }

    fn run(text: &str) -> Vec<Ev> {
        run_split(text, &[])
    }

    /// [`run_split`] as the engine feeds the parser: each piece without `[` through the
    /// plain paths where they take it ([`DirectiveParser::push_plain`] for a piece without
    /// a line break, [`DirectiveParser::push_lines`] for one with), through `push` where
    /// not.
    fn run_split_fast(text: &str, cuts: &[usize]) -> Vec<Ev> {
        let mut p = DirectiveParser::with_policy(test_policy());
        let mut out = DirectiveOutput::new();
        let mut evs: Vec<Ev> = Vec::new();
        let add_text = |evs: &mut Vec<Ev>, s: &str| match evs.last_mut() {
            _ if s.is_empty() => {}
            Some(Ev::T(prev)) => prev.push_str(s),
            _ => evs.push(Ev::T(s.to_string())),
        };
        let take = |out: &mut DirectiveOutput, evs: &mut Vec<Ev>| {
            for e in &out.events {
                match e {
                    DirectiveEvent::Text(r) => add_text(evs, &out.text[r.clone()]),
                    DirectiveEvent::Media(m) => evs.push(Ev::M(m.clone())),
                    DirectiveEvent::ReplyTo(t) => evs.push(Ev::R(t.clone())),
                    DirectiveEvent::AudioAsVoice => evs.push(Ev::V),
                }
            }
            out.clear();
        };
        let mut bounds: Vec<usize> = cuts.to_vec();
        bounds.push(text.len());
        let mut start = 0;
        for end in bounds {
            let piece = &text[start..end];
            start = end;
            if piece.is_empty() || piece.contains('[') {
                p.push(piece, &mut out);
            } else if let Some(last_nl) = piece.rfind('\n') {
                match p.push_lines(piece, last_nl) {
                    Some(n) => add_text(&mut evs, &piece[..n]),
                    None => p.push(piece, &mut out),
                }
            } else if p.takes_plain(piece) {
                match p.push_plain(piece, &mut out) {
                    PlainRelease::Whole => add_text(&mut evs, piece),
                    PlainRelease::Stretch(r) => add_text(&mut evs, p.released(r)),
                    PlainRelease::Out => {}
                }
            } else {
                p.push(piece, &mut out);
            }
            take(&mut out, &mut evs);
        }
        p.finish(&mut out);
        take(&mut out, &mut evs);
        evs
    }

    /// The plain paths give what `push` gives: whole texts, a char at a time, and lines
    /// after removals, blank lines, CRLF, held spaces and `MEDIA:` lines, at every split.
    #[test]
    fn plain_paths_match_push() {
        let texts = [
            "a line\nand another  \n\n\nthird\r\nlast \t",
            "[[audio_as_voice]]\n\n\ntext after a removed line\n  \nx",
            "one [[reply_to_current]] two  \nthree\n\nMEDIA: https://example.com/a.png\nfour",
            "Mind the gap\n MEDIA: https://example.com/b.png\nM\n  \t\n\nend",
            "   \n\t\nword\n",
            "a\n\n[[audio_as_voice]]\n\nb\nc\n[[audio_as_voice]]\n\nd",
        ];
        for text in texts {
            let expected = run(text);
            let chars: Vec<usize> = text.char_indices().map(|(i, _)| i).skip(1).collect();
            assert_eq!(
                run_split_fast(text, &chars),
                expected,
                "char by char {text:?}"
            );
            assert_eq!(run_split_fast(text, &[]), expected, "whole {text:?}");
            for (i, _) in text.char_indices().skip(1) {
                assert_eq!(
                    run_split_fast(text, &[i]),
                    expected,
                    "split at {i} of {text:?}"
                );
                for (j, _) in text.char_indices().skip(i + 1) {
                    assert_eq!(
                        run_split_fast(text, &[i, j]),
                        expected,
                        "split at {i}, {j} of {text:?}"
                    );
                }
            }
        }
    }

    fn run_chars(text: &str) -> Vec<Ev> {
        let cuts: Vec<usize> = text.char_indices().map(|(i, _)| i).skip(1).collect();
        run_split(text, &cuts)
    }

    fn check_all_splits(text: &str, expected: &[Ev]) {
        assert_eq!(run(text), expected, "whole {text:?}");
        for (i, _) in text.char_indices().skip(1) {
            assert_eq!(run_split(text, &[i]), expected, "split at {i} of {text:?}");
        }
        assert_eq!(run_chars(text), expected, "char by char {text:?}");
    }

    fn t(s: &str) -> Ev {
        Ev::T(s.to_string())
    }
    fn m(s: &str) -> Ev {
        Ev::M(s.to_string())
    }
    fn id(s: &str) -> Ev {
        Ev::R(ReplyTarget::Id(s.to_string()))
    }

    /// The directive stage reads code the way the tag stage does (see the tag filter's test
    /// of the same name): a directive inside a code span that follows an unmatched backtick
    /// run is text, also when the stage has dropped decided text in between.
    #[test]
    fn a_directive_in_code_after_an_unmatched_run_stays_text_past_the_drop_point() {
        let tails = [
            "a ```` b `[[audio_as_voice]]` c\n\nafter\n",
            "a ```` b\n`x [[reply_to_current]] `y\n\nafter\n",
        ];
        for tail in tails {
            for pad in (crate::stage::SETTLE_BATCH / 2..crate::stage::SETTLE_BATCH * 3).step_by(7) {
                let text = format!("{}{tail}", "w ".repeat(pad / 2));
                let expected = [t(&text)];
                assert_eq!(run(&text), expected, "whole, pad {pad}, {tail:?}");
                assert_eq!(run_chars(&text), expected, "chars, pad {pad}, {tail:?}");
            }
        }
    }

    #[test]
    fn media_line_with_url() {
        check_all_splits(
            "Here is the chart.\n\nMEDIA: https://files.example.com/a.png\n\nIt grew.",
            &[
                t("Here is the chart.\n\n"),
                m("https://files.example.com/a.png"),
                t("It grew."),
            ],
        );
        check_all_splits(
            "A\nMEDIA:https://cdn.example.org/x.jpg\nB",
            &[t("A\n"), m("https://cdn.example.org/x.jpg"), t("B")],
        );
        check_all_splits(
            "   MEDIA: https://example.com/v.mp4",
            &[m("https://example.com/v.mp4")],
        );
    }

    #[test]
    fn media_line_several_items_and_quoted() {
        check_all_splits(
            "MEDIA: https://a.example.com/1.png /tmp/out/2.png /Users/me/3.png\nok",
            &[
                m("https://a.example.com/1.png"),
                m("/tmp/out/2.png"),
                m("/Users/me/3.png"),
                t("ok"),
            ],
        );
        check_all_splits(
            "MEDIA: \"/tmp/my chart.png\"\nok",
            &[m("/tmp/my chart.png"), t("ok")],
        );
        check_all_splits("MEDIA: C:\\Users\\me\\a.png", &[m("C:\\Users\\me\\a.png")]);
    }

    #[test]
    fn invalid_urls_stay_invalid_paths_go() {
        // An invalid URL stays as text: the line is prose.
        let line = "MEDIA: https://localhost/a.png\nnext";
        check_all_splits(line, &[t(line)]);
        // Mixed: the good one is sent, the bad URL stays, the bad path goes.
        check_all_splits(
            "MEDIA: https://ok.example.com/a.png https://127.0.0.1/b.png ../etc/passwd\nnext",
            &[
                m("https://ok.example.com/a.png"),
                t("https://127.0.0.1/b.png\nnext"),
            ],
        );
        // A traversal path alone: removed, nothing sent, line gone.
        check_all_splits("a\nMEDIA: /srv/../etc/shadow\nb", &[t("a\nb")]);
    }

    #[test]
    fn prose_and_code_are_not_directives() {
        for text in [
            "The MEDIA: tag attaches files.",
            "MEDIA: is how you attach things",
            "Media: https://example.com/a.png",
            "    MEDIA: https://example.com/a.png",
            "```\nMEDIA: https://example.com/a.png\n```\n",
            "```md\n[[reply_to_current]] [[media:https://example.com/a.png]]\n```",
            "Write `[[audio_as_voice]]` to send voice.",
            "a[[reply_to_current]]",
            "[[wiki link]] and [[unknown]]",
            "[[media: https://localhost/x.png]]",
            "x [[reply_to: ]]",
            "x [[reply_to_current",
            "Visible reply\n[[reply_to_current] literally",
            "[[reply_to_currently]]",
            "x [[reply_to: abc\n]]",
            "MEDI",
            "[",
            "[[",
        ] {
            check_all_splits(text, &[t(text)]);
        }
    }

    #[test]
    fn broken_reply_tags_at_the_start_are_removed_without_effect() {
        check_all_splits("[[reply_to_current] Visible reply", &[t("Visible reply")]);
        check_all_splits("[[reply_to:", &[]);
        check_all_splits("  [[reply_to: ]] Hi", &[t("Hi")]);
        check_all_splits("[[reply_to: abc\nHello", &[t("Hello")]);
        check_all_splits("[[reply_to: abc] Hello", &[t("Hello")]);
        check_all_splits("[[Reply_To_Current\nHello", &[t("Hello")]);
        // In code, or after text, such text stays.
        let fenced = "```text\n[[reply_to_current]\n```";
        check_all_splits(fenced, &[t(fenced)]);
        // A valid tag after a broken one still counts.
        check_all_splits(
            "[[reply_to_current] [[reply_to: 7]] Hi",
            &[id("7"), t("Hi")],
        );
    }

    #[test]
    fn media_items_as_the_newest_openclaw_reads_them() {
        check_all_splits(
            "See:\nMEDIA: https://example.com/a.png,\nok",
            &[t("See:\n"), m("https://example.com/a.png"), t("ok")],
        );
        check_all_splits(
            "MEDIA: https://example.com/a.png)",
            &[m("https://example.com/a.png")],
        );
        check_all_splits(
            "MEDIA:/path/to/image.png\"}],\"details\":{\"provider\":\"openai\"}",
            &[m("/path/to/image.png")],
        );
        check_all_splits(
            "MEDIA:'https://example.com/v.mp4?token=it's' /tmp/second.png",
            &[
                m("https://example.com/v.mp4?token=it's"),
                m("/tmp/second.png"),
            ],
        );
        check_all_splits(
            "MEDIA:/tmp/project screenshots/../../.env /tmp/safe/second.png\nok",
            &[m("/tmp/safe/second.png"), t("ok")],
        );
        check_all_splits("MEDIA:/tmp/project screenshots/../../.env", &[]);
        check_all_splits(
            "MEDIA:/Users/pete/My Files/render final.png",
            &[m("/Users/pete/My Files/render final.png")],
        );
        check_all_splits(
            "MEDIA:[\"/tmp/a.png\",\"/tmp/b.png\"]",
            &[m("/tmp/a.png"), m("/tmp/b.png")],
        );
        check_all_splits(
            "MEDIA:\"/tmp/first.png\" \"second\"",
            &[m("/tmp/first.png"), t("\"second\"")],
        );
    }

    #[test]
    fn reply_to_split_and_sticky() {
        let mut p = DirectiveParser::new();
        let mut out = DirectiveOutput::new();
        p.push("Hi [[repl", &mut out);
        assert_eq!(out.text, "Hi");
        assert!(p.reply_target().is_none());
        p.push("y_to: abc]] there", &mut out);
        assert_eq!(p.reply_target(), Some(&ReplyTarget::Id("abc".into())));
        p.push(" and [[reply_to_current]] more", &mut out);
        // An explicit id outranks reply_to_current.
        assert_eq!(p.reply_target(), Some(&ReplyTarget::Id("abc".into())));
        p.finish(&mut out);
        assert_eq!(out.text, "Hi there and more");
        assert_eq!(p.reply_target(), Some(&ReplyTarget::Id("abc".into())));
        p.reset();
        assert!(p.reply_target().is_none());

        check_all_splits(
            "[[Reply_To : 1]] a [[ reply_to: 2 ]]\nb",
            &[id("1"), t("a"), id("2"), t("\nb")],
        );
        check_all_splits(
            "[[reply_to_current]] Here is last week's chart.",
            &[Ev::R(ReplyTarget::Current), t("Here is last week's chart.")],
        );
    }

    #[test]
    fn adjacent_directives_and_crlf() {
        check_all_splits(
            "[[audio_as_voice]][[reply_to_current]]\r\nHi\r\n",
            &[Ev::V, Ev::R(ReplyTarget::Current), t("Hi\r\n")],
        );
        check_all_splits(
            "x\r\nMEDIA: /tmp/a.png\r\ny",
            &[t("x\r\n"), m("/tmp/a.png"), t("y")],
        );
    }

    /// Like [`check_all_splits`] under `policy`, with the count of refused references.
    fn check_policy(text: &str, policy: &MediaPolicy, expected: &[Ev], refused: u64) {
        let policy = policy.clone().checked().unwrap();
        let want = (expected.to_vec(), refused);
        assert_eq!(
            run_split_with(text, &[], policy.clone()),
            want,
            "whole {text:?}"
        );
        for (i, _) in text.char_indices().skip(1) {
            let got = run_split_with(text, &[i], policy.clone());
            assert_eq!(got, want, "split at {i} of {text:?}");
        }
        let cuts: Vec<usize> = text.char_indices().map(|(i, _)| i).skip(1).collect();
        assert_eq!(
            run_split_with(text, &cuts, policy),
            want,
            "char by char {text:?}"
        );
    }

    #[test]
    fn refused_references_what_text_remains_and_the_count() {
        let default = MediaPolicy::default();
        // Local paths without roots: removed, nothing sent, counted once each.
        check_policy("a\nMEDIA: ~/.ssh/id_rsa\nb", &default, &[t("a\nb")], 1);
        check_policy("a\nMEDIA: /etc/shadow\nb", &default, &[t("a\nb")], 1);
        check_policy(
            "MEDIA: /tmp/a.png https://example.com/b.png\nok",
            &default,
            &[m("https://example.com/b.png"), t("ok")],
            1,
        );
        check_policy(
            "See [[media:/etc/passwd]] now",
            &default,
            &[t("See now")],
            1,
        );
        // A refused URL stays as written; alone on its line, the marker stays too.
        let line = "MEDIA: https://localhost/a.png\nnext";
        check_policy(line, &default, &[t(line)], 1);
        check_policy(
            "MEDIA: https://10.0.0.1/a.png /etc/shadow\nnext",
            &default,
            &[t("https://10.0.0.1/a.png\nnext")],
            2,
        );
        let bracket = "x [[media: https://169.254.169.254/latest]] y";
        check_policy(bracket, &default, &[t(bracket)], 1);
        // `http://` is media unless refused.
        let http = "MEDIA: http://example.com/a.png\nok";
        check_policy(http, &default, &[m("http://example.com/a.png"), t("ok")], 0);
        let no_http = MediaPolicy {
            allow_http: false,
            ..MediaPolicy::default()
        };
        check_policy(http, &no_http, &[t(http)], 1);
        // Words are not references: not counted.
        let prose = "MEDIA: is how you attach things\n[[media: the chart]]";
        check_policy(prose, &default, &[t(prose)], 0);
        // Under a root: sent resolved; outside it: removed.
        let rooted = MediaPolicy::with_roots(["/srv/media"]);
        check_policy(
            "MEDIA: /srv/media/a/../b.png /srv/media/../../etc/passwd\nok",
            &rooted,
            &[m("/srv/media/b.png"), t("ok")],
            1,
        );
        check_policy(
            "[[media:file:///srv/media/a%20b.png]][[media:file:///etc/passwd]]",
            &rooted,
            &[m("/srv/media/a b.png")],
            1,
        );
    }

    #[test]
    fn bracket_media_and_audio() {
        check_all_splits(
            "See [[media:https://example.com/a.ogg]] now [[audio_as_voice]]",
            &[t("See"), m("https://example.com/a.ogg"), t(" now"), Ev::V],
        );
        check_all_splits("[[media: \"/tmp/a b.png\" ]]", &[m("/tmp/a b.png")]);
    }

    #[test]
    fn tidy_lines() {
        check_all_splits(
            "[[reply_to_current]]\nHello",
            &[Ev::R(ReplyTarget::Current), t("Hello")],
        );
        check_all_splits(
            "Hello [[audio_as_voice]]\nWorld",
            &[t("Hello"), Ev::V, t("\nWorld")],
        );
        check_all_splits(
            "P1\n\n[[audio_as_voice]]\n\nP2",
            &[t("P1\n\n"), Ev::V, t("P2")],
        );
        check_all_splits(
            "P1\n[[audio_as_voice]]\n\nP2",
            &[t("P1\n"), Ev::V, t("\nP2")],
        );
        // Hard line breaks and blank lines without directives are kept.
        check_all_splits("a  \nb\n\n\n  \nc   ", &[t("a  \nb\n\n\n  \nc   ")]);
    }

    #[test]
    fn sample_reply() {
        let text = "[[reply_to_current]] Here is last week's sales chart.\n\nMEDIA: https://files.example.com/charts/sales-week-47.png\n\nSales grew 75%.\n\nThe raw numbers:\n\nMEDIA: https://files.example.com/exports/sales-week-47.csv\n\nSummary.";
        check_all_splits(
            text,
            &[
                Ev::R(ReplyTarget::Current),
                t("Here is last week's sales chart.\n\n"),
                m("https://files.example.com/charts/sales-week-47.png"),
                t("Sales grew 75%.\n\nThe raw numbers:\n\n"),
                m("https://files.example.com/exports/sales-week-47.csv"),
                t("Summary."),
            ],
        );
    }

    #[test]
    fn long_plain_text_keeps_buffer_small() {
        let mut p = DirectiveParser::new();
        let mut out = DirectiveOutput::new();
        let para = "word word word word word word word word word word word word.\n";
        for _ in 0..2000 {
            for piece in para.as_bytes().chunks(4) {
                p.push(std::str::from_utf8(piece).unwrap(), &mut out);
                // Bounded by the tracker's batch plus one delta, however long the text.
                let bound = crate::stage::SETTLE_BATCH + 64;
                assert!(p.input.text.len() < bound, "{}", p.input.text.len());
            }
            out.clear();
        }
    }

    fn directive_text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            "[a-z \\[\\]:/.`\n]{0,8}",
            Just("MEDIA: https://example.com/a.png".to_string()),
            Just("MEDIA: ../x".to_string()),
            Just("MEDIA: https://localhost/a".to_string()),
            Just("MEDIA:".to_string()),
            Just("[[reply_to_current]]".to_string()),
            Just("[[reply_to: 42]]".to_string()),
            Just("[[audio_as_voice]]".to_string()),
            Just("[[media:/tmp/x.png]]".to_string()),
            Just("\n".to_string()),
            Just("  ".to_string()),
            Just("```\n".to_string()),
            Just("`".to_string()),
            Just("\n\n".to_string()),
            Just("\r\n".to_string()),
            Just("é".to_string()),
        ];
        prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
    }

    proptest! {
        #[test]
        fn split_invariant(text in directive_text()) {
            prop_assert_eq!(run_chars(&text), run(&text));
        }

        #[test]
        fn random_splits_invariant(text in directive_text(), cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..6)) {
            let cuts = crate::stage::tests::cuts_in(&text, &cuts);
            prop_assert_eq!(run_split(&text, &cuts), run(&text));
        }

        #[test]
        fn plain_paths_match_push_on_random_splits(text in directive_text(), cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..12)) {
            let cuts = crate::stage::tests::cuts_in(&text, &cuts);
            prop_assert_eq!(run_split_fast(&text, &cuts), run(&text));
        }

        #[test]
        fn text_without_directives_passes_through(text in "[^\\[M]{0,200}") {
            let expected = if text.is_empty() { vec![] } else { vec![Ev::T(text.clone())] };
            prop_assert_eq!(run(&text), expected.clone());
            prop_assert_eq!(run_chars(&text), expected);
        }

        #[test]
        fn no_panic_on_anything(text in any::<String>()) {
            let _ = run_chars(&text);
            let _ = run(&text);
        }
    }
}
