//! The silent token (`NO_REPLY`) and the heartbeat token (`HEARTBEAT_OK`) (SPEC §2).
//!
//! Token rules apply to the **edges of a reply** — the start and the end of one assistant
//! message's answer text — and to host payloads as a whole, never at the seams between the
//! blocks inside a reply: a paragraph in the middle of a reply that ends in `NO_REPLY` keeps
//! its words. Tokens are matched ignoring ASCII case.
//!
//! The forms, applied to a whole text by [`normalize_text`] and to a stream by [`TokenGate`]
//! (which gives exactly the same result however the text is split):
//!
//! 1. **Silent text.** The whole text (whitespace around it ignored) is silent, and nothing
//!    is sent, when it is
//!    - one or more silent tokens separated by whitespace (`NO_REPLY`, `no_reply`,
//!      `NO_REPLY NO_REPLY`, `NO_REPLY\n\nNO_REPLY`), possibly wrapped in punctuation
//!      (`"NO_REPLY"`, `**NO_REPLY**`, `NO_REPLY.`, `“NO_REPLY”`): the punctuation characters
//!      of [`is_edge_punct`] are stripped from both ends first;
//!    - the JSON action text `{"action": "NO_REPLY"}` (whitespace allowed between the JSON
//!      tokens; the only key is `action`).
//! 2. **Leading heartbeat.** While the text (after leading whitespace) starts with a heartbeat
//!    word — the token, optionally wrapped in simple markup (`**`, `*`, `__`, `_`, `` ` ``,
//!    `<b>`, `<strong>`, `<em>`, `<i>`, `<code>`) and followed by up to 4 ASCII punctuation
//!    characters — that is followed by whitespace or the end, the word and the whitespace
//!    around it are removed.
//! 3. **Leading silent token.** A run of silent tokens at the start (`NO_REPLY`,
//!    `NO_REPLY NO_REPLY`, `NO_REPLYNO_REPLY`) is removed when the text goes on right after it
//!    with a new word (`NO_REPLYThe user…` → `The user…`, `NO_REPLYhello` → `hello`), or
//!    after whitespace that holds a line break (`NO_REPLY NO_REPLY\nThe user…` →
//!    `The user…`). A token is a whole word, so glued text begins a new word only where the
//!    letter case or the script changes (see [`begins_new_word`]): after `NO_REPLY`, a
//!    lower-case letter or an upper-case one followed by a lower-case one; after
//!    `no_reply`, an upper-case letter; a letter without case (`NO_REPLY好的`). Glued
//!    letters of the token's own case or digits (`NO_REPLYX`, `NO_REPLYING`, `no_reply42`)
//!    make another word, kept whole, and so is a text followed by anything else
//!    (`NO_REPLY: explanation`, `NO_REPLY -- nope`, `NO_REPLY but…`).
//! 4. **Trailing tokens.** While the text (ignoring trailing whitespace) ends with a silent
//!    token or a heartbeat word that follows whitespace (or is the whole text), it is removed
//!    with the whitespace around it: `Done. NO_REPLY` → `Done.`, `All good! <b>HEARTBEAT_OK</b>`
//!    → `All good!`. The first silent token of such a run may instead follow a run of `*`
//!    glued to the text before it, which goes too: `some text **NO_REPLY` → `some text`,
//!    `reasoning**NO_REPLY` → `reasoning`. A token after other punctuation stays:
//!    `interject.NO_REPLY` is delivered as it is.
//! 5. Nothing else changes: whitespace is only removed at a seam where a token was, text
//!    without a token passes through byte for byte, a token in the middle of a sentence stays,
//!    and a short reply such as `No`, `NO` or `NO_RE` is delivered.
//!
//! A text whose result is empty (or only whitespace) is silent: the engine sends nothing.
//! Bounds: the start of a text is decided within its first [`MAX_HEAD_HOLD`] bytes (a text
//! still undecided there keeps its start as it is), and trailing-token stripping looks at
//! most [`MAX_TOKEN_HOLD`] bytes back from the end.

use std::sync::{Arc, LazyLock};

use super::is_ascii_ws;

/// How far back from the end of the text a trailing token run may reach, in bytes. This is
/// also the most the [`TokenGate`] holds back at the end of the text it has seen.
pub(crate) const MAX_TOKEN_HOLD: usize = 256;

/// How many bytes at the start of a text may decide its start (a silent form, a leading
/// token); the [`TokenGate`] holds at most this much of a message's start.
pub(crate) const MAX_HEAD_HOLD: usize = 512;

/// Which tokens are recognised. A token that is empty or contains whitespace is disabled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TokenConfig {
    /// The silent token (default `NO_REPLY`); `None` disables it.
    pub silent: Option<String>,
    /// The heartbeat token (default `HEARTBEAT_OK`); `None` disables it.
    pub heartbeat: Option<String>,
}

/// The default silent token.
const DEFAULT_SILENT: &str = "NO_REPLY";

/// The default heartbeat token.
const DEFAULT_HEARTBEAT: &str = "HEARTBEAT_OK";

impl Default for TokenConfig {
    fn default() -> Self {
        TokenConfig {
            silent: Some(DEFAULT_SILENT.to_string()),
            heartbeat: Some(DEFAULT_HEARTBEAT.to_string()),
        }
    }
}

fn usable(token: Option<&str>) -> Option<Box<[u8]>> {
    token
        .map(str::as_bytes)
        .filter(|t| !t.is_empty() && !t.iter().copied().any(is_ascii_ws))
        .map(Into::into)
}

