//! The silent token (`NO_REPLY`) and the heartbeat token (`HEARTBEAT_OK`) (SPEC §2).
//!
//! Both are words: a token counts only where it is preceded by whitespace or the start of
//! the text, and followed by whitespace or the end of the text. Whitespace here is ASCII
//! whitespace. Matching is case-sensitive (`No` is a reply, never a token prefix).
//!
//! The rules, applied to a whole text by [`normalize_text`] and to a stream by [`TokenGate`]
//! (which gives exactly the same result however the text is split):
//!
//! 1. **Leading heartbeat.** While the text (after leading whitespace) starts with the
//!    heartbeat token, optionally followed by up to 4 ASCII punctuation characters, that
//!    token, the whitespace before it and the whitespace after it are removed.
//! 2. **Trailing tokens.** While the text (ignoring trailing whitespace) ends with the silent
//!    token, or with the heartbeat token plus up to 4 ASCII punctuation characters, and that
//!    token follows whitespace or the start of the text, it is removed together with the
//!    whitespace around it. So `"NO_REPLY"` → `""`, `"Done. NO_REPLY"` → `"Done."`,
//!    `"interject.NO_REPLY"` is unchanged, `"All good. HEARTBEAT_OK!"` → `"All good."`.
//! 3. Nothing else changes: whitespace is only removed at the seam where a token was, text
//!    without a token passes through byte for byte, and a short reply such as `"No"` or
//!    `"NO"` is delivered.
//!
//! A message whose result is empty (or only whitespace) is silent: the engine sends nothing.
//! Trailing-token stripping looks at most [`MAX_TOKEN_HOLD`] bytes back from the end; a
//! longer run of trailing tokens loses only the ones within that window.

use super::is_ascii_ws;

/// How far back from the end of the text a trailing token run may reach, in bytes. This is
/// also the most the [`TokenGate`] holds back once the first bytes of the message are
/// decided.
pub(crate) const MAX_TOKEN_HOLD: usize = 256;

/// Which tokens are recognised. A token that is empty or contains whitespace is disabled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TokenConfig {
    /// The silent token (default `NO_REPLY`); `None` disables it.
    pub silent: Option<String>,
    /// The heartbeat token (default `HEARTBEAT_OK`); `None` disables it.
    pub heartbeat: Option<String>,
}

impl Default for TokenConfig {
    fn default() -> Self {
        TokenConfig {
            silent: Some("NO_REPLY".to_string()),
            heartbeat: Some("HEARTBEAT_OK".to_string()),
        }
    }
}

impl TokenConfig {
    fn silent_bytes(&self) -> Option<&[u8]> {
        usable(self.silent.as_deref())
    }

    fn heartbeat_bytes(&self) -> Option<&[u8]> {
        usable(self.heartbeat.as_deref())
    }
}

fn usable(token: Option<&str>) -> Option<&[u8]> {
    token
        .map(str::as_bytes)
        .filter(|t| !t.is_empty() && !t.iter().copied().any(is_ascii_ws))
}

/// Whether `text` is silent: trimmed of ASCII whitespace, it is exactly the silent token.
#[cfg(test)]
pub(crate) fn is_silent(config: &TokenConfig, text: &str) -> bool {
    config
        .silent_bytes()
        .is_some_and(|s| trim_ws(text.as_bytes()) == s)
}

/// Applies the token rules (module docs) to a whole text: the result is `text` without a
/// leading heartbeat token, without trailing silent/heartbeat tokens, and without the
/// whitespace that touched them. Always a sub-slice of `text`; empty when nothing is left
/// to send. The dispatcher calls this on every outgoing payload's text; [`TokenGate`] gives
/// the same result for a streamed message.
pub(crate) fn normalize_text<'a>(config: &TokenConfig, text: &'a str) -> &'a str {
    let tokens = Tokens::new(config);
    let drop = tokens.head_scan(text.as_bytes(), true).unwrap_or_default();
    let rest = &text[drop..];
    let q = tokens.candidate_start(rest.as_bytes(), true);
    let keep = tokens.tail_keep(&rest.as_bytes()[q..], q == 0);
    &rest[..q + keep]
}

