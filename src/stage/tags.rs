//! Thinking tags and `<final>` (SPEC §2): a streaming filter that routes hidden reasoning
//! away from the answer. Hiding fails closed: when a tag is ambiguous, the text it might hide
//! is hidden.
//!
//! **Tags.** Names are matched ignoring ASCII case, with an optional `antml:` or `mm:`
//! namespace; whitespace (spaces, tabs, line breaks) is allowed after `<`, around `/` and
//! after the name; attributes may follow the name (`<think type="internal">`): anything but
//! `<` and `>` up to the closing `>`.
//!
//! | tag | effect |
//! |---|---|
//! | `<think>` `<thinking>` `<thought>` `<antthinking>` `<reasoning>` | a thinking block opens: what follows goes to the reasoning output |
//! | `</think>` … `</reasoning>` | closes one level of thinking (any thinking closer closes any opener) |
//! | `<final>`, `</final>` | removed; their content is answer text |
//! | `<thinking/>`, `<final/>` (self-closing) | removed, nothing else |
//!
//! Decisions where the spec is silent (each fails closed):
//! - **Nesting.** Thinking openers nest: the answer resumes only when the outermost block
//!   closes (`<think>a <think>b</think> c</think>d` shows `d`). A thinking closer with no
//!   open block is removed; the text before it was already answer text (a stream cannot take
//!   back what it released; see the README's table of differences).
//! - **Malformed openers.** A thinking opener whose attributes contain `=` but which runs
//!   into a `<`, or past [`MAX_TAG_LEN`] bytes, or to the end of the message, before its `>`
//!   (`<think type="internal"Secret</think>`) opens a thinking block all the same. Without a
//!   `=` (`<think and then…`) it is prose. A closer without its `>` is not a closer, so the
//!   block stays open and its text stays hidden.
//! - **Unclosed blocks** hide everything after them in the message.
//! - **Code.** A tag in fenced code or in an inline code span is text. Whether a `<` is in a
//!   code span is decided the CommonMark way, which may need text that has not arrived yet:
//!   after an unmatched backtick the span may close later (then the tag is text) or its block
//!   may end first (then the backtick is literal and the tag is a tag). The filter waits for
//!   that decision, holding the text from the tag on, for at most [`CODE_HOLD`] bytes. If it
//!   is still open then, a thinking opener or a `<final>` counts as a tag and a thinking
//!   closer counts as text: either way the reasoning stays hidden. A line that starts like
//!   a fence is decided at its end, the same way.
//! - A tag is at most [`MAX_TAG_LEN`] bytes; a longer `<…>` is text.
//! - With `require_final_tag`, text outside `<final>…</final>` and outside thinking blocks is
//!   dropped (neither answer nor reasoning).
//! - Tidying, only where a tag was removed: after a removed tag, spaces are dropped when the
//!   answer already ends in whitespace, one line break is dropped when the answer already
//!   ends in one (the line that held only the tag disappears), and all whitespace is dropped
//!   while the answer of this message is still empty. Reasoning blocks lose their leading and
//!   trailing whitespace; consecutive blocks in one message are joined with a blank line.
//!   Text without tags passes through byte for byte.

use super::{CodeState, CodeTracker, find_byte, is_ascii_ws, may_become};

/// The longest tag recognised, in bytes, attributes included. A `<` followed by this many
/// bytes without completing a tag is text (or a malformed opener, see the module docs); this
/// also bounds how much the filter holds back for a possible tag.
pub(crate) const MAX_TAG_LEN: usize = 256;

/// How far past a tag the filter looks, at most, to learn whether the tag sits in an inline
/// code span (or on a fence line) that is still open.
pub(crate) const CODE_HOLD: usize = 4096;

/// Tag names and what they do. Lower case; input is compared ignoring ASCII case.
const TAG_NAMES: [(&[u8], TagKind); 6] = [
    (b"think", TagKind::Thinking),
    (b"thinking", TagKind::Thinking),
    (b"thought", TagKind::Thinking),
    (b"antthinking", TagKind::Thinking),
    (b"reasoning", TagKind::Thinking),
    (b"final", TagKind::Final),
];