/// Whether `text` is silent: nothing of it is left to send (module docs).
#[cfg(test)]
pub(crate) fn is_silent(config: &TokenConfig, text: &str) -> bool {
    normalize_text(config, text).trim().is_empty()
}

/// Applies the token rules (module docs) to a whole text: the result is `text` without its
/// silent forms, leading tokens and trailing tokens, and without the whitespace that touched
/// them. Always a sub-slice of `text`; empty when nothing is left to send. The engine calls
/// this on host payloads; [`TokenGate`] gives the same result for a streamed message.
pub(crate) fn normalize_text<'a>(config: &TokenConfig, text: &'a str) -> &'a str {
    let tokens = Tokens::new(config);
    let bytes = text.as_bytes();
    let drop = if bytes.len() <= MAX_HEAD_HOLD {
        tokens.head_scan(bytes, true).unwrap_or(0)
    } else {
        tokens
            .head_scan(&bytes[..MAX_HEAD_HOLD], false)
            .unwrap_or(0)
    };
    let rest = &text[drop..];
    let q = tokens.candidate_start(rest.as_bytes(), true);
    let keep = tokens.tail_keep(&rest.as_bytes()[q..], q == 0);
    &rest[..q + keep]
}

/// The token rules applied to a stream of text: holds back text that may still turn out to
/// be part of a token form (the start of the message until it is decided, and a trailing
/// candidate run) and decides it when more text arrives or the message ends. One per stream;
/// [`TokenGate::finish`] at the end of each message.
///
/// Layout (`repr(C)`): what a push of decided text reads comes first, in one cache line.
#[derive(Clone, Debug)]
#[repr(C)]
pub(crate) struct TokenGate {
    /// The start of the message has been decided.
    head_decided: bool,
    /// The tail stage has released at least one byte of this message.
    released_any: bool,
    /// The held trailing candidate.
    tail: String,
    tokens: Tokens,
    /// The start of the message, held while undecided.
    head: String,
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
    ///
    /// Inlined: once the start is decided, a push of plain text is a few checks and a copy.
    #[inline(always)]
    pub(crate) fn push(&mut self, delta: &str, out: &mut String) {
        if delta.is_empty() {
            return;
        }
        if self.head_decided {
            self.feed_tail(delta, out);
            return;
        }
        self.push_head(delta, out);
    }

    /// [`TokenGate::push`] while the start of the message is undecided: out of line, as
    /// it is only the first few pushes of a message.
    #[inline(never)]
    fn push_head(&mut self, delta: &str, out: &mut String) {
        self.head.push_str(delta);
        let bytes = self.head.as_bytes();
        let drop = if bytes.len() > MAX_HEAD_HOLD {
            Some(
                self.tokens
                    .head_scan(&bytes[..MAX_HEAD_HOLD], false)
                    .unwrap_or(0),
            )
        } else {
            self.tokens.head_scan(bytes, false)
        };
        if let Some(drop) = drop {
            self.release_head(drop, out);
        }
    }

    /// A boundary inside the message where buffered text must go out first (before a media
    /// payload or a tool call). The start of the message is decided as if the text ended
    /// here (a caption that is only the silent token is silent); held trailing text is
    /// released as it is, since this is a seam inside the reply, not its end. Later text
    /// continues the same message.
    pub(crate) fn flush(&mut self, out: &mut String) {
        self.decide_head_at_end(out);
        if !self.tail.is_empty() {
            out.push_str(&self.tail);
            self.tail.clear();
            self.released_any = true;
        }
    }

    /// Ends the message: the start is decided, trailing tokens are stripped, and the gate is
    /// reset for the next message.
    pub(crate) fn finish(&mut self, out: &mut String) {
        self.decide_head_at_end(out);
        let keep = self
            .tokens
            .tail_keep(self.tail.as_bytes(), !self.released_any);
        out.push_str(&self.tail[..keep]);
        self.reset();
    }

    /// The trailing text held back once the start of the message is decided (empty before).
    pub(crate) fn held_tail(&self) -> &str {
        &self.tail
    }

    /// Forgets the current message, keeping buffer capacity.
    pub(crate) fn reset(&mut self) {
        self.head_decided = false;
        self.head.clear();
        self.tail.clear();
        self.released_any = false;
    }

    fn decide_head_at_end(&mut self, out: &mut String) {
        if self.head_decided {
            return;
        }
        // The head never grows past the bound undecided: `push` decides it there.
        let drop = self
            .tokens
            .head_scan(self.head.as_bytes(), true)
            .unwrap_or(0);
        self.release_head(drop, out);
    }

    fn release_head(&mut self, drop: usize, out: &mut String) {
        self.head_decided = true;
        let head = std::mem::take(&mut self.head);
        self.feed_tail(&head[drop..], out);
        self.head = head;
        self.head.clear();
    }

    /// Text after the decided head: release all but the trailing candidate.
    #[inline(always)]
    fn feed_tail(&mut self, chunk: &str, out: &mut String) {
        if chunk.is_empty() {
            return;
        }
        let bytes = chunk.as_bytes();
        if self.tail.is_empty()
            && (!self.tokens.sets.alphabet.contains(bytes[bytes.len() - 1])
                || (self.released_any && self.tokens.no_run_after_text(bytes)))
        {
            // The common cases with nothing held, exactly what the general path below does
            // for them: `chunk` is released whole (see the comments there and at
            // `Tokens::no_run_after_text`).
            out.push_str(chunk);
            self.released_any = true;
            return;
        }
        self.feed_tail_general(chunk, out);
    }