/// The token rules applied to a stream of text: holds back text that may still turn out to
/// be a token (the start of the message while it may be a heartbeat or silent token, and a
/// trailing whitespace-plus-token-prefix run) and decides it when more text arrives or the
/// message ends. One per stream; [`TokenGate::finish`] at the end of each message.
#[derive(Clone, Debug)]
pub(crate) struct TokenGate {
    tokens: Tokens,
    /// The start of the message has been decided (no leading heartbeat can come any more).
    head_decided: bool,
    /// The start of the message, held while it may still be a leading heartbeat token.
    head: String,
    /// The held trailing candidate.
    tail: String,
    /// The tail stage has released at least one byte of this message.
    released_any: bool,
}

impl TokenGate {
    /// A gate for `config`.
    pub(crate) fn new(config: &TokenConfig) -> Self {
        TokenGate {
            tokens: Tokens::new(config),
            head_decided: false,
            head: String::new(),
            tail: String::new(),
            released_any: false,
        }
    }

    /// Feeds the next piece of text; appends the text that is decided to `out`.
    pub(crate) fn push(&mut self, delta: &str, out: &mut String) {
        if delta.is_empty() {
            return;
        }
        if self.head_decided {
            self.feed_tail(delta, out);
            return;
        }
        self.head.push_str(delta);
        if let Some(drop) = self.tokens.head_scan(self.head.as_bytes(), false) {
            self.head_decided = true;
            let head = std::mem::take(&mut self.head);
            self.feed_tail(&head[drop..], out);
            self.head = head;
            self.head.clear();
        }
    }

    /// A boundary inside the message where buffered text must go out first (before a media
    /// payload or a tool call): decides what is held as if the text ended here (a trailing
    /// token is stripped, as the dispatcher would strip it from that payload) and appends
    /// the rest to `out`. Later text continues the same message.
    pub(crate) fn flush(&mut self, out: &mut String) {
        if !self.head_decided {
            self.head_decided = true;
            let head = std::mem::take(&mut self.head);
            let drop = self
                .tokens
                .head_scan(head.as_bytes(), true)
                .unwrap_or_default();
            self.feed_tail(&head[drop..], out);
            self.head = head;
            self.head.clear();
        }
        let keep = self
            .tokens
            .tail_keep(self.tail.as_bytes(), !self.released_any);
        if keep > 0 {
            out.push_str(&self.tail[..keep]);
            self.released_any = true;
        }
        self.tail.clear();
    }

    /// Ends the message: [`TokenGate::flush`], then resets for the next message.
    pub(crate) fn finish(&mut self, out: &mut String) {
        self.flush(out);
        self.reset();
    }

    /// Forgets the current message, keeping buffer capacity.
    pub(crate) fn reset(&mut self) {
        self.head_decided = false;
        self.head.clear();
        self.tail.clear();
        self.released_any = false;
    }

    /// Text after the decided head: release all but the trailing candidate.
    fn feed_tail(&mut self, chunk: &str, out: &mut String) {
        if chunk.is_empty() {
            return;
        }
        let bytes = chunk.as_bytes();
        if !self.tokens.alphabet[bytes[bytes.len() - 1] as usize] {
            // Fast path for the common case, exactly what the general path below does here:
            // the last byte cannot be part of a token run, so `region_start(bytes)` is
            // `chunk.len()` (not 0), the held text is released, and `candidate_start`
            // finds no candidate in `chunk`, which is released whole.
            out.push_str(&self.tail);
            self.tail.clear();
            out.push_str(chunk);
            self.released_any = true;
            return;
        }
        if !self.tail.is_empty() && self.tokens.region_start(bytes) == 0 {
            // The candidate may reach back into what is held: decide on both together.
            self.tail.push_str(chunk);
            let q = self
                .tokens
                .candidate_start(self.tail.as_bytes(), !self.released_any);
            if q > 0 {
                out.push_str(&self.tail[..q]);
                self.released_any = true;
                self.tail.drain(..q);
            }
            return;
        }
        if !self.tail.is_empty() {
            // A byte that cannot be part of a token run separates the held text from any
            // new candidate: the held text is plain text after all.
            out.push_str(&self.tail);
            self.tail.clear();
            self.released_any = true;
        }
        let q = self.tokens.candidate_start(bytes, !self.released_any);
        if q > 0 {
            out.push_str(&chunk[..q]);
            self.released_any = true;
        }
        self.tail.push_str(&chunk[q..]);
    }
}