/// Namespaces a tag name may carry (`<thinking>`).
const NAMESPACES: [&[u8]; 2] = [b"antml:", b"mm:"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TagKind {
    Thinking,
    Final,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Tag {
    kind: TagKind,
    closing: bool,
    self_closing: bool,
    /// Bytes from the `<` through the `>` (or through the attributes of a malformed opener).
    len: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TagMatch {
    Tag(Tag),
    /// The text ends before it can be told; it may still become a tag.
    Partial,
    NotTag,
}

/// What happened to thinking blocks during one [`TagFilter::push_pausing`] or [`TagFilter::finish`].
/// Used by reasoning `stream` mode (SPEC §8) to end a reasoning block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TagEvents {
    /// A thinking block opened during this call.
    pub thinking_started: bool,
    /// A thinking block ended during this call (by a closing tag, or by the end of the
    /// message for an unclosed block): the length in bytes that the caller's `reasoning`
    /// string had right after the last block that ended. `reasoning[..n]` belongs to ended
    /// blocks; anything after it belongs to a block that is still open.
    pub thinking_ended_at: Option<usize>,
    /// [`TagFilter::push_pausing`] stopped right after a thinking block opened: the input
    /// after the tag is not read yet (push an empty delta to go on).
    pub paused: bool,
}

/// Streaming filter for thinking and final tags. One per stream; [`TagFilter::finish`] (or
/// [`TagFilter::reset`]) between assistant messages. See the module docs for the rules.
///
/// Layout (`repr(C)`): what a push reads and writes comes first (the position, the
/// router's flags, the input's buffer), in as few cache lines as the fields allow.
#[derive(Clone, Debug)]
#[repr(C)]
pub(crate) struct TagFilter {
    /// Bytes of `input.text` already decided (released, routed or removed).
    done: usize,
    router: Router,
    input: CodeTracker,
    require_final_tag: bool,
    /// Bytes of answer the filter passed but has not copied into `input` yet
    /// ([`TagFilter::owe`]): they are the end of the caller's copy until
    /// [`TagFilter::catch_up`]. (In the padding after the flag: the struct does not grow.)
    owed: u32,
}

/// Where decided text goes, and the small amount of state that tidies it.
///
/// Layout (`repr(C)`): the flags first, the reasoning's held whitespace last.
#[derive(Clone, Debug, Default)]
#[repr(C)]
struct Router {
    require_final_tag: bool,
    /// How many thinking blocks are open (nested openers count).
    depth: u32,
    in_final: bool,
    /// The last two bytes given to the answer in this message (0 where there are none).
    answer_tail: [u8; 2],
    /// A tag was just removed: tidy the whitespace that follows it (see module docs).
    tidy: bool,
    /// The one line break a tidy run may drop has been dropped.
    tidy_dropped_newline: bool,
    /// Reasoning of an earlier block of this message has been written.
    reasoning_written: bool,
    /// The current thinking block has written no reasoning yet (leading whitespace is
    /// dropped, and the blank-line joiner goes before its first text).
    block_empty: bool,
    /// Trailing whitespace of the current reasoning block, written only if text follows.
    reasoning_ws: String,
}

impl TagFilter {
    /// A filter; with `require_final_tag`, only text inside `<final>…</final>` is answer.
    pub(crate) fn new(require_final_tag: bool) -> Self {
        TagFilter {
            require_final_tag,
            input: CodeTracker::default(),
            done: 0,
            router: Router {
                require_final_tag,
                ..Router::default()
            },
            owed: 0,
        }
    }

    /// Whether a thinking block is open.
    #[cfg(test)]
    pub(crate) fn in_thinking(&self) -> bool {
        self.router.depth > 0
    }

    /// Feeds the next piece of the message. Answer text is appended to `answer`, hidden
    /// reasoning to `reasoning`. Text that may still turn out to be (or follow) a tag is held
    /// back until a later call decides it: at most [`MAX_TAG_LEN`] bytes for the tag itself,
    /// or [`CODE_HOLD`] bytes while an open code span decides whether it is a tag at all.
    #[cfg(test)]
    pub(crate) fn push(
        &mut self,
        delta: &str,
        answer: &mut String,
        reasoning: &mut String,
    ) -> TagEvents {
        self.push_pausing(delta, answer, reasoning, false)
    }

    /// `TagFilter::push` (the tests' form), which with `pause` stops right after a thinking block opens
    /// ([`TagEvents::paused`]), so the caller can act on the answer before the block before
    /// any of the block's reasoning is read. The output is the same as one push: the rest
    /// is read by the next push (an empty delta to just go on).
    #[inline]
    pub(crate) fn push_pausing(
        &mut self,
        delta: &str,
        answer: &mut String,
        reasoning: &mut String,
        pause: bool,
    ) -> TagEvents {
        let mut events = TagEvents::default();
        let held = self.done < self.input.text.len();
        self.input.text.push_str(delta);
        if !held && find_byte(b'<', delta.as_bytes()).is_none() {
            // Nothing held and no `<` in the delta: exactly the first and only round of
            // `run`'s loop for it (the delta is routed whole, nothing can pause), without the
            // call.
            self.router.text(delta, answer, reasoning);
            self.done = self.input.text.len();
            self.done -= self.input.settle(self.done);
        } else {
            self.run(false, pause, answer, reasoning, &mut events);
        }
        events
    }

    /// Whether a delta without `<` passes through this filter unchanged, straight into the
    /// answer: nothing is held, no thinking block is open, no tidy run follows a removed tag,
    /// and answer text is not being dropped (`require_final_tag` outside `<final>`). Then
    /// [`TagFilter::pass_plain`] is exactly [`TagFilter::push_pausing`] for such a delta.
    #[inline]
    pub(crate) fn passes_plain(&self) -> bool {
        let r = &self.router;
        self.done == self.input.text.len()
            && r.depth == 0
            && !r.tidy
            && (!r.require_final_tag || r.in_final)
    }

    /// [`TagFilter::push_pausing`] for a `delta` without `<` when
    /// [`TagFilter::passes_plain`]: the caller appends `delta` to the answer itself (what
    /// the router would append), this keeps the filter's own record of it.
    #[inline]
    pub(crate) fn pass_plain(&mut self, delta: &str) {
        debug_assert!(self.passes_plain() && self.owed == 0);
        debug_assert!(!delta.as_bytes().contains(&b'<'));
        self.input.text.push_str(delta);
        self.router.note_answer(delta.as_bytes());
        self.done = self.input.text.len();
        self.done -= self.input.settle(self.done);
    }

    /// [`TagFilter::pass_plain`] of `len` bytes, deferred: the caller has the delta at the
    /// end of its own copy of the answer and keeps it there, with the other owed bytes
    /// after the filter's last [`TagFilter::catch_up`], until it calls that, which it must
    /// before any other call. The filter stays [`TagFilter::passes_plain`] meanwhile. Saves
    /// a copy per delta: one copy of a batch instead.
    #[inline]
    pub(crate) fn owe(&mut self, len: usize) {
        debug_assert!(self.passes_plain());
        self.owed += u32::try_from(len).expect("an owed batch is short");
    }

    /// [`TagFilter::owe`] the delta when `owe`, else [`TagFilter::pass_plain`] it. (The
    /// filter reads nothing of the caller's copy but the bytes it owes, so this may come
    /// after the caller has handed the delta on.)
    #[inline]
    pub(crate) fn pass_or_owe(&mut self, delta: &str, owe: bool) {
        if owe {
            self.owe(delta.len());
        } else {
            self.pass_plain(delta);
        }
    }

    /// How many bytes [`TagFilter::catch_up`] wants: the end of the caller's copy.
    #[inline]
    pub(crate) fn owed(&self) -> usize {
        self.owed as usize
    }

    /// Takes in the bytes owed (`text`, [`TagFilter::owed`] long): exactly
    /// [`TagFilter::pass_plain`] of them, as one delta (the filter gives the same output
    /// however its input is split).
    pub(crate) fn catch_up(&mut self, text: &str) {
        debug_assert_eq!(text.len(), self.owed());
        self.owed = 0;
        self.pass_plain(text);
    }

    /// A text boundary inside the message (`TextEnd`, a tool call, media): held-back text is
    /// decided as if nothing followed (a possible tag start such as `</t` is text), so it
    /// goes out before the boundary. Open thinking blocks stay open.
    pub(crate) fn release(&mut self, answer: &mut String, reasoning: &mut String) -> TagEvents {
        let mut events = TagEvents::default();
        self.run(true, false, answer, reasoning, &mut events);
        events
    }

    /// Ends the message: held-back text is decided as if nothing followed, an unclosed
    /// thinking block ends, and the filter is reset for the next message.
    pub(crate) fn finish(&mut self, answer: &mut String, reasoning: &mut String) -> TagEvents {
        let mut events = TagEvents::default();
        self.run(true, false, answer, reasoning, &mut events);
        if self.router.depth > 0 {
            self.router.end_block(reasoning.len(), &mut events);
        }
        self.reset();
        events
    }

    /// Forgets the current message (a new one begins), keeping buffer capacity.
    pub(crate) fn reset(&mut self) {
        self.input.reset();
        self.done = 0;
        self.owed = 0;
        let mut ws = std::mem::take(&mut self.router.reasoning_ws);
        ws.clear();
        self.router = Router {
            require_final_tag: self.require_final_tag,
            reasoning_ws: ws,
            ..Router::default()
        };
    }

    #[inline(never)]
    fn run(
        &mut self,
        at_end: bool,
        pause: bool,
        answer: &mut String,
        reasoning: &mut String,
        events: &mut TagEvents,
    ) {
        loop {
            let bytes = self.input.text.as_bytes();
            let Some(i) = find_byte(b'<', &bytes[self.done..]) else {
                let end = bytes.len();
                self.router
                    .text(&self.input.text[self.done..end], answer, reasoning);
                self.done = end;
                break;
            };
            let lt = self.done + i;
            self.router
                .text(&self.input.text[self.done..lt], answer, reasoning);
            self.done = lt;
            let tag = match match_tag(&self.input.text.as_bytes()[lt..], at_end) {
                TagMatch::Partial => break,
                TagMatch::NotTag => None,
                TagMatch::Tag(tag) => match self.input.code_state(lt, CODE_HOLD, at_end) {
                    CodeState::Code => None,
                    CodeState::Text => Some(tag),
                    CodeState::Pending => break,
                    // Fail closed: an opener hides, a closer keeps hiding.
                    CodeState::Unresolved => {
                        let keeps_hidden = tag.kind == TagKind::Thinking && tag.closing;
                        (!keeps_hidden).then_some(tag)
                    }
                },
            };
            match tag {
                Some(tag) => {
                    let outside = self.router.depth == 0;
                    self.router.apply(tag, reasoning, events);
                    self.done = lt + tag.len;
                    if pause && outside && self.router.depth > 0 {
                        events.paused = true;
                        break;
                    }
                }
                None => {
                    self.router.text("<", answer, reasoning);
                    self.done = lt + 1;
                }
            }
        }
        self.done -= self.input.settle(self.done);
    }
}

impl Router {
    /// Routes decided text to the answer, the reasoning, or nowhere.
    #[inline]
    fn text(&mut self, text: &str, answer: &mut String, reasoning: &mut String) {
        if text.is_empty() {
            return;
        }
        if self.depth > 0 {
            self.reasoning_text(text, reasoning);
        } else if !self.require_final_tag || self.in_final {
            self.answer_text(text, answer);
        }
    }

    #[inline]
    fn answer_text(&mut self, mut text: &str, answer: &mut String) {
        if self.tidy {
            text = self.tidy_start(text);
            if text.is_empty() {
                return;
            }
        }
        answer.push_str(text);
        self.note_answer(text.as_bytes());
    }

    /// `bytes` were just given to the answer: remember its last two bytes.
    #[inline]
    fn note_answer(&mut self, bytes: &[u8]) {
        self.answer_tail = match bytes {
            [.., a, b] => [*a, *b],
            [b] => [self.answer_tail[1], *b],
            [] => self.answer_tail,
        };
    }

    /// `text` without the whitespace that the tidy run after a removed tag drops (module
    /// docs); ends the run at the first byte it keeps. Out of line: tags are rare.
    #[inline(never)]
    fn tidy_start<'t>(&mut self, text: &'t str) -> &'t str {
        let bytes = text.as_bytes();
        let mut skip = 0;
        while skip < bytes.len() {
            let b = bytes[skip];
            let [before, last] = self.answer_tail;
            let empty = last == 0;
            let drop = match b {
                b' ' | b'\t' | b'\r' => empty || is_ascii_ws(last),
                // Nothing to separate from yet, or a blank line is already there.
                b'\n' if empty || (before == b'\n' && last == b'\n') => true,
                // The line break that ended the removed tag's own line.
                b'\n' if last == b'\n' && !self.tidy_dropped_newline => {
                    self.tidy_dropped_newline = true;
                    true
                }
                _ => false,
            };
            if !drop {
                self.tidy = false;
                break;
            }
            skip += 1;
        }
        &text[skip..]
    }

    #[inline(never)]
    fn reasoning_text(&mut self, mut text: &str, reasoning: &mut String) {
        if self.block_empty {
            text = text.trim_start_matches(|c: char| c.is_ascii() && is_ascii_ws(c as u8));
            if text.is_empty() {
                return;
            }
            if self.reasoning_written {
                reasoning.push_str("\n\n");
            }
            self.block_empty = false;
            self.reasoning_written = true;
        }
        let body = text.trim_end_matches(|c: char| c.is_ascii() && is_ascii_ws(c as u8));
        if body.is_empty() {
            self.reasoning_ws.push_str(text);
            return;
        }
        reasoning.push_str(&self.reasoning_ws);
        self.reasoning_ws.clear();
        reasoning.push_str(body);
        self.reasoning_ws.push_str(&text[body.len()..]);
    }

    fn apply(&mut self, tag: Tag, reasoning: &str, events: &mut TagEvents) {
        match tag.kind {
            _ if tag.self_closing => {}
            TagKind::Thinking if tag.closing => {
                if self.depth > 0 {
                    self.depth -= 1;
                    if self.depth == 0 {
                        self.end_block(reasoning.len(), events);
                    }
                }
            }
            TagKind::Thinking => {
                if self.depth == 0 {
                    self.block_empty = true;
                    events.thinking_started = true;
                }
                self.depth = self.depth.saturating_add(1);
            }
            TagKind::Final => self.in_final = !tag.closing,
        }
        self.tidy = true;
        self.tidy_dropped_newline = false;
    }

    fn end_block(&mut self, reasoning_len: usize, events: &mut TagEvents) {
        self.depth = 0;
        self.reasoning_ws.clear();
        events.thinking_ended_at = Some(reasoning_len);
    }
}

