//! The engine's stages: each a plain struct with `&mut self` methods and its own tests,
//! composed by the engine. Besides the text core (`crate::text`), they are: delta assembly
//! ([`assembly`]), the coalescer ([`coalescer`]), the dispatcher ([`dispatch`]) with its
//! delivery ledger ([`ledger`]) and response prefix ([`prefix`]), and the text filters applied
//! to each assistant message before chunking (SPEC §2), in the order the engine runs them
//! (the live preview, [`preview`], sits beside the chunker when it is on):
//!
//! 1. [`TagFilter`](tags::TagFilter): thinking tags and `<final>` (reasoning is routed away from the answer);
//! 2. [`DirectiveParser`](directives::DirectiveParser): `MEDIA:` lines, `[[media:…]]`, `[[reply_to…]]`, `[[audio_as_voice]]`;
//! 3. [`TokenGate`](tokens::TokenGate): the silent token (`NO_REPLY`) and the heartbeat token (`HEARTBEAT_OK`).
//!
//! Every stage is streaming: it takes the message's text in deltas of any size, holds back
//! only the few bytes that might still turn into syntax it removes, and gives the same output
//! however the text was split. Each appends into buffers the caller owns and reuses, so a
//! push of plain text allocates nothing once those buffers are warm.
//!
//! Wiring, per assistant message: push each delta into the [`TagFilter`](tags::TagFilter) (answer and
//! reasoning come out), the answer into the [`DirectiveParser`](directives::DirectiveParser) (ordered text and directive
//! events come out), and each text event into the [`TokenGate`](tokens::TokenGate). Before handing a
//! [`DirectiveEvent::Media`](directives::DirectiveEvent::Media) (or a tool start) to the chunker, call [`TokenGate::flush`](tokens::TokenGate::flush) so
//! the text before it leaves first. At message end call `finish` on all three, in order,
//! feeding what each releases to the next.

pub(crate) mod assembly;
pub(crate) mod coalescer;
pub(crate) mod directives;
pub(crate) mod dispatch;
pub(crate) mod ledger;
pub(crate) mod prefix;
pub(crate) mod preview;
pub(crate) mod tags;
pub(crate) mod tokens;

#[cfg(test)]
mod tests;

use crate::text::markdown::MarkdownScanner;

/// The recent input of a stage plus the Markdown scanner that tells which of its bytes are
/// code. Both stages that must ignore syntax inside code (tags and directives) keep one.
///
/// The stage appends each delta to `text`, asks [`CodeTracker::code_state`] about candidate
/// bytes in increasing order, and reports with [`CodeTracker::settle`] how far it has decided;
/// bytes that neither the stage nor the scanner needs any more are then dropped from the
/// front. The scanner only ever looks at text up to a fixed bound past the byte being asked
/// about, so whether a byte is code depends on the text up to that bound, never on how much
/// text has arrived beyond it: that keeps every stage independent of how its input was split.
///
/// Layout (`repr(C)`): `text`, which every push appends to, first; the scanner is read only
/// when a candidate byte (a `<`, a `[[`) comes or a batch of text is settled.
#[derive(Clone, Debug)]
#[repr(C)]
pub(crate) struct CodeTracker {
    /// Input not yet dropped; positions handed out are indices into it.
    pub(crate) text: String,
    scanner: MarkdownScanner,
}

/// What [`CodeTracker::code_state`] knows about a byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CodeState {
    /// In fenced code or in a closed inline code span.
    Code,
    /// Outside code (an unmatched backtick run before it is literal text).
    Text,
    /// In an inline code span or a possible fence line that is still open: wait for more.
    Pending,
    /// Still open after the look-ahead limit: the caller decides, failing closed.
    Unresolved,
}

/// The first index at or after `i` (and before `end`) that is not a space or a tab: the
/// blanks that tags and bracket directives allow inside their brackets.
pub(crate) fn skip_blanks(s: &[u8], mut i: usize, end: usize) -> usize {
    while i < end && (s[i] == b' ' || s[i] == b'\t') {
        i += 1;
    }
    i
}

/// Whether the scanner has decided that byte `p` is code (`Some(true)`: in a fence or in a
/// closed inline code span) or text (`Some(false)`), or not yet (`None`: in an inline code
/// span or on a possible fence line that is still open).
fn decided_code(scanner: &MarkdownScanner, p: usize) -> Option<bool> {
    if scanner.fence_at(p).is_some() {
        return Some(true);
    }
    match scanner.code_at(p) {
        Some(span) if span.end.is_some() => Some(true),
        Some(_) => None,
        None if scanner.in_undecided_fence_line(p) => None,
        None => Some(false),
    }
}