/// The usable tokens and the set of bytes a trailing token run may contain.
#[derive(Clone, Debug)]
struct Tokens {
    silent: Option<Box<[u8]>>,
    heartbeat: Option<Box<[u8]>>,
    /// Bytes that may appear in a trailing run: whitespace, punctuation, token bytes.
    alphabet: [bool; 256],
}

/// Up to 4 ASCII punctuation characters may follow a heartbeat token.
const MAX_HEARTBEAT_PUNCT: usize = 4;

impl Tokens {
    fn new(config: &TokenConfig) -> Self {
        let silent: Option<Box<[u8]>> = config.silent_bytes().map(Into::into);
        let heartbeat: Option<Box<[u8]>> = config.heartbeat_bytes().map(Into::into);
        let mut alphabet = [false; 256];
        for b in 0..=255u8 {
            alphabet[b as usize] = is_ascii_ws(b) || b.is_ascii_punctuation();
        }
        for token in [&silent, &heartbeat].into_iter().flatten() {
            for &b in token.iter() {
                alphabet[b as usize] = true;
            }
        }
        Tokens {
            silent,
            heartbeat,
            alphabet,
        }
    }

    /// Decides the start of a message. `None`: cannot tell yet (only when `!at_end`).
    /// `Some(n)`: the first `n` bytes are a leading heartbeat run to drop (0 when there is
    /// none: leading whitespace is then kept).
    fn head_scan(&self, s: &[u8], at_end: bool) -> Option<usize> {
        let Some(hb) = self.heartbeat.as_deref() else {
            return Some(0);
        };
        let mut pos = 0;
        let mut stripped = false;
        loop {
            let i = skip_ws(s, pos);
            let drop = if stripped { i } else { 0 };
            if i == s.len() {
                return at_end.then_some(drop);
            }
            let rest = &s[i..];
            if rest.len() < hb.len() {
                return if !at_end && hb.starts_with(rest) {
                    None
                } else {
                    Some(drop)
                };
            }
            if !rest.starts_with(hb) {
                return Some(drop);
            }
            let j = i + hb.len();
            let k = count_punct(&s[j..]);
            if j + k == s.len() {
                // The token (and its punctuation) ends the text so far.
                return at_end.then_some(s.len());
            }
            if !is_ascii_ws(s[j + k]) {
                return Some(drop);
            }
            pos = j + k;
            stripped = true;
        }
    }

    /// Where the trailing candidate of `s` starts: the earliest position, at most
    /// [`MAX_TOKEN_HOLD`] bytes from the end, at the start of a whitespace run (or at 0 when
    /// `at_start`, the start of the message), from which the rest may still be a run of
    /// tokens. `s.len()` when there is none.
    fn candidate_start(&self, s: &[u8], at_start: bool) -> usize {
        let r = self.region_start(s);
        for q in r..s.len() {
            let run_start = is_ascii_ws(s[q]) && (q == r || !is_ascii_ws(s[q - 1]));
            let from_start = q == 0 && at_start;
            if (run_start || from_start) && self.is_run_prefix(&s[q..], from_start) {
                return q;
            }
        }
        s.len()
    }

