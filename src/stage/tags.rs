//! Thinking tags and `<final>` (SPEC §2): a streaming filter that routes hidden reasoning
//! away from the answer.
//!
//! Recognised tags, case-insensitive, with spaces or tabs allowed anywhere inside the
//! brackets (`< think >`, `</ THINK>`, `< / think >`):
//!
//! | tag | effect |
//! |---|---|
//! | `<think>` `<thinking>` `<thought>` `<antthinking>` | a thinking block opens: what follows goes to the reasoning output |
//! | `</think>` … `</antthinking>` | the thinking block closes (any thinking closer closes any opener) |
//! | `<final>`, `</final>` | removed; their content is answer text |
//! | `<thinking/>`, `<final/>` (self-closing) | removed, nothing else |
//!
//! Decisions where the spec is silent:
//! - A thinking opener inside a thinking block is removed and changes nothing (no nesting
//!   depth); a thinking closer with no open block is removed.
//! - A tag is at most [`MAX_TAG_LEN`] bytes, spaces included; a longer `<…>` is text.
//! - A `<` is text when the Markdown scanner places it in fenced code, in an inline code span
//!   (one whose closing backticks have not arrived counts, because the decision is taken when
//!   the `<` arrives), or on a line that starts like a fence opener.
//! - With `require_final_tag`, text outside `<final>…</final>` and outside thinking blocks is
//!   dropped (neither answer nor reasoning).
//! - Tidying, only where a tag was removed: after a removed tag, spaces are dropped when the
//!   answer already ends in whitespace, one line break is dropped when the answer already
//!   ends in one (the line that held only the tag disappears), and all whitespace is dropped
//!   while the answer of this message is still empty. Reasoning blocks lose their leading and
//!   trailing whitespace; consecutive blocks in one message are joined with a blank line.
//!   Text without tags passes through byte for byte.

use super::{CodeTracker, find_byte, is_ascii_ws, may_become, skip_blanks};

/// The longest tag recognised, in bytes, spaces included (`</antthinking>` is 14). A `<`
/// followed by this many bytes without completing a tag is text; this also bounds how much
/// the filter holds back.
pub(crate) const MAX_TAG_LEN: usize = 32;

/// Tag names and what they do. Lower case; input is compared ignoring ASCII case.
const TAG_NAMES: [(&[u8], TagKind); 5] = [
    (b"think", TagKind::Thinking),
    (b"thinking", TagKind::Thinking),
    (b"thought", TagKind::Thinking),
    (b"antthinking", TagKind::Thinking),
    (b"final", TagKind::Final),
];

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
    /// Bytes from the `<` through the `>`.
    len: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TagMatch {
    Tag(Tag),
    /// The text ends before it can be told; it may still become a tag.
    Partial,
    NotTag,
}

/// What happened to thinking blocks during one [`TagFilter::push`] or [`TagFilter::finish`].
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
}

/// Streaming filter for thinking and final tags. One per stream; [`TagFilter::finish`] (or
/// [`TagFilter::reset`]) between assistant messages. See the module docs for the rules.
#[derive(Clone, Debug)]
pub(crate) struct TagFilter {
    require_final_tag: bool,
    input: CodeTracker,
    /// Bytes of `input.text` already decided (released, routed or removed).
    done: usize,
    router: Router,
}