/// Whether `word`, cut short by the end of the text so far, may still grow into one of
/// `names` (ASCII case ignored): then the stage holds it back instead of releasing it.
pub(crate) fn may_become<'n>(word: &[u8], mut names: impl Iterator<Item = &'n [u8]>) -> bool {
    names.any(|full| full.len() >= word.len() && full[..word.len()].eq_ignore_ascii_case(word))
}

impl Default for CodeTracker {
    fn default() -> Self {
        CodeTracker {
            text: String::new(),
            scanner: MarkdownScanner::with_late_pairs(),
        }
    }
}

/// How many decided bytes a [`CodeTracker`] holds before it scans and drops them.
pub(crate) const SETTLE_BATCH: usize = 256;

impl CodeTracker {
    pub(crate) fn reset(&mut self) {
        self.text.clear();
        self.scanner.reset();
    }

    /// Whether the ASCII byte at `p` is code, looking ahead as far as needed (at most `hold`
    /// bytes past `p`) to settle an inline code span or a possible fence line that is still
    /// open at `p`. CommonMark decides those only later: a span is code once its closing run
    /// arrives and literal text if its block ends first; a line that starts like a fence is
    /// decided at its end. `at_end`: the text ends here for now (a boundary inside the message
    /// or its end): what is still open is decided as if nothing followed (an open span is then
    /// literal), without changing how later text will be read.
    ///
    /// The answer depends only on `text[..p + hold]`, never on how much text has arrived
    /// beyond that, so a stage that waits on [`CodeState::Pending`] stays independent of how
    /// its input was split. Must be asked in increasing order of `p` (the same `p` again is
    /// fine), never for bytes before the point last passed to [`CodeTracker::settle`].
    pub(crate) fn code_state(&mut self, p: usize, hold: usize, at_end: bool) -> CodeState {
        debug_assert!(self.text.as_bytes()[p].is_ascii());
        let bounded = self.text.len() >= p + hold;
        let mut limit = if bounded { p + hold } else { self.text.len() };
        // The bound may fall inside a multi-byte char: look at the text up to the char
        // before it (the scanner only reacts to ASCII bytes, and the text ends on a char
        // boundary, so this depends on the text up to the bound just the same).
        while !self.text.is_char_boundary(limit) {
            limit -= 1;
        }
        if self.scanner.scanned() < limit {
            self.scanner.scan(&self.text[..limit]);
        }
        match decided_code(&self.scanner, p) {
            Some(true) => CodeState::Code,
            Some(false) => CodeState::Text,
            None if bounded => CodeState::Unresolved,
            None if !at_end => CodeState::Pending,
            None => {
                // The text ends here: decide as if nothing followed (an open span is then
                // literal, a possible fence line is decided). On a copy of the scanner: at a
                // boundary inside the message (`release`) the text goes on, and ending the
                // scanner's line for good made backticks that continue the line read as a
                // fence opener, so the boundary changed how the text after it was read.
                let mut ended = self.scanner.clone();
                ended.finish(&self.text);
                ended.end_block(&self.text);
                match decided_code(&ended, p) {
                    Some(true) => CodeState::Code,
                    _ => CodeState::Text,
                }
            }
        }
    }

    /// The stage has decided every byte before `done` (a char boundary). Scans up to it and
    /// drops the bytes nobody needs. Returns how many bytes were dropped from the front: the
    /// stage subtracts that from its own positions.
    ///
    /// Dropping is amortised: the retained tail is moved only when at least as many bytes go
    /// as stay, so the cost over a stream stays linear even while a long line must be kept
    /// (the scanner needs a line that may be a fence line until its end).
    ///
    /// Inlined for the common case, which is a single comparison: below [`SETTLE_BATCH`]
    /// nothing is dropped, so nothing needs scanning yet either: the scanner catches up in one
    /// batch (here or at the next `code_state` question) instead of a few bytes at a time on
    /// every push, and the front is moved rarely.
    #[inline]
    pub(crate) fn settle(&mut self, done: usize) -> usize {
        if done < SETTLE_BATCH {
            return 0;
        }
        self.settle_batch(done)
    }