    /// The start of the longest suffix (at most [`MAX_TOKEN_HOLD`] bytes) made only of bytes
    /// a token run may contain. A candidate cannot start before it.
    fn region_start(&self, s: &[u8]) -> usize {
        let floor = s.len().saturating_sub(MAX_TOKEN_HOLD);
        let mut r = s.len();
        while r > floor && self.alphabet[s[r - 1] as usize] {
            r -= 1;
        }
        r
    }

    /// Whether `s` is the beginning of (or all of) a run of tokens: whitespace, then tokens
    /// each preceded by whitespace (the first may instead sit at the start of the message
    /// when `at_start`), then whitespace.
    fn is_run_prefix(&self, s: &[u8], at_start: bool) -> bool {
        let mut i = 0;
        let mut need_ws = !at_start;
        'tokens: loop {
            let ws_start = i;
            i = skip_ws(s, i);
            if i == s.len() {
                return true;
            }
            if need_ws && i == ws_start {
                return false;
            }
            need_ws = true;
            let rest = &s[i..];
            if let Some(silent) = self.silent.as_deref() {
                if rest.len() <= silent.len() {
                    if silent.starts_with(rest) {
                        return true;
                    }
                } else if rest.starts_with(silent) && is_ascii_ws(rest[silent.len()]) {
                    i += silent.len();
                    continue 'tokens;
                }
            }
            if let Some(hb) = self.heartbeat.as_deref() {
                if rest.len() <= hb.len() {
                    if hb.starts_with(rest) {
                        return true;
                    }
                } else if rest.starts_with(hb) {
                    let after = hb.len() + count_punct(&rest[hb.len()..]);
                    if after == rest.len() {
                        return true;
                    }
                    if is_ascii_ws(rest[after]) {
                        i += after;
                        continue 'tokens;
                    }
                }
            }
            return false;
        }
    }

    /// How much of the trailing candidate `s` to keep at the end of the text: trailing
    /// tokens and the whitespace around them are cut off (module docs, rule 2).
    fn tail_keep(&self, s: &[u8], at_start: bool) -> usize {
        let boundary = |q: usize| {
            if q == 0 {
                at_start
            } else {
                is_ascii_ws(s[q - 1])
            }
        };
        let mut end = s.len();
        let mut stripped = false;
        'strip: loop {
            let e = trim_ws_end(s, end);
            let silent_at_end = self
                .silent
                .as_deref()
                .filter(|silent| s[..e].ends_with(silent) && boundary(e - silent.len()));
            if let Some(silent) = silent_at_end {
                end = e - silent.len();
                stripped = true;
                continue 'strip;
            }
            if let Some(hb) = self.heartbeat.as_deref() {
                for k in 0..=MAX_HEARTBEAT_PUNCT.min(e) {
                    if k > 0 && !s[e - k].is_ascii_punctuation() {
                        break;
                    }
                    let e2 = e - k;
                    if s[..e2].ends_with(hb) && boundary(e2 - hb.len()) {
                        end = e2 - hb.len();
                        stripped = true;
                        continue 'strip;
                    }
                }
            }
            break;
        }
        if stripped {
            trim_ws_end(s, end)
        } else {
            s.len()
        }
    }
}

fn skip_ws(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && is_ascii_ws(s[i]) {
        i += 1;
    }
    i
}

fn trim_ws_end(s: &[u8], mut end: usize) -> usize {
    while end > 0 && is_ascii_ws(s[end - 1]) {
        end -= 1;
    }
    end
}

#[cfg(test)]
fn trim_ws(s: &[u8]) -> &[u8] {
    let start = skip_ws(s, 0);
    &s[start..trim_ws_end(s, s.len()).max(start)]
}