/// Where decided text goes, and the small amount of state that tidies it.
#[derive(Clone, Debug, Default)]
struct Router {
    require_final_tag: bool,
    in_thinking: bool,
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
        }
    }

    /// Whether a thinking block is open.
    #[cfg(test)]
    pub(crate) fn in_thinking(&self) -> bool {
        self.router.in_thinking
    }

    /// Feeds the next piece of the message. Answer text is appended to `answer`, hidden
    /// reasoning to `reasoning`. Text that may be the start of a tag (at most
    /// [`MAX_TAG_LEN`] bytes) is held back until the next call decides it.
    pub(crate) fn push(
        &mut self,
        delta: &str,
        answer: &mut String,
        reasoning: &mut String,
    ) -> TagEvents {
        let mut events = TagEvents::default();
        self.input.text.push_str(delta);
        self.run(false, answer, reasoning, &mut events);
        events
    }

    /// Ends the message: held-back text that never became a tag is released as text, an
    /// unclosed thinking block ends, and the filter is reset for the next message.
    pub(crate) fn finish(&mut self, answer: &mut String, reasoning: &mut String) -> TagEvents {
        let mut events = TagEvents::default();
        self.run(true, answer, reasoning, &mut events);
        if self.router.in_thinking {
            self.router.end_block(reasoning.len(), &mut events);
        }
        self.reset();
        events
    }

    /// Forgets the current message (a new one begins), keeping buffer capacity.
    pub(crate) fn reset(&mut self) {
        self.input.reset();
        self.done = 0;
        let mut ws = std::mem::take(&mut self.router.reasoning_ws);
        ws.clear();
        self.router = Router {
            require_final_tag: self.require_final_tag,
            reasoning_ws: ws,
            ..Router::default()
        };
    }

    fn run(
        &mut self,
        at_end: bool,
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
            let matched = if self.input.in_code(lt) {
                TagMatch::NotTag
            } else {
                match_tag(&self.input.text.as_bytes()[lt..])
            };
            match matched {
                TagMatch::Partial if !at_end => break,
                TagMatch::Partial | TagMatch::NotTag => {
                    self.router.text("<", answer, reasoning);
                    self.done = lt + 1;
                }
                TagMatch::Tag(tag) => {
                    self.router.apply(tag, reasoning, events);
                    self.done = lt + tag.len;
                }
            }
        }
        self.done -= self.input.settle(self.done);
    }
}

impl Router {
    /// Routes decided text to the answer, the reasoning, or nowhere.
    fn text(&mut self, text: &str, answer: &mut String, reasoning: &mut String) {
        if text.is_empty() {
            return;
        }
        if self.in_thinking {
            self.reasoning_text(text, reasoning);
        } else if !self.require_final_tag || self.in_final {
            self.answer_text(text, answer);
        }
    }

    fn answer_text(&mut self, mut text: &str, answer: &mut String) {
        if self.tidy {
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
            text = &text[skip..];
            if text.is_empty() {
                return;
            }
        }
        answer.push_str(text);
        let bytes = text.as_bytes();
        self.answer_tail = match bytes {
            [.., a, b] => [*a, *b],
            [b] => [self.answer_tail[1], *b],
            [] => self.answer_tail,
        };
    }

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
                if self.in_thinking {
                    self.end_block(reasoning.len(), events);
                }
            }
            TagKind::Thinking => {
                if !self.in_thinking {
                    self.in_thinking = true;
                    self.block_empty = true;
                    events.thinking_started = true;
                }
            }
            TagKind::Final => self.in_final = !tag.closing,
        }
        self.tidy = true;
        self.tidy_dropped_newline = false;
    }

    fn end_block(&mut self, reasoning_len: usize, events: &mut TagEvents) {
        self.in_thinking = false;
        self.reasoning_ws.clear();
        events.thinking_ended_at = Some(reasoning_len);
    }
}