    /// [`CodeTracker::settle`] once a batch of decided bytes has gathered.
    #[inline(never)]
    fn settle_batch(&mut self, done: usize) -> usize {
        if self.scanner.scanned() < done {
            self.scanner.scan(&self.text[..done]);
        }
        let scanned = self.scanner.scanned();
        let scanner_keep = if self.scanner.open_fence().is_some()
            || self.scanner.in_undecided_fence_line(scanned)
        {
            self.scanner.line_start()
        } else {
            scanned
        };
        // An inline code span still open may turn out unmatched when its block ends; the
        // scanner then pairs the backtick runs after its opening run, and those must all
        // still be here (dropping the opening run made the pairing start in the wrong place,
        // so a tag inside a later span read as a tag or not depending on the split).
        let scanner_keep = self
            .scanner
            .open_code_start()
            .map_or(scanner_keep, |start| scanner_keep.min(start));
        // Keep at least one decided byte: the scanner clamps the start of a span that began
        // in dropped text to 0, and "inside" means strictly after the start, so every byte
        // still to be asked about must sit at index 1 or later.
        //
        // Never cut through a backtick run either: the scanner may still be counting it, and
        // it computes a span's end from the run's start.
        let mut n = scanner_keep.min(done.saturating_sub(1));
        while !self.text.is_char_boundary(n) {
            n -= 1;
        }
        let bytes = self.text.as_bytes();
        while n > 0 && bytes[n - 1] == b'`' {
            n -= 1;
        }
        if n == 0 || n < self.text.len() - n {
            return 0;
        }
        self.text.drain(..n);
        self.scanner.drain(n);
        n
    }
}

/// Below this many bytes the stages search with a plain loop: `memchr`'s SIMD set-up costs
/// more than it saves on the few bytes of a typical delta.
const SHORT_SEARCH: usize = 16;

/// The index of the first `a` in `hay`, as `memchr::memchr` gives it.
#[inline]
pub(crate) fn find_byte(a: u8, hay: &[u8]) -> Option<usize> {
    if hay.len() < SHORT_SEARCH {
        hay.iter().position(|&b| b == a)
    } else {
        memchr::memchr(a, hay)
    }
}

/// The index of the first `a` or `b` in `hay`, as `memchr::memchr2` gives it.
#[inline]
pub(crate) fn find_byte2(a: u8, b: u8, hay: &[u8]) -> Option<usize> {
    if hay.len() < SHORT_SEARCH {
        hay.iter().position(|&c| c == a || c == b)
    } else {
        memchr::memchr2(a, b, hay)
    }
}

/// [`stage_syntax`]: the delta holds a `<` (a tag, [`tags`]) or a `[` (a bracket
/// directive, [`directives`]).
pub(crate) const TAG_OR_BRACKET: u8 = 1;
/// [`stage_syntax`]: the delta holds a line break (a `MEDIA:` line may start after it, and
/// the [`directives`]' tidy reads line ends).
pub(crate) const LINE_BREAK: u8 = 2;

/// The [`stage_syntax`] class of each byte. The [`tokens`] gate reads a delta's end
/// instead, whatever its bytes.
const STAGE_SYNTAX: [u8; 256] = {
    let mut set = [0; 256];
    set[b'<' as usize] = TAG_OR_BRACKET;
    set[b'[' as usize] = TAG_OR_BRACKET;
    set[b'\n' as usize] = LINE_BREAK;
    set
};

/// Which bytes that the tag filter or the directive parser acts on `delta` holds:
/// [`TAG_OR_BRACKET`] and [`LINE_BREAK`], or 0 for text that is plain for both. One pass
/// for both stages, whose own searches can then be skipped.
#[inline]
pub(crate) fn stage_syntax(delta: &[u8]) -> u8 {
    if delta.len() < SHORT_SEARCH {
        delta
            .iter()
            .fold(0, |found, &b| found | STAGE_SYNTAX[usize::from(b)])
    } else {
        let mut found = 0;
        if memchr::memchr2(b'<', b'[', delta).is_some() {
            found |= TAG_OR_BRACKET;
        }
        if memchr::memchr(b'\n', delta).is_some() {
            found |= LINE_BREAK;
        }
        found
    }
}

/// ASCII whitespace as the stages understand it: space, tab, line feed, carriage return,
/// form feed.
#[inline]
pub(crate) fn is_ascii_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
}