fn count_punct(s: &[u8]) -> usize {
    s.iter()
        .take(MAX_HEARTBEAT_PUNCT)
        .take_while(|b| b.is_ascii_punctuation())
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn run_split_with(config: &TokenConfig, text: &str, cuts: &[usize]) -> String {
        let mut gate = TokenGate::new(config);
        let mut out = String::new();
        let mut start = 0;
        for &c in cuts {
            gate.push(&text[start..c], &mut out);
            start = c;
        }
        gate.push(&text[start..], &mut out);
        gate.finish(&mut out);
        out
    }

    fn run_split(text: &str, cuts: &[usize]) -> String {
        run_split_with(&TokenConfig::default(), text, cuts)
    }

    fn run_chars(text: &str) -> String {
        let cuts: Vec<usize> = text.char_indices().map(|(i, _)| i).skip(1).collect();
        run_split(text, &cuts)
    }

    /// Every two-piece split, one char at a time, whole, and the pure function agree.
    fn check(text: &str, expected: &str) {
        let config = TokenConfig::default();
        assert_eq!(
            normalize_text(&config, text),
            expected,
            "normalize {text:?}"
        );
        assert_eq!(run_split(text, &[]), expected, "whole {text:?}");
        for (i, _) in text.char_indices().skip(1) {
            assert_eq!(run_split(text, &[i]), expected, "split at {i} of {text:?}");
        }
        assert_eq!(run_chars(text), expected, "char by char {text:?}");
    }

    #[test]
    fn silent_token() {
        check("NO_REPLY", "");
        check("  NO_REPLY \n", "");
        check("Done. NO_REPLY", "Done.");
        check("Done.\n\nNO_REPLY\n", "Done.");
        check("interject.NO_REPLY", "interject.NO_REPLY");
        check(
            "NO_REPLY is what I would say",
            "NO_REPLY is what I would say",
        );
        check("NO_REPLYING", "NO_REPLYING");
    }

    #[test]
    fn short_replies_are_delivered() {
        for text in [
            "No",
            "NO",
            "N",
            "NO_RE",
            "No.",
            "NO!",
            "Nope",
            "NO_REPLY.",
            "ok NO_",
        ] {
            check(text, text);
        }
    }

    #[test]
    fn heartbeat_token() {
        check("HEARTBEAT_OK", "");
        check("HEARTBEAT_OK.", "");
        check("HEARTBEAT_OK Status is fine.", "Status is fine.");
        check("HEARTBEAT_OK\n\nStatus is fine.", "Status is fine.");
        check("HEARTBEAT_OK... all quiet", "all quiet");
        check("All good. HEARTBEAT_OK", "All good.");
        check("All good.\nHEARTBEAT_OK!!!!", "All good.");
        check("All good. HEARTBEAT_OK!!!!!", "All good. HEARTBEAT_OK!!!!!");
        check("Middle HEARTBEAT_OK stays.", "Middle HEARTBEAT_OK stays.");
        check("HEARTBEAT_OKAY then", "HEARTBEAT_OKAY then");
        check("  HEARTBEAT_OK  HEARTBEAT_OK  x", "x");
        check("HEARTBEAT_OK\nNO_REPLY", "");
        check("Report. NO_REPLY HEARTBEAT_OK", "Report.");
        check("Hi  HEARTBEAT_OK  ", "Hi");
    }

    #[test]
    fn sample_files() {
        let config = TokenConfig::default();
        let silent = include_str!("../../tests/data/silent-reply.md");
        let both = include_str!("../../tests/data/silent-and-heartbeat.md");
        assert_eq!(normalize_text(&config, silent), "");
        assert!(is_silent(&config, silent));
        assert_eq!(normalize_text(&config, both), "");
        assert_eq!(run_chars(silent), "");
        assert_eq!(run_chars(both), "");
    }

    #[test]
    fn disabled_and_custom_tokens() {
        let none = TokenConfig {
            silent: None,
            heartbeat: None,
        };
        assert_eq!(run_split_with(&none, "NO_REPLY", &[2]), "NO_REPLY");
        assert_eq!(normalize_text(&none, "HEARTBEAT_OK"), "HEARTBEAT_OK");
        assert!(!is_silent(&none, "NO_REPLY"));
        let custom = TokenConfig {
            silent: Some("[silent]".into()),
            heartbeat: Some("".into()),
        };
        assert_eq!(run_split_with(&custom, "ok [silent]", &[5]), "ok");
        assert_eq!(run_split_with(&custom, "HEARTBEAT_OK", &[]), "HEARTBEAT_OK");
        let spaced = TokenConfig {
            silent: Some("NO REPLY".into()),
            heartbeat: None,
        };
        assert_eq!(normalize_text(&spaced, "NO REPLY"), "NO REPLY");
    }

    #[test]
    fn streaming_holds_only_candidates() {
        let mut gate = TokenGate::new(&TokenConfig::default());
        let mut out = String::new();
        gate.push("NO", &mut out);
        assert_eq!(out, "", "a prefix of the silent token is held");
        gate.push(" way", &mut out);
        assert_eq!(out, "NO way");
        gate.push(" NO_RE", &mut out);
        assert_eq!(out, "NO way");
        gate.push("PLY", &mut out);
        assert_eq!(out, "NO way");
        gate.push(" really", &mut out);
        assert_eq!(out, "NO way NO_REPLY really");
        gate.finish(&mut out);
        assert_eq!(out, "NO way NO_REPLY really");
        // Plain prose flows through except trailing whitespace.
        gate.push("Hello there, ", &mut out);
        assert_eq!(out, "NO way NO_REPLY reallyHello there,");
    }

    #[test]
    fn flush_releases_held_text_and_continues() {
        let mut gate = TokenGate::new(&TokenConfig::default());
        let mut out = String::new();
        gate.push("Chart:\n\n", &mut out);
        assert_eq!(out, "Chart:");
        gate.flush(&mut out);
        assert_eq!(out, "Chart:\n\n");
        gate.push("More. NO_REPLY", &mut out);
        gate.flush(&mut out);
        assert_eq!(out, "Chart:\n\nMore.");
        // Not at the start of the message any more: a leading heartbeat is plain text now.
        gate.push("HEARTBEAT_OK x", &mut out);
        gate.finish(&mut out);
        assert_eq!(out, "Chart:\n\nMore.HEARTBEAT_OK x");
    }

    #[test]
    fn pathological_runs_terminate() {
        let long = "x ".to_string() + &" NO_REPLY".repeat(200);
        let got = run_split(&long, &[]);
        assert_eq!(got, normalize_text(&TokenConfig::default(), &long));
        assert!(got.len() < long.len());
        let spaces = " ".repeat(10_000);
        assert_eq!(run_split(&spaces, &[]), spaces);
    }

    fn token_text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            "[a-zA-Z .!\n]{0,6}",
            Just("NO_REPLY".to_string()),
            Just("NO".to_string()),
            Just("HEARTBEAT_OK".to_string()),
            Just("HEARTBEAT".to_string()),
            Just(" ".to_string()),
            Just("!!".to_string()),
            Just("é".to_string()),
        ];
        prop::collection::vec(piece, 0..12).prop_map(|v| v.concat())
    }

    proptest! {
        #[test]
        fn gate_matches_normalize(text in token_text()) {
            let expected = normalize_text(&TokenConfig::default(), &text).to_string();
            prop_assert_eq!(run_chars(&text), expected.clone());
            prop_assert_eq!(run_split(&text, &[]), expected);
        }

        #[test]
        fn random_splits(text in token_text(), cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..6)) {
            let mut cuts: Vec<usize> = cuts
                .iter()
                .map(|ix| ix.index(text.len() + 1))
                .filter(|&c| text.is_char_boundary(c))
                .collect();
            cuts.sort_unstable();
            prop_assert_eq!(run_split(&text, &cuts), run_split(&text, &[]));
        }

        #[test]
        fn text_without_tokens_passes_through(text in any::<String>()) {
            prop_assume!(!text.contains("NO_REPLY") && !text.contains("HEARTBEAT_OK"));
            prop_assert_eq!(run_chars(&text), text.clone());
            prop_assert_eq!(normalize_text(&TokenConfig::default(), &text), text.as_str());
        }
    }
}