/// Matches a tag at the start of `s` (which starts with `<`).
fn match_tag(s: &[u8]) -> TagMatch {
    let n = s.len().min(MAX_TAG_LEN);
    // Running out of text before the tag completes: wait for more, unless the limit is what
    // cut it short.
    let ran_out = if s.len() >= MAX_TAG_LEN {
        TagMatch::NotTag
    } else {
        TagMatch::Partial
    };
    let skip_spaces = |i: usize| skip_blanks(s, i, n);
    let mut i = skip_spaces(1);
    if i == n {
        return ran_out;
    }
    let closing = s[i] == b'/';
    if closing {
        i = skip_spaces(i + 1);
    }
    let name_start = i;
    while i < n && s[i].is_ascii_alphabetic() {
        i += 1;
    }
    let name = &s[name_start..i];
    if i == n {
        let could_be = may_become(name, TAG_NAMES.iter().map(|(full, _)| *full));
        return if could_be { ran_out } else { TagMatch::NotTag };
    }
    let Some(kind) = TAG_NAMES
        .iter()
        .find(|(full, _)| full.eq_ignore_ascii_case(name))
        .map(|&(_, kind)| kind)
    else {
        return TagMatch::NotTag;
    };
    i = skip_spaces(i);
    if i == n {
        return ran_out;
    }
    let self_closing = s[i] == b'/';
    if self_closing {
        i = skip_spaces(i + 1);
        if i == n {
            return ran_out;
        }
    }
    if s[i] != b'>' {
        return TagMatch::NotTag;
    }
    TagMatch::Tag(Tag {
        kind,
        closing,
        self_closing,
        len: i + 1,
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

    #[test]
    fn split_tag_is_still_a_tag() {
        check_all_splits("<think>secret</think>answer", false, ("answer", "secret"));
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
            "< THINK >",
            "<Thinking\t>",
        ] {
            for close in [
                "</think>",
                "</ thinking>",
                "< / Thought >",
                "</ANTTHINKING>",
            ] {
                let text = format!("a {open}hidden{close} b");
                check_all_splits(&text, false, ("a b", "hidden"));
            }
        }
    }

    #[test]
    fn final_tags_removed_content_kept() {
        check_all_splits("<final>The answer.</final>", false, ("The answer.", ""));
        check_all_splits("Intro <final>x</final> outro", false, ("Intro x outro", ""));
    }

    #[test]
    fn self_closing_is_just_removed() {
        check_all_splits("a <thinking/> b", false, ("a b", ""));
        check_all_splits("a<thinking />b", false, ("ab", ""));
    }

    #[test]
    fn tags_in_code_are_text() {
        let fenced = "```\n<think>not hidden</think>\n```\nafter";
        check_all_splits(fenced, false, (fenced, ""));
        let inline = "Use `<think>` to open and `</think>` to close.";
        check_all_splits(inline, false, (inline, ""));
        let tilde = "~~~html\n<final>\n~~~\n<think>x</think>y";
        check_all_splits(tilde, false, ("~~~html\n<final>\n~~~\ny", "x"));
        // A fence opener's info string is code too.
        let info = "```<think>\ncode\n```";
        check_all_splits(info, false, (info, ""));
    }

    #[test]
    fn unclosed_thinking_hides_the_rest() {
        check_all_splits(
            "visible <think>all of\nthis is hidden",
            false,
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
        check_all_splits("a <thi", false, ("a <thi", ""));
        check_all_splits("a < think", false, ("a < think", ""));
        check_all_splits("x </final", false, ("x </final", ""));
    }

    #[test]
    fn lookalikes_are_text() {
        for text in [
            "a < b and c > d",
            "<div>html</div>",
            "<thinker>",
            "<thinkx>",
            "<think\n>",
            "1 <2",
            "<<think>>",
            "<         think                      >",
        ] {
            let expected = if text == "<<think>>" { "<" } else { text };
            let hidden = if text == "<<think>>" { ">" } else { "" };
            check_all_splits(text, false, (expected, hidden));
        }
    }

    #[test]
    fn tidy_after_removed_blocks() {
        check_all_splits(
            "<think>\nplan\n</think>\n\nAnswer",
            false,
            ("Answer", "plan"),
        );
        check_all_splits(
            "Line1\n<think>x</think>\nLine2",
            false,
            ("Line1\nLine2", "x"),
        );
        check_all_splits("P1\n\n<think>x</think>\n\nP2", false, ("P1\n\nP2", "x"));
        check_all_splits("Hello <think>x</think> world", false, ("Hello world", "x"));
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
    fn holds_at_most_a_tag() {
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
    }

    fn tagged_text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            "[a-z <>/`\n]{0,8}",
            Just("<think>".to_string()),
            Just("</think>".to_string()),
            Just("< Thought >".to_string()),
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

    proptest! {
        #[test]
        fn split_invariant(text in tagged_text(), require_final in any::<bool>()) {
            let whole = run_split(&text, &[], require_final);
            prop_assert_eq!(&run_chars(&text, require_final), &whole);
        }

        #[test]
        fn random_splits_invariant(text in tagged_text(), cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..6)) {
            let whole = run(&text);
            let mut cuts: Vec<usize> = cuts
                .iter()
                .map(|ix| ix.index(text.len() + 1))
                .filter(|&c| text.is_char_boundary(c))
                .collect();
            cuts.sort_unstable();
            prop_assert_eq!(run_split(&text, &cuts, false), whole);
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