/// Whitespace allowed inside a tag's brackets.
fn is_tag_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// Matches a tag at the start of `s` (which starts with `<`). `at_end`: no more text will
/// come after `s`, so running out of text decides instead of waiting.
fn match_tag(s: &[u8], at_end: bool) -> TagMatch {
    let n = s.len().min(MAX_TAG_LEN);
    // Running out of bytes before the tag is decided: wait for more, unless the limit or the
    // end of the message is what cut it short; then `decided` is the answer.
    let ran_out = |decided: TagMatch| {
        if s.len() >= MAX_TAG_LEN || at_end {
            decided
        } else {
            TagMatch::Partial
        }
    };
    let skip_ws = |mut i: usize| {
        while i < n && is_tag_ws(s[i]) {
            i += 1;
        }
        i
    };
    let mut i = skip_ws(1);
    if i == n {
        return ran_out(TagMatch::NotTag);
    }
    let closing = s[i] == b'/';
    if closing {
        i = skip_ws(i + 1);
        if i == n {
            return ran_out(TagMatch::NotTag);
        }
    }
    let name_start = i;
    while i < n && (s[i].is_ascii_alphabetic() || s[i] == b':') {
        i += 1;
    }
    let word = &s[name_start..i];
    if i == n {
        return if could_become_name(word) {
            ran_out(TagMatch::NotTag)
        } else {
            TagMatch::NotTag
        };
    }
    let Some(kind) = name_kind(word) else {
        return TagMatch::NotTag;
    };
    if !(s[i] == b'>' || s[i] == b'/' || is_tag_ws(s[i])) {
        return TagMatch::NotTag;
    }
    let attrs_start = i;
    // A thinking opener that lost its `>` but clearly had attributes is still an opener.
    let malformed = |len: usize| {
        let attrs = &s[attrs_start..len];
        if kind == TagKind::Thinking && !closing && attrs.contains(&b'=') {
            TagMatch::Tag(Tag {
                kind,
                closing,
                self_closing: false,
                len,
            })
        } else {
            TagMatch::NotTag
        }
    };
    let Some(k) = s[i..n].iter().position(|&b| b == b'<' || b == b'>') else {
        return ran_out(malformed(n));
    };
    let k = i + k;
    if s[k] == b'<' {
        return malformed(k);
    }
    let last = s[attrs_start..k].iter().rev().find(|&&b| !is_tag_ws(b));
    TagMatch::Tag(Tag {
        kind,
        closing,
        self_closing: !closing && last == Some(&b'/'),
        len: k + 1,
    })
}