    /// [`TokenGate::feed_tail`] past its fast path: out of line, so that stays small.
    #[inline(never)]
    fn feed_tail_general(&mut self, chunk: &str, out: &mut String) {
        let bytes = chunk.as_bytes();
        if !self.tokens.sets.alphabet.contains(bytes[bytes.len() - 1]) {
            // As in the fast path, with held text: it is released first.
            if !self.tail.is_empty() {
                out.push_str(&self.tail);
                self.tail.clear();
            }
            out.push_str(chunk);
            self.released_any = true;
            return;
        }
        if self.tail.is_empty() && self.released_any && !self.tokens.may_end_run(bytes) {
            // The other common case, again exactly what the general path does: a run must
            // end with its last word, and the chunk's last word can neither be (the start
            // of) a token word nor hold a glued `*`; a candidate could only start in text
            // already released, which was no candidate then and cannot become one.
            out.push_str(chunk);
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

/// How far a piece of syntax matched the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Match {
    /// Matched completely, ending at this index.
    Full(usize),
    /// The input ends inside it: it may still match.
    Prefix,
    No,
}

/// Markup a heartbeat token may be wrapped in: opener and closer (ASCII case ignored).
const MARKUP: [(&[u8], &[u8]); 11] = [
    (b"", b""),
    (b"**", b"**"),
    (b"*", b"*"),
    (b"__", b"__"),
    (b"_", b"_"),
    (b"`", b"`"),
    (b"<b>", b"</b>"),
    (b"<strong>", b"</strong>"),
    (b"<em>", b"</em>"),
    (b"<i>", b"</i>"),
    (b"<code>", b"</code>"),
];

/// Up to 4 ASCII punctuation characters may follow a heartbeat word.
const MAX_HEARTBEAT_PUNCT: usize = 4;

/// Matches `lit` at `s[i..]`, ignoring ASCII case.
fn match_lit(s: &[u8], i: usize, lit: &[u8]) -> Match {
    let rest = &s[i.min(s.len())..];
    if rest.len() >= lit.len() {
        if rest[..lit.len()].eq_ignore_ascii_case(lit) {
            Match::Full(i + lit.len())
        } else {
            Match::No
        }
    } else if lit[..rest.len()].eq_ignore_ascii_case(rest) {
        Match::Prefix
    } else {
        Match::No
    }
}

/// Characters stripped from both ends of a text before it is compared with the silent
/// token: ASCII punctuation (Unicode category P, so `*`, `_`, quotes, brackets, `.`, but not
/// symbols such as `` ` ``, `~`, `$`, `<`, `>`), curly quotes, guillemets, CJK brackets and
/// the ellipsis. Returns the character's length in bytes at `s[i..]`, or 0.
fn is_edge_punct(s: &[u8], i: usize) -> usize {
    let Some(&b) = s.get(i) else { return 0 };
    if b.is_ascii() {
        let p = b.is_ascii_punctuation() && !matches!(b, b'$' | b'+' | b'<' | b'=' | b'>');
        let p = p && !matches!(b, b'^' | b'`' | b'|' | b'~');
        return usize::from(p);
    }
    let end = (i + 4).min(s.len());
    let Some(c) = (i + 1..=end)
        .find_map(|e| std::str::from_utf8(&s[i..e]).ok())
        .and_then(|t| t.chars().next())
    else {
        return 0;
    };
    let punct = matches!(
        c,
        '\u{2018}'
            ..='\u{201F}' | '«' | '»' | '‹' | '›' | '「' | '」' | '『' | '』' | '…' | '、' | '。'
    );
    if punct { c.len_utf8() } else { 0 }
}

/// The char starting at `s[i]`: `Some(Some(c))`, `Some(None)` when the bytes there are no
/// char (invalid UTF-8), `None` when it is cut off by the end of `s` (or `i` is the end).
fn char_at(s: &[u8], i: usize) -> Option<Option<char>> {
    let &b = s.get(i)?;
    if b.is_ascii() {
        return Some(Some(char::from(b)));
    }
    let end = (i + 4).min(s.len());
    for e in i + 1..=end {
        match std::str::from_utf8(&s[i..e]) {
            Ok(t) => return Some(t.chars().next()),
            Err(err) if err.error_len().is_some() => return Some(None),
            Err(_) => {}
        }
    }
    None
}

/// Whether the text at `s[i..]`, glued right after the silent token `written` (as the model
/// wrote it), visibly begins a new word (module docs, rule 3): `Some(answer)`, or `None`
/// when the chars at `i` that decide it are cut off by the end of `s` (at the end of the
/// whole text, the caller reads that as no new word).
///
/// A token is a whole word, so only a change of letter case or of script marks where it
/// ends: after an upper-case token (`NO_REPLY`), a lower-case letter (`NO_REPLYhello`) or
/// an upper-case letter followed by a lower-case one (`NO_REPLYThe`); after a lower-case
/// token (`no_reply`), an upper-case letter (`no_replyThe`); after any token, a letter
/// without case (`NO_REPLY好的`). A digit, or letters of the token's own case
/// (`NO_REPLYX`, `NO_REPLYING`, `no_reply42`, `no_replyx`), continue the token's word.
fn begins_new_word(s: &[u8], i: usize, written: &[u8]) -> Option<bool> {
    let Some(c) = char_at(s, i)? else {
        return Some(false);
    };
    if !c.is_alphabetic() {
        return Some(false);
    }
    if !c.is_lowercase() && !c.is_uppercase() {
        return Some(true);
    }
    // The case of the token's last cased letter, as written.
    let upper_token = match written.iter().rev().find(|b| b.is_ascii_alphabetic()) {
        Some(b) => b.is_ascii_uppercase(),
        None => return Some(true),
    };
    if !upper_token {
        return Some(c.is_uppercase());
    }
    if c.is_lowercase() {
        return Some(true);
    }
    let next = char_at(s, i + c.len_utf8())?;
    Some(next.is_some_and(char::is_lowercase))
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

/// A set of bytes, one bit each (a 256-entry `bool` table would take 256 bytes of every
/// stream's memory; this takes 32).
#[derive(Clone, Copy, Debug, Default)]
struct ByteSet([u64; 4]);

impl ByteSet {
    fn insert(&mut self, b: u8) {
        self.0[usize::from(b >> 6)] |= 1 << (b & 63);
    }

    #[inline]
    fn contains(&self, b: u8) -> bool {
        self.0[usize::from(b >> 6)] & (1 << (b & 63)) != 0
    }
}

/// The usable tokens and the set of bytes a trailing token run may contain.
///
/// Layout (`repr(C)`): `sets`, read by every push of text, first, next to the gate's other
/// per-push fields.
#[derive(Clone, Debug)]
#[repr(C)]
struct Tokens {
    /// The byte sets of these tokens: shared by every gate with the default tokens (one set
    /// of cache lines for all streams, instead of 64 B in each).
    sets: Arc<TokenSets>,
    silent: Option<Box<[u8]>>,
    heartbeat: Option<Box<[u8]>>,
}

/// The byte sets a [`Tokens`] matches with.
#[derive(Debug)]
struct TokenSets {
    /// Bytes that may appear in a trailing run: whitespace, punctuation, the letters of the
    /// tokens and of the markup tags, in both cases.
    alphabet: ByteSet,
    /// Bytes a token word may start with: the tokens' first letters (both cases), the
    /// markup openers' first bytes, and `*` (a glued silent token).
    word_first: ByteSet,
}

/// The sets of the default tokens (`NO_REPLY`, `HEARTBEAT_OK`), built once.
static DEFAULT_SETS: LazyLock<Arc<TokenSets>> = LazyLock::new(|| {
    Arc::new(TokenSets::of(
        Some(DEFAULT_SILENT.as_bytes()),
        Some(DEFAULT_HEARTBEAT.as_bytes()),
    ))
});

impl TokenSets {
    fn of(silent: Option<&[u8]>, heartbeat: Option<&[u8]>) -> Self {
        let mut alphabet = ByteSet::default();
        for b in 0..=255u8 {
            if is_ascii_ws(b) || b.is_ascii_punctuation() {
                alphabet.insert(b);
            }
        }
        let markup = MARKUP.iter().flat_map(|(o, c)| o.iter().chain(c.iter()));
        let letters = [silent, heartbeat]
            .into_iter()
            .flatten()
            .flat_map(|t| t.iter())
            .chain(markup);
        for &b in letters {
            alphabet.insert(b.to_ascii_lowercase());
            alphabet.insert(b.to_ascii_uppercase());
        }
        let mut word_first = ByteSet::default();
        let firsts = [silent, heartbeat]
            .into_iter()
            .flatten()
            .filter_map(|t| t.first())
            .chain(MARKUP.iter().filter_map(|(o, _)| o.first()))
            .chain([&b'*']);
        for &b in firsts {
            word_first.insert(b.to_ascii_lowercase());
            word_first.insert(b.to_ascii_uppercase());
        }
        TokenSets {
            alphabet,
            word_first,
        }
    }
}

impl Tokens {
    fn new(config: &TokenConfig) -> Self {
        let silent = usable(config.silent.as_deref());
        let heartbeat = usable(config.heartbeat.as_deref());
        let default_tokens = silent.as_deref() == Some(DEFAULT_SILENT.as_bytes())
            && heartbeat.as_deref() == Some(DEFAULT_HEARTBEAT.as_bytes());
        let sets = if default_tokens {
            Arc::clone(&DEFAULT_SETS)
        } else {
            Arc::new(TokenSets::of(silent.as_deref(), heartbeat.as_deref()))
        };
        Tokens {
            silent,
            heartbeat,
            sets,
        }
    }

    /// Whether a trailing run could end with `s`'s last word (the bytes after its last
    /// whitespace): false when that word is not empty, cannot start a token word and holds
    /// no `*`.
    #[inline(always)]
    fn may_end_run(&self, s: &[u8]) -> bool {
        // One backward pass over the last word (deltas are short; no SIMD set-up).
        let mut first = None;
        for &b in s.iter().rev() {
            if is_ascii_ws(b) {
                break;
            }
            if b == b'*' {
                return true;
            }
            first = Some(b);
        }
        first.is_none_or(|b| self.sets.word_first.contains(b))
    }

    /// Whether no trailing run can start in `s`, text that follows released text (so a run
    /// can start neither before `s`, nor at its first byte as the message's start): either
    /// `s`'s last word can neither be (the start of) a token word nor hold a glued `*`
    /// (`!may_end_run`), or `s` holds no whitespace and no `*` at all: a piece of a word
    /// that began in released text, where no run starts ([`Tokens::candidate_start`]
    /// finds none: a run starts at whitespace, at a `*` or at the message's start). One
    /// backward pass over the last word.
    #[inline(always)]
    fn no_run_after_text(&self, s: &[u8]) -> bool {
        let mut first = None;
        for &b in s.iter().rev() {
            if is_ascii_ws(b) {
                return first.is_some_and(|f| !self.sets.word_first.contains(f));
            }
            if b == b'*' {
                return false;
            }
            first = Some(b);
        }
        true
    }

    fn silent_at(&self, s: &[u8], i: usize) -> Match {
        self.silent
            .as_deref()
            .map_or(Match::No, |t| match_lit(s, i, t))
    }

    /// A heartbeat word at `s[i..]`: markup, the token, the same markup, punctuation. `Full`
    /// ends after the punctuation (the most of it, up to 4); the caller checks what follows.
    fn heartbeat_at(&self, s: &[u8], i: usize) -> Match {
        let Some(hb) = self.heartbeat.as_deref() else {
            return Match::No;
        };
        if s.get(i).is_some_and(|&b| !self.sets.word_first.contains(b)) {
            return Match::No;
        }
        let mut prefix = false;
        let first = s.get(i).map(u8::to_ascii_lowercase);
        for &(open, close) in &MARKUP {
            // An opener whose first byte is not the one here: `match_lit` would say `No`.
            if let (Some(&o), Some(b)) = (open.first(), first)
                && o.to_ascii_lowercase() != b
            {
                continue;
            }
            let after = match match_lit(s, i, open) {
                Match::Full(e) => e,
                Match::Prefix => {
                    prefix = true;
                    continue;
                }
                Match::No => continue,
            };
            let after = match match_lit(s, after, hb) {
                Match::Full(e) => e,
                Match::Prefix => {
                    prefix = true;
                    continue;
                }
                Match::No => continue,
            };
            let after = match match_lit(s, after, close) {
                Match::Full(e) => e,
                Match::Prefix => {
                    prefix = true;
                    continue;
                }
                Match::No => continue,
            };
            let punct = s[after..]
                .iter()
                .take(MAX_HEARTBEAT_PUNCT)
                .take_while(|b| b.is_ascii_punctuation())
                .count();
            let end = after + punct;
            match s.get(end) {
                // More punctuation than allowed: not this form (another may still match).
                Some(b) if b.is_ascii_punctuation() => {}
                _ => return Match::Full(end),
            }
        }
        if prefix { Match::Prefix } else { Match::No }
    }

    /// Whether `s` is (`Full`) or may still become (`Prefix`) a silent text (module docs,
    /// rule 1), whitespace around it included.
    fn silent_form(&self, s: &[u8]) -> Match {
        let forms = [
            self.token_run_form(s, false),
            self.token_run_form(s, true),
            self.json_form(s),
        ];
        if forms.iter().any(|m| matches!(m, Match::Full(_))) {
            Match::Full(s.len())
        } else if forms.contains(&Match::Prefix) {
            Match::Prefix
        } else {
            Match::No
        }
    }

    /// `ws* P* S (ws+ S)* P* ws*` where `P` is edge punctuation (only when `punct`).
    fn token_run_form(&self, s: &[u8], punct: bool) -> Match {
        let Some(silent) = self.silent.as_deref() else {
            return Match::No;
        };
        let mut i = skip_ws(s, 0);
        if punct {
            while let n @ 1.. = is_edge_punct(s, i) {
                i += n;
            }
        }
        loop {
            i = match match_lit(s, i, silent) {
                Match::Full(e) => e,
                Match::Prefix => return Match::Prefix,
                Match::No => return Match::No,
            };
            // After a token: more tokens after whitespace, or punctuation, or the end.
            let w = skip_ws(s, i);
            if w == s.len() {
                return Match::Full(w);
            }
            if w > i && !matches!(match_lit(s, w, silent), Match::No) {
                i = w;
                continue;
            }
            if !punct {
                return Match::No;
            }
            let mut j = w;
            while let n @ 1.. = is_edge_punct(s, j) {
                j += n;
            }
            if j == w {
                // A multi-byte punctuation char cut by the end of the text so far.
                return if s.len() - j < 4 && !s[j..].is_ascii() {
                    Match::Prefix
                } else {
                    Match::No
                };
            }
            return if skip_ws(s, j) == s.len() {
                Match::Full(s.len())
            } else {
                Match::No
            };
        }
    }

    /// `{ "action" : " S " }` with whitespace between the JSON tokens.
    fn json_form(&self, s: &[u8]) -> Match {
        let Some(silent) = self.silent.as_deref() else {
            return Match::No;
        };
        let pieces: [&[u8]; 7] = [b"{", b"\"action\"", b":", b"\"", silent, b"\"", b"}"];
        let mut i = 0;
        for piece in pieces {
            // Whitespace is allowed between JSON tokens and inside the quoted value.
            i = skip_ws(s, i);
            i = match match_lit(s, i, piece) {
                Match::Full(e) => e,
                Match::Prefix => return Match::Prefix,
                Match::No => return Match::No,
            };
        }
        if skip_ws(s, i) == s.len() {
            Match::Full(s.len())
        } else {
            Match::No
        }
    }

    /// Decides the start of a text `s`: how many bytes to drop (module docs, rules 1–3).
    /// `None`: more text could change the answer (only when `!at_end`). Once `Some` for a
    /// text, it is the same for every longer text that starts with it.
    fn head_scan(&self, s: &[u8], at_end: bool) -> Option<usize> {
        match self.silent_form(s) {
            Match::Full(_) if at_end => return Some(s.len()),
            Match::Full(_) | Match::Prefix if !at_end => return None,
            _ => {}
        }
        let mut pos = 0;
        let mut stripped = false;
        loop {
            let i = skip_ws(s, pos);
            let drop = if stripped { i } else { 0 };
            if i == s.len() {
                return at_end.then_some(drop);
            }
            match self.heartbeat_at(s, i) {
                Match::Full(e) if e == s.len() => return at_end.then_some(e),
                Match::Full(e) if is_ascii_ws(s[e]) => {
                    pos = e;
                    stripped = true;
                    continue;
                }
                Match::Prefix if !at_end => return None,
                _ => {}
            }
            return self.leading_silent(s, i, at_end, drop);
        }
    }

    /// A run of silent tokens at `s[i..]` (rule 3): the bytes to drop, `drop` (what the
    /// heartbeat rule already dropped) when the run is not removed, `None` when undecided.
    ///
    /// A token glued to the next (`NO_REPLYNO_REPLY`) counts as glued to visible text, as the
    /// newest OpenClaw reads it: the whole run and the whitespace after it go.
    fn leading_silent(&self, s: &[u8], i: usize, at_end: bool, drop: usize) -> Option<usize> {
        let mut e = match self.silent_at(s, i) {
            Match::Full(e) => e,
            Match::Prefix if !at_end => return None,
            _ => return Some(drop),
        };
        let mut glued = false;
        loop {
            if e == s.len() {
                return at_end.then_some(if glued { e } else { drop });
            }
            match self.silent_at(s, e) {
                Match::Full(e2) => {
                    glued = true;
                    e = e2;
                    continue;
                }
                Match::Prefix if !at_end => return None,
                _ => {}
            }
            if !is_ascii_ws(s[e]) {
                let written = &s[e - self.silent.as_deref().map_or(0, <[u8]>::len)..e];
                return match begins_new_word(s, e, written) {
                    Some(true) => Some(e),
                    None if !at_end => None,
                    _ => Some(if glued { e } else { drop }),
                };
            }
            let w = skip_ws(s, e);
            if w == s.len() {
                return at_end.then_some(if glued { w } else { drop });
            }
            match self.silent_at(s, w) {
                Match::Full(e2) => {
                    e = e2;
                    continue;
                }
                Match::Prefix if !at_end => return None,
                _ => {}
            }
            let newline = s[e..w].contains(&b'\n');
            return Some(if newline || glued { w } else { drop });
        }
    }

    /// Where the trailing candidate of `s` starts: the earliest position, at most
    /// [`MAX_TOKEN_HOLD`] bytes from the end, from which the rest may still be a trailing
    /// run (module docs, rule 4). `s.len()` when there is none. A run starts at the start of
    /// a whitespace run, at the start of a `*` run (glued to the text before), or at 0 when
    /// `at_start` (the start of the message).
    fn candidate_start(&self, s: &[u8], at_start: bool) -> usize {
        // The common shape first: a last word that can be no token word (nor hold a glued
        // `*`), then maybe whitespace. No run can reach over that word, so the candidate is
        // the trailing whitespace, if any — what the search below finds too.
        let e = trim_ws_end(s, s.len());
        if s.len() - e <= MAX_TOKEN_HOLD && e > 0 && !self.may_end_run(&s[..e]) {
            return e;
        }
        let r = self.region_start(s);
        for q in r..s.len() {
            let first = q == r;
            let ws_start = is_ascii_ws(s[q]) && (first || !is_ascii_ws(s[q - 1]));
            let star_start = s[q] == b'*' && (first || s[q - 1] != b'*');
            let viable = (ws_start && self.run_prefix(s, q, false))
                || (q == 0 && at_start && self.run_prefix(s, q, true))
                || (star_start && self.glued_run_prefix(s, q));
            if viable {
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
        while r > floor && self.sets.alphabet.contains(s[r - 1]) {
            r -= 1;
        }
        r
    }

    /// Whether `s[i..]` is the beginning of (or all of) a trailing run: words (silent tokens
    /// or heartbeat words) each after whitespace — the first one may instead start right at
    /// `i` when `at_word` — and whitespace at the end.
    ///
    /// The first word may be a silent token behind a run of `*` (`text **NO_REPLY`).
    fn run_prefix(&self, s: &[u8], mut i: usize, mut at_word: bool) -> bool {
        let mut first = true;
        loop {
            let w = skip_ws(s, i);
            if w == s.len() {
                return true;
            }
            if w == i && !at_word {
                return false;
            }
            at_word = false;
            if first && s[w] == b'*' && self.glued_run_prefix(s, w) {
                return true;
            }
            first = false;
            i = match self.word_at(s, w) {
                Match::Full(e) => e,
                Match::Prefix => return true,
                Match::No => return false,
            };
        }
    }

    /// `*`+ then a silent token, then more words after whitespace.
    fn glued_run_prefix(&self, s: &[u8], q: usize) -> bool {
        let k = q + s[q..].iter().take_while(|&&b| b == b'*').count();
        if k == s.len() {
            return true;
        }
        match self.silent_at(s, k) {
            Match::Full(e) => self.run_prefix(s, e, false),
            Match::Prefix => true,
            Match::No => false,
        }
    }

    /// A silent token or a heartbeat word at `s[i..]`, followed by whitespace or the end.
    fn word_at(&self, s: &[u8], i: usize) -> Match {
        let ends_word = |e: usize| e == s.len() || is_ascii_ws(s[e]);
        let silent = self.silent_at(s, i);
        let heartbeat = self.heartbeat_at(s, i);
        for m in [silent, heartbeat] {
            if let Match::Full(e) = m
                && ends_word(e)
            {
                return Match::Full(e);
            }
        }
        if silent == Match::Prefix || heartbeat == Match::Prefix {
            Match::Prefix
        } else {
            Match::No
        }
    }

    /// How much of the trailing candidate `s` to keep (module docs, rule 4): words are cut
    /// from the end while each follows whitespace; a silent token glued to a `*` run, or a
    /// word at the very start (`at_start`), is cut too and ends the run.
    fn tail_keep(&self, s: &[u8], at_start: bool) -> usize {
        let mut end = s.len();
        let mut stripped = false;
        loop {
            let e = trim_ws_end(s, end);
            let Some(start) = self.word_ending_at(s, e) else {
                break;
            };
            if start > 0 && is_ascii_ws(s[start - 1]) {
                end = start;
                stripped = true;
                continue;
            }
            if start == 0 && at_start {
                end = 0;
                stripped = true;
                break;
            }
            let stars = s[..start].iter().rev().take_while(|&&b| b == b'*').count();
            let is_silent = self
                .silent
                .as_deref()
                .is_some_and(|t| e - start == t.len() && s[start..e].eq_ignore_ascii_case(t));
            if stars > 0 && is_silent {
                end = start - stars;
                stripped = true;
            }
            break;
        }
        if stripped {
            trim_ws_end(s, end)
        } else {
            s.len()
        }
    }

    /// The start of a silent token or heartbeat word that ends exactly at `e`, if any.
    fn word_ending_at(&self, s: &[u8], e: usize) -> Option<usize> {
        if let Some(t) = self.silent.as_deref()
            && e >= t.len()
            && s[e - t.len()..e].eq_ignore_ascii_case(t)
        {
            return Some(e - t.len());
        }
        let hb = self.heartbeat.as_deref()?;
        for k in 0..=MAX_HEARTBEAT_PUNCT.min(e) {
            if k > 0 && !s[e - k].is_ascii_punctuation() {
                break;
            }
            let e2 = e - k;
            for (open, close) in MARKUP {
                let n = open.len() + hb.len() + close.len();
                if e2 < n {
                    continue;
                }
                let w = e2 - n;
                let word = &s[w..e2];
                let fits = word[..open.len()].eq_ignore_ascii_case(open)
                    && word[open.len()..open.len() + hb.len()].eq_ignore_ascii_case(hb)
                    && word[open.len() + hb.len()..].eq_ignore_ascii_case(close);
                if fits && self.heartbeat_at(s, w) == Match::Full(e) {
                    return Some(w);
                }
            }
        }
        None
    }
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
        // A token is a whole word: glued letters of its own case make another word.
        check("NO_REPLYING", "NO_REPLYING");
        check("NO_REPLYX", "NO_REPLYX");
        check("😄 NO_REPLY", "😄");
        check("NO_REPLY ok NO_REPLY", "NO_REPLY ok");
    }

    #[test]
    fn silent_forms_of_the_newest_openclaw() {
        for text in [
            "no_reply",
            "  No_RePlY  ",
            "\"NO_REPLY\"",
            "'NO_REPLY'",
            "**NO_REPLY**",
            "*NO_REPLY*",
            "_NO_REPLY_",
            "NO_REPLY.",
            "NO_REPLY!",
            "(NO_REPLY)",
            "“NO_REPLY”",
            "NO_REPLY NO_REPLY",
            "NO_REPLY\n\nNO_REPLY",
            "NO_REPLYNO_REPLY",
            "{\"action\":\"NO_REPLY\"}",
            "{\n  \"action\": \"NO_REPLY\"\n}",
            "{ \"action\" : \" NO_REPLY \" }",
            "**NO_REPLY",
        ] {
            check(text, "");
        }
        check(
            "{\"action\":\"SOMETHING_ELSE\"}",
            "{\"action\":\"SOMETHING_ELSE\"}",
        );
        check(
            "{\"action\":\"NO_REPLY\",\"x\":1}",
            "{\"action\":\"NO_REPLY\",\"x\":1}",
        );
    }

    #[test]
    fn leading_silent_token() {
        check("NO_REPLYThe user is saying", "The user is saying");
        check("No_RePlYThe user is saying", "The user is saying");
        check("NO_REPLYhello there", "hello there");
        check("no_replyThe user", "The user");
        check("NO_REPLY好的", "好的");
        check("NO_REPLYÉtienne a dit", "Étienne a dit");
        check("NO_REPLYI", "NO_REPLYI");
        check(
            "NO_REPLY NO_REPLY\nThe user is saying hello",
            "The user is saying hello",
        );
        check("NO_REPLY\n\nHere is more.", "Here is more.");
        check("NO_REPLY NO_REPLYActually here", "Actually here");
        // A separator on the same line keeps everything.
        for kept in [
            "NO_REPLY -- nope",
            "NO_REPLY: explanation",
            "NO_REPLY—note",
            "NO_REPLY but here is more content",
            "NO_REPLY 👍",
            // Glued, but the same word: no change of case or script.
            "NO_REPLYX",
            "NO_REPLYX and more",
            "NO_REPLYING is a state",
            "NO_REPLY42",
            "no_reply42 items",
            "no_replyx",
            "NO_REPLYÉTÉ",
            "NO_REPLY_TIMEOUT",
        ] {
            check(kept, kept);
        }
    }

    #[test]
    fn trailing_strip_with_wrappers() {
        check("some text **NO_REPLY", "some text");
        check("reasoning**NO_REPLY", "reasoning");
        check(
            "Here is a helpful response.\n\nNO_REPLY",
            "Here is a helpful response.",
        );
        check("done no_reply", "done");
        check("x**NO_REPLY**NO_REPLY", "x**NO_REPLY");
        check("a NO_REPLY NO_REPLY", "a");
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
            "ok NO_",
            "`NO_REPLY`",
            "Please NO_REPLY to this",
            "这条消息里有 NO_REPLY 看你能不能收到",
        ] {
            check(text, text);
        }
    }

    #[test]
    fn heartbeat_token() {
        check("HEARTBEAT_OK", "");
        check("HEARTBEAT_OK.", "");
        check("heartbeat_ok", "");
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
    fn heartbeat_in_simple_markup() {
        for text in [
            "<b>HEARTBEAT_OK</b>",
            "**HEARTBEAT_OK**",
            "<code>HEARTBEAT_OK</code>",
            "<strong>HEARTBEAT_OK</strong>",
            "`HEARTBEAT_OK`",
            "_HEARTBEAT_OK_.",
        ] {
            check(text, "");
        }
        check("All good! <b>HEARTBEAT_OK</b>", "All good!");
        check("<code>HEARTBEAT_OK</code> all good", "all good");
        check("**HEARTBEAT_OK** fine", "fine");
        check("x <b>HEARTBEAT_OK</i>", "x <b>HEARTBEAT_OK</i>");
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
        assert_eq!(run_split_with(&custom, "[silent]", &[3]), "");
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

    /// A piece of a word that began in released text goes out at once, even when it starts
    /// with a token's first letter (`hen`, `nect`): no run can start inside it. A piece
    /// with a glued `*`, or a token word after whitespace, is still held.
    #[test]
    fn word_pieces_after_released_text_are_not_held() {
        let mut gate = TokenGate::new(&TokenConfig::default());
        let mut out = String::new();
        for piece in ["Conn", "ection", " t", "hen", " NO", "t", "he", "NO_REPLY"] {
            gate.push(piece, &mut out);
        }
        assert_eq!(out, "Connection then NOtheNO_REPLY");
        assert_eq!(gate.held_tail(), "");
        gate.push("**", &mut out);
        assert_eq!(gate.held_tail(), "**", "a `*` run may glue a silent token");
        gate.push("NO_REPLY", &mut out);
        assert_eq!(out, "Connection then NOtheNO_REPLY");
        assert_eq!(gate.held_tail(), "**NO_REPLY");
        gate.finish(&mut out);
        assert_eq!(
            out, "Connection then NOtheNO_REPLY",
            "a glued silent token at the end"
        );
        check(
            "Connection then NOtheNO_REPLY",
            "Connection then NOtheNO_REPLY",
        );
        check("say then NO_REPLY", "say then");
    }

    #[test]
    fn flush_is_a_seam_not_an_end() {
        let mut gate = TokenGate::new(&TokenConfig::default());
        let mut out = String::new();
        gate.push("Chart:\n\n", &mut out);
        assert_eq!(out, "Chart:");
        gate.flush(&mut out);
        assert_eq!(out, "Chart:\n\n");
        // Text before a seam keeps a trailing token: it is not the reply's end.
        gate.push("More. NO_REPLY", &mut out);
        gate.flush(&mut out);
        assert_eq!(out, "Chart:\n\nMore. NO_REPLY");
        // Not at the start of the message any more: a leading heartbeat is plain text now.
        gate.push(" HEARTBEAT_OK x", &mut out);
        gate.finish(&mut out);
        assert_eq!(out, "Chart:\n\nMore. NO_REPLY HEARTBEAT_OK x");
        // A caption that is only a silent form is silent at the seam.
        gate.push("{\"action\":\"NO_REPLY\"}", &mut out);
        gate.flush(&mut out);
        assert_eq!(out, "Chart:\n\nMore. NO_REPLY HEARTBEAT_OK x");
    }

    #[test]
    fn pathological_runs_terminate() {
        let long = "x ".to_string() + &" NO_REPLY".repeat(200);
        let got = run_split(&long, &[]);
        assert_eq!(got, normalize_text(&TokenConfig::default(), &long));
        assert!(got.len() < long.len());
        let spaces = " ".repeat(10_000);
        assert_eq!(run_split(&spaces, &[]), spaces);
        let tokens = "NO_REPLY ".repeat(100) + "then text";
        assert_eq!(
            run_chars(&tokens),
            normalize_text(&TokenConfig::default(), &tokens)
        );
    }

    fn token_text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            "[a-zA-Z .!*_\"\n]{0,6}",
            Just("NO_REPLY".to_string()),
            Just("no_reply".to_string()),
            Just("NO".to_string()),
            Just("HEARTBEAT_OK".to_string()),
            Just("HEARTBEAT".to_string()),
            Just("<b>".to_string()),
            Just("</b>".to_string()),
            Just("**".to_string()),
            Just("{\"action\":\"".to_string()),
            Just("\"}".to_string()),
            Just(" ".to_string()),
            Just("\n".to_string()),
            Just("!!".to_string()),
            Just("é".to_string()),
            Just("“".to_string()),
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
            let cuts = crate::stage::tests::cuts_in(&text, &cuts);
            prop_assert_eq!(run_split(&text, &cuts), run_split(&text, &[]));
        }

        /// Tokens only ever leave at the edges: the result is one contiguous piece of the
        /// text.
        #[test]
        fn result_is_a_piece_of_the_text(text in token_text()) {
            let got = normalize_text(&TokenConfig::default(), &text);
            prop_assert!(got.is_empty() || text.contains(got));
        }

        #[test]
        fn text_without_tokens_passes_through(text in any::<String>()) {
            let lower = text.to_ascii_lowercase();
            prop_assume!(!lower.contains("no_reply") && !lower.contains("heartbeat_ok"));
            prop_assert_eq!(run_chars(&text), text.clone());
            prop_assert_eq!(normalize_text(&TokenConfig::default(), &text), text.as_str());
        }
    }
}