/// The tag kind of a complete name, namespace allowed.
fn name_kind(word: &[u8]) -> Option<TagKind> {
    let bare = NAMESPACES
        .iter()
        .find(|ns| word.len() > ns.len() && word[..ns.len()].eq_ignore_ascii_case(ns))
        .map_or(word, |ns| &word[ns.len()..]);
    TAG_NAMES
        .iter()
        .find(|(full, _)| full.eq_ignore_ascii_case(bare))
        .map(|&(_, kind)| kind)
}

/// Whether `word`, cut short by the end of the text so far, may still grow into a name.
fn could_become_name(word: &[u8]) -> bool {
    let names = || TAG_NAMES.iter().map(|(full, _)| *full);
    if may_become(word, names()) || may_become(word, NAMESPACES.iter().copied()) {
        return true;
    }
    NAMESPACES.iter().any(|ns| {
        word.len() > ns.len()
            && word[..ns.len()].eq_ignore_ascii_case(ns)
            && may_become(&word[ns.len()..], names())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Runs `text` through a filter in pieces cut at `cuts` (byte offsets, char boundaries).
    fn run_split(text: &str, cuts: &[usize], require_final: bool) -> (String, String) {
        let mut f = TagFilter::new(require_final);
        let (mut answer, mut reasoning) = (String::new(), String::new());
        let mut start = 0;
        for &c in cuts {
            f.push(&text[start..c], &mut answer, &mut reasoning);
            start = c;
        }
        f.push(&text[start..], &mut answer, &mut reasoning);
        f.finish(&mut answer, &mut reasoning);
        (answer, reasoning)
    }

    fn run(text: &str) -> (String, String) {
        run_split(text, &[], false)
    }

    fn run_chars(text: &str, require_final: bool) -> (String, String) {
        let cuts: Vec<usize> = text.char_indices().map(|(i, _)| i).skip(1).collect();
        run_split(text, &cuts, require_final)
    }

    /// Checks that every split into two pieces, and the one-char split, give `expected`.
    fn check_all_splits(text: &str, require_final: bool, expected: (&str, &str)) {
        let whole = run_split(text, &[], require_final);
        assert_eq!(
            (whole.0.as_str(), whole.1.as_str()),
            expected,
            "whole {text:?}"
        );
        for (i, _) in text.char_indices().skip(1) {
            let got = run_split(text, &[i], require_final);
            assert_eq!(
                (got.0.as_str(), got.1.as_str()),
                expected,
                "split at {i} of {text:?}"
            );
        }
        let got = run_chars(text, require_final);
        assert_eq!(
            (got.0.as_str(), got.1.as_str()),
            expected,
            "char by char {text:?}"
        );
    }

    fn check(text: &str, expected: (&str, &str)) {
        check_all_splits(text, false, expected);
    }

    #[test]
    fn split_tag_is_still_a_tag() {
        check("<think>secret</think>answer", ("answer", "secret"));
        let (a, r) = run_split("<think>secret</think>answer", &[4], false);
        assert_eq!((a.as_str(), r.as_str()), ("answer", "secret"));
    }

    #[test]
    fn every_thinking_name_and_spacing() {
        for open in [
            "<think>",
            "<thinking>",
            "<thought>",
            "<antthinking>",
            "<reasoning>",
            "< THINK >",
            "<Thinking\t>",
            "<think\n>",
            "<thinking>",
            "<MM:Think>",
        ] {
            for close in [
                "</think>",
                "</ thinking>",
                "< / Thought >",
                "</ANTTHINKING>",
                "</thinking>",
                "</reasoning >",
            ] {
                let text = format!("a {open}hidden{close} b");
                check(&text, ("a b", "hidden"));
            }
        }
    }

    #[test]
    fn attributes_are_part_of_the_tag() {
        check(
            "<think type=\"internal\">Secret.</think>Visible.",
            ("Visible.", "Secret."),
        );
        check(
            "A <think id='test' class=\"foo\">hidden</think> B",
            ("A B", "hidden"),
        );
        check("<final data-x=\"1\">Answer.</final>", ("Answer.", ""));
        check("<think type=\"a/b\" >x</think >y", ("y", "x"));
        check("a <think type=\"x\"/> b", ("a b", ""));
    }

    #[test]
    fn nested_thinking_hides_until_the_outermost_closes() {
        check(
            "<think>outer <think>inner</think> still outer</think>visible",
            ("visible", "outer inner still outer"),
        );
        check(
            "<think>a<thought>b<think>c</think>d</thought>e</think>f</think>g",
            ("fg", "abcde"),
        );
    }

    #[test]
    fn orphan_closers_are_removed() {
        check("Use </think> here", ("Use here", ""));
        check("x</think></think>y", ("xy", ""));
    }

    #[test]
    fn malformed_openers_fail_closed() {
        // Attributes without their `>`: an opener all the same.
        check(
            "<think type=\"internal\"Secret.</think>Visible.",
            ("Visible.", ""),
        );
        check("Start <think a=1 secret to the end", ("Start ", ""));
        // A closer without its `>` closes nothing: the block stays hidden.
        check(
            "<think>secret</think and more",
            ("", "secret</think and more"),
        );
        // Prose with a name but no attribute syntax stays prose.
        check(
            "Here is how to use <think tags in your code",
            ("Here is how to use <think tags in your code", ""),
        );
        check(
            "You can start with <think and then close with </think>",
            ("You can start with <think and then close with ", ""),
        );
    }

    #[test]
    fn final_tags_removed_content_kept() {
        check("<final>The answer.</final>", ("The answer.", ""));
        check("Intro <final>x</final> outro", ("Intro x outro", ""));
        check("A<final>1</final>B<final>2</final>C", ("A1B2C", ""));
    }

    #[test]
    fn self_closing_is_just_removed() {
        check("a <thinking/> b", ("a b", ""));
        check("a<thinking />b", ("ab", ""));
    }

    #[test]
    fn tags_in_code_are_text() {
        let fenced = "```\n<think>not hidden</think>\n```\nafter";
        check(fenced, (fenced, ""));
        let inline = "Use `<think>` to open and `</think>` to close.";
        check(inline, (inline, ""));
        let tilde = "~~~html\n<final>\n~~~\n<think>x</think>y";
        check(tilde, ("~~~html\n<final>\n~~~\ny", "x"));
        // A fence opener's info string is code too.
        let info = "```<think>\ncode\n```";
        check(info, (info, ""));
        let double = "Use ``code`` with <think>hidden</think> text";
        check(double, ("Use ``code`` with text", "hidden"));
        // A tilde line does not close a backtick fence.
        let unclosed = "```\n<think>not protected\n~~~\n</think>text";
        check(unclosed, (unclosed, ""));
        check(
            "`<final>` in code, <final>visible</final> outside",
            ("`<final>` in code, visible outside", ""),
        );
    }

    #[test]
    fn an_unpaired_backtick_does_not_make_reasoning_visible() {
        // The span never closes: the backtick is literal and the tags are tags.
        check(
            "Start `unclosed <think>hidden</think> end",
            ("Start `unclosed end", "hidden"),
        );
        // The paragraph ends first: the same.
        check(
            "A `tick <think>hidden</think>\n\nB",
            ("A `tick \n\nB", "hidden"),
        );
        // The span closes later: the tags were code all along.
        let code = "Use `<think>literal</think>` here";
        check(code, (code, ""));
        // Inside reasoning, a closer in an open span waits the same way.
        check("<think>a `b</think>Answer.", ("Answer.", "a `b"));
    }

    #[test]
    fn a_possible_fence_line_is_decided_at_its_end() {
        // Not a fence opener (a backtick in a backtick fence's info string): a tag.
        check(
            "``` a ` <think>hidden</think>\nshown",
            ("``` a ` \nshown", "hidden"),
        );
        // A real opener: the line is code.
        let fence = "~~~ <think>x</think>\ncode\n~~~";
        check(fence, (fence, ""));
    }

    #[test]
    fn an_open_span_fails_closed_after_the_hold() {
        let filler = "x".repeat(CODE_HOLD);
        // An opener inside a span still open after the hold: hidden.
        let text = format!("a `b <think>secret {filler}` c");
        let (answer, reasoning) = run(&text);
        assert_eq!(answer, "a `b ");
        assert!(reasoning.starts_with("secret"));
        assert_eq!(run_chars(&text, false), (answer, reasoning));
        // A closer in such a span keeps the block open.
        let text = format!("<think>a `b </think> {filler}` c");
        let (answer, reasoning) = run(&text);
        assert_eq!(answer, "");
        assert!(reasoning.ends_with("` c"));
        assert_eq!(run_chars(&text, false), (answer, reasoning));
    }

    #[test]
    fn unclosed_thinking_hides_the_rest() {
        check(
            "visible <think>all of\nthis is hidden",
            ("visible ", "all of\nthis is hidden"),
        );
        let mut f = TagFilter::new(false);
        let (mut a, mut r) = (String::new(), String::new());
        let ev = f.push("x<think>y", &mut a, &mut r);
        assert!(ev.thinking_started);
        assert_eq!(ev.thinking_ended_at, None);
        assert!(f.in_thinking());
        let ev = f.finish(&mut a, &mut r);
        assert_eq!(ev.thinking_ended_at, Some(1));
    }

    #[test]
    fn thinking_end_is_reported_with_offset() {
        let mut f = TagFilter::new(false);
        let (mut a, mut r) = (String::new(), String::new());
        let ev = f.push("<think>one</think>two<think>thr", &mut a, &mut r);
        assert!(ev.thinking_started);
        assert_eq!(ev.thinking_ended_at, Some(3));
        assert_eq!(r, "one\n\nthr");
        assert_eq!(a, "two");
    }

    #[test]
    fn require_final_tag_keeps_only_final() {
        check_all_splits(
            "<think>plan</think>chatter <final>The answer.</final> trailing",
            true,
            ("The answer.", "plan"),
        );
        check_all_splits("no final tag at all", true, ("", ""));
        check_all_splits("<final>open to the end", true, ("open to the end", ""));
    }

    #[test]
    fn partial_tag_at_end_is_text() {
        check("a <thi", ("a <thi", ""));
        check("a < think", ("a < think", ""));
        check("x </final", ("x </final", ""));
    }

    #[test]
    fn lookalikes_are_text() {
        for text in [
            "a < b and c > d",
            "<div>html</div>",
            "<thinker>",
            "<thinkx>",
            "<think-x>",
            "1 <2",
            "<mm:>",
            "<div>",
        ] {
            check(text, (text, ""));
        }
        check("<<think>>", ("<", ">"));
        let long = format!("<think {}>x", "a".repeat(MAX_TAG_LEN));
        check(&long, (long.as_str(), ""));
    }

    #[test]
    fn tidy_after_removed_blocks() {
        check("<think>\nplan\n</think>\n\nAnswer", ("Answer", "plan"));
        check("Line1\n<think>x</think>\nLine2", ("Line1\nLine2", "x"));
        check("P1\n\n<think>x</think>\n\nP2", ("P1\n\nP2", "x"));
        check("Hello <think>x</think> world", ("Hello world", "x"));
    }

    #[test]
    fn sample_reply() {
        let text = include_str!("../../tests/data/directives-and-thinking.md");
        let (a, r) = run(text);
        assert!(!a.contains("think>"), "{a}");
        assert!(!a.contains("final>"), "{a}");
        assert!(a.starts_with("[[reply_to_current]] Here is"), "{a}");
        assert!(a.contains("Summary: strong week"));
        assert!(r.starts_with("The user wants a chart"));
        assert!(r.contains("\n\nShould I also attach"));
        assert_eq!(run_chars(text, false), (a, r));
    }

    #[test]
    fn holds_only_a_possible_tag() {
        let mut f = TagFilter::new(false);
        let (mut a, mut r) = (String::new(), String::new());
        f.push("abc <thin", &mut a, &mut r);
        assert_eq!(a, "abc ");
        f.push("k", &mut a, &mut r);
        assert_eq!(a, "abc ");
        f.push("ing", &mut a, &mut r);
        assert_eq!(a, "abc ");
        f.push("s and more", &mut a, &mut r);
        assert_eq!(a, "abc <thinkings and more");
        // Inside an open code span, the text from the tag on waits for the span's fate.
        f.push(" `x <think>y", &mut a, &mut r);
        assert_eq!(a, "abc <thinkings and more `x ");
        f.push("`!", &mut a, &mut r);
        assert_eq!(a, "abc <thinkings and more `x <think>y`!");
    }

    fn tagged_text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            "[a-z <>/`\n=\"]{0,8}",
            Just("<think>".to_string()),
            Just("</think>".to_string()),
            Just("< Thought >".to_string()),
            Just("<think a=\"1\">".to_string()),
            Just("<final>".to_string()),
            Just("</final>".to_string()),
            Just("<thinking/>".to_string()),
            Just("```\n".to_string()),
            Just("`".to_string()),
            Just("``".to_string()),
            Just("\n\n".to_string()),
            Just("  ~~~\n".to_string()),
            Just("é".to_string()),
        ];
        prop::collection::vec(piece, 0..32).prop_map(|v| v.concat())
    }

    /// An unmatched backtick run is literal text once its paragraph ends, and the runs after
    /// it pair among themselves: `` `<think>` `` after a stray ```` is code, not a tag. The
    /// stage drops decided text as it goes; it must keep the stray run until it is decided,
    /// however the text was split (dropping it made the answer depend on the split).
    #[test]
    fn a_tag_in_code_after_an_unmatched_run_stays_text_past_the_drop_point() {
        let tail = "a ```` b\n| x | `<think>` c |\nafter\n";
        for pad in (crate::stage::SETTLE_BATCH / 2..crate::stage::SETTLE_BATCH * 3).step_by(7) {
            let text = format!("{}{tail}", "w ".repeat(pad / 2));
            let expected = (text.as_str(), "");
            let whole = run(&text);
            assert_eq!(
                (whole.0.as_str(), whole.1.as_str()),
                expected,
                "whole, pad {pad}"
            );
            let chars = run_chars(&text, false);
            assert_eq!(
                (chars.0.as_str(), chars.1.as_str()),
                expected,
                "chars, pad {pad}"
            );
            let thirds = run_split(&text, &[text.len() / 3, 2 * text.len() / 3], false);
            assert_eq!(
                (thirds.0.as_str(), thirds.1.as_str()),
                expected,
                "thirds, pad {pad}"
            );
        }
    }

    proptest! {
        #[test]
        fn split_invariant(text in tagged_text(), require_final in any::<bool>()) {
            let whole = run_split(&text, &[], require_final);
            prop_assert_eq!(&run_chars(&text, require_final), &whole);
        }

        #[test]
        fn random_splits_invariant(text in tagged_text(), cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..6)) {
            let whole = run(&text);
            prop_assert_eq!(run_split(&text, &crate::stage::tests::cuts_in(&text, &cuts), false), whole);
        }

        #[test]
        fn text_without_tags_passes_through(text in "[^<]{0,200}") {
            prop_assert_eq!(run(&text), (text.clone(), String::new()));
            prop_assert_eq!(run_chars(&text, false), (text, String::new()));
        }

        #[test]
        fn no_panic_on_anything(text in any::<String>()) {
            let _ = run_chars(&text, false);
            let _ = run(&text);
        }
    }
}
