//! The inline spans a cut must not fall inside: links and images (`[text](url)`,
//! `![alt](url)`), autolinks (`<https://…>`) and bare URLs (`https://…`, `www.…`).
//!
//! A chat renders each message alone: a link cut between its text and its URL shows raw
//! brackets and a raw URL in both messages, and a URL cut in its middle links to a wrong
//! address. So a cut inside one of these spans is made only when no cut outside exists.
//!
//! The reading follows CommonMark and GFM where it matters for cutting, and simplifies where
//! it does not (it only ever makes cuts safer, never less safe, except where noted):
//! - A `[` (or `![`) opens a bracket; a `]` closes the nearest open one. A `(` right after
//!   the `]` starts the destination, which ends at the first `)` that balances the parens
//!   in it (a title in quotes may hold anything but an unbalanced `)`). The span runs from
//!   the `[` (or `!`) through that `)`. Link text may span lines within a paragraph, and
//!   brackets nest. `[text]` not followed by `(` is literal text (reference links are not
//!   read: the chat's Markdown has no definitions).
//! - A bracket still open, or a destination still open, makes every cut after its start
//!   unsafe until its fate is known: at the `]` and the byte after it, at the `)`, or at
//!   the end of the block (a blank line, a heading, a list item, a quote, a fence line), as
//!   inline spans never cross a block boundary. A bracket or destination still undecided
//!   [`LINK_LOOK`] bytes after its start is taken for literal text (a bound, so a stray `[`
//!   does not hold every cut of a long paragraph).
//! - An autolink is `<`, a letter, then anything but whitespace, `<` and `>` up to a `>`,
//!   holding a `:` or `@` (a scheme or an e-mail address).
//! - A bare URL starts at `http://`, `https://` or `www.` after the start of a line or a
//!   byte that is not an ASCII letter or digit, and runs to the next whitespace, `<` or `]`
//!   (GFM's trailing punctuation belongs to the span here: a cut there is no better).
//! - A backslash escapes the ASCII punctuation after it. Text inside an inline code span
//!   is not read (a code span binds tighter than links); text after a backtick run that
//!   is never closed is not read either (a simplification: the span is known to be literal
//!   only when the block ends).
//!
//! The reader is incremental and split-invariant: its state after reading `text[..t]`
//! depends only on that text. It jumps between the few bytes that matter with a lookup
//! table, keeps its spans in a vector that is reused, and forgets what a consumer drains.

use super::groups::{first_of, first_of_from};
use super::quoted::QuotedLines;

/// The most bytes [`InlineScanner::feed`] reads inline (a word or two).
const SHORT_READ: usize = 16;

/// A bracket or destination still undecided this many bytes after its start is literal.
pub(crate) const LINK_LOOK: usize = 2048;

/// An emphasis delimiter run still unmatched this many bytes after it is literal (a bound
/// on what the reading keeps; a closer that far away is not looked for).
pub(crate) const EMPH_LOOK: usize = 4096;

/// At most this many brackets are open at once; more are literal.
const MAX_OPENERS: usize = 32;

/// A span that a cut must not fall inside: from `start` to `end` (exclusive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct InlineSpan {
    /// The first byte (`[`, `!`, `<`, or the URL's first byte).
    pub start: usize,
    /// Just past the last byte.
    pub end: usize,
}

impl InlineSpan {
    /// Whether a cut at `p` falls strictly inside the span.
    #[inline]
    pub(crate) fn contains_cut(&self, p: usize) -> bool {
        p > self.start && p < self.end
    }
}

/// What the reader is in the middle of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Ordinary text.
    Normal,
    /// A `]` closed the bracket opened at `start`: the next byte says whether a destination
    /// follows.
    AfterBracket { start: usize },
    /// Inside a link destination of the link starting at `start`, `depth` parens open.
    Dest { start: usize, depth: u32 },
    /// Inside a bare URL starting at `start`.
    Url { start: usize },
    /// After a `<` at `start`: maybe an autolink.
    Angle { start: usize },
}

/// The bytes ordinary text stops at.
const fn specials() -> [bool; 256] {
    let mut t = [false; 256];
    t[b'[' as usize] = true;
    t[b']' as usize] = true;
    t[b'\\' as usize] = true;
    t[b'<' as usize] = true;
    t[b'/' as usize] = true;
    t[b'.' as usize] = true;
    t[b'*' as usize] = true;
    t[b'_' as usize] = true;
    t[b'~' as usize] = true;
    t
}
static SPECIAL: [bool; 256] = specials();

/// The first byte of `bytes[from..to]` that ordinary text stops at (see [`SPECIAL`]), as an
/// index into `bytes`.
///
/// Sixteen bytes are tested per branch (see [`first_of`]). Fewer than sixteen left are
/// tested as the group that ends at `to`, read back over bytes looked at already and
/// masked out (see [`first_of_from`]): most searches end there, the text being fed in
/// short pieces, and one group costs fewer mispredicted branches than a walk over those
/// bytes. Only a text shorter than a group is walked byte by byte.
///
/// The same search as `groups::find_in`, written out: as a call of it (the table walk kept
/// for short texts), node-events cost about 5 K instructions more per text (callgrind).
#[inline]
fn find_special(bytes: &[u8], from: usize, to: usize) -> Option<usize> {
    const NEEDLES: [u8; 9] = [b'[', b']', b'\\', b'<', b'/', b'.', b'*', b'_', b'~'];
    let mut base = from;
    while let Some(g) = bytes[..to].get(base..base + 16) {
        if let Some(k) = first_of(g.try_into().expect("16 bytes"), NEEDLES) {
            return Some(base + k);
        }
        base += 16;
    }
    if base == to {
        return None;
    }
    match to.checked_sub(16) {
        Some(back) => first_of_from(
            bytes[back..to].try_into().expect("16 bytes"),
            NEEDLES,
            base - back,
        )
        .map(|k| back + k),
        None => bytes[base..to]
            .iter()
            .position(|&b| SPECIAL[usize::from(b)])
            .map(|k| base + k),
    }
}

/// The incremental reader of inline spans. See the module docs.
#[derive(Clone, Debug)]
pub(crate) struct InlineScanner {
    /// Bytes read so far.
    pos: usize,
    state: State,
    /// The byte before `pos` was an unescaped backslash.
    escape: bool,
    /// Inside an inline code span (its text is not read).
    in_code: bool,
    /// The lowest position whose cut turned safe since the last take.
    newly_safe: Option<usize>,
    /// A run of `*`, `_` or `~` that reached the end of the text read: its start, char and
    /// the byte before it (`None` at the text's start).
    run: Option<(usize, u8, Option<u8>)>,
    /// Brackets, links and emphasis read, built on first use.
    lists: LazyLists,
}

/// What the reader keeps of brackets, links and emphasis.
#[derive(Clone, Debug, Default)]
struct Lists {
    /// Positions of the open brackets (their `[`, or the `!` of an image), in order.
    openers: Vec<usize>,
    /// Decided spans, in order, disjoint.
    spans: Vec<InlineSpan>,
    /// Emphasis delimiter runs that may open, not matched yet, in order.
    emph_open: Vec<EmphOpener>,
    /// Matched emphasis, strong emphasis and strikethrough, in the order they closed.
    emph: Vec<EmphSpan>,
    /// The block scanner's list item lines that go on with a list open before them (see
    /// `markdown::lists`), in order: kept here, in the box a stream builds only when it keeps
    /// something, so that a stream without them pays nothing for them.
    list_items: Vec<usize>,
    /// The block scanner's quoted paragraph lines (see `markdown::quoted`), kept here for
    /// the same reason.
    quoted: QuotedLines,
    /// At or before where the next undecided bracket, destination or autolink, or
    /// unmatched emphasis opener, expires ([`InlineScanner::expiry`]): lowered as they are
    /// added, set to the exact place when the reading reaches it (what goes away only
    /// moves the expiry later; a bound met early costs one look at the lists). So reading
    /// ordinary text does not read the lists at every byte it stops at. 0 in a new box
    /// (a bound, if a poor one); kept here, as the lists, so a stream without them does
    /// not pay for it (without them only the state can expire, and that is read at once).
    expiry_bound: usize,
}

impl Lists {
    /// [`InlineScanner::drain`] for the lists.
    fn drain(&mut self, n: usize) {
        let keep = self.spans.partition_point(|s| s.end <= n);
        self.spans.drain(..keep);
        for s in &mut self.spans {
            s.start = s.start.saturating_sub(n);
            s.end -= n;
        }
        for o in &mut self.openers {
            *o = o.saturating_sub(n);
        }
        let keep = self.emph.iter().filter(|e| e.close + e.len > n).count();
        if keep < self.emph.len() {
            self.emph.retain(|e| e.close + e.len > n);
        }
        for e in &mut self.emph {
            e.start = e.start.saturating_sub(n);
            e.close = e.close.saturating_sub(n);
        }
        for o in &mut self.emph_open {
            o.pos = o.pos.saturating_sub(n);
        }
        let keep = self.list_items.partition_point(|&l| l < n);
        self.list_items.drain(..keep);
        for l in &mut self.list_items {
            *l -= n;
        }
        self.quoted.drain(n);
        // Every position moved back by at most `n`.
        self.expiry_bound = self.expiry_bound.saturating_sub(n);
    }
}

/// The lists of a reader that has kept nothing yet.
static NO_LISTS: Lists = Lists {
    openers: Vec::new(),
    spans: Vec::new(),
    emph_open: Vec::new(),
    emph: Vec::new(),
    list_items: Vec::new(),
    quoted: QuotedLines::NONE,
    expiry_bound: 0,
};

/// [`Lists`] behind a box made the first time something is kept: four empty vectors
/// inline would cost a fresh stream 96 bytes of its 4 KiB (SPEC §14), and many replies
/// keep nothing. Reading an unbuilt one reads empty lists; writing builds it (once: a
/// reset keeps it).
#[derive(Clone, Debug, Default)]
struct LazyLists(Option<Box<Lists>>);

impl LazyLists {
    /// The lists, when built (for changes that have nothing to do on empty lists).
    fn built(&mut self) -> Option<&mut Lists> {
        self.0.as_deref_mut()
    }
}

impl std::ops::Deref for LazyLists {
    type Target = Lists;

    fn deref(&self) -> &Lists {
        self.0.as_deref().unwrap_or(&NO_LISTS)
    }
}

impl std::ops::DerefMut for LazyLists {
    fn deref_mut(&mut self) -> &mut Lists {
        self.0.get_or_insert_with(Box::default)
    }
}

/// A delimiter run that may open emphasis: its first byte, char, and the delimiters of it
/// not used yet (the first ones of the run); for CommonMark's rule of 3, the run's whole
/// length (at most 255 counted) and whether it may close too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct EmphOpener {
    pos: usize,
    ch: u8,
    left: usize,
    run: u8,
    closes: bool,
}

impl EmphOpener {
    /// Whether a closing run of `ch`, `len` delimiters long (that may also open when
    /// `opens`), with `left` of them still unused, may close this opener. CommonMark's rule
    /// of 3: when one of the two runs may both open and close, the sum of their lengths must
    /// not be a multiple of 3, unless both are (`**a*` leaves the `**` open; `2*3` does not
    /// close an earlier `**`). Strikethrough pairs runs of equal length only.
    fn closed_by(&self, ch: u8, len: usize, left: usize, opens: bool) -> bool {
        if self.ch != ch {
            return false;
        }
        if ch == b'~' {
            return self.left == left;
        }
        let run = usize::from(self.run);
        !((self.closes || opens)
            && (run + len).is_multiple_of(3)
            && !(run.is_multiple_of(3) && len.is_multiple_of(3)))
    }
}

/// Matched emphasis: the opening delimiters at `start..start + len`, the closing ones at
/// `close..close + len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct EmphSpan {
    /// The first opening delimiter.
    pub start: usize,
    /// The first closing delimiter.
    pub close: usize,
    /// The delimiter char.
    pub ch: u8,
    /// Delimiters on each side (1 emphasis, 2 strong or strikethrough).
    pub len: usize,
}

impl EmphSpan {
    /// Whether a cut at `p` leaves delimiters open in the piece before it: strictly between
    /// the opening and the closing delimiters.
    #[inline]
    fn holds_cut(&self, p: usize) -> bool {
        p > self.start + self.len && p < self.close
    }
}

impl Default for InlineScanner {
    fn default() -> Self {
        Self::new()
    }
}

impl InlineScanner {
    /// A reader at the start of a text.
    pub(crate) fn new() -> Self {
        InlineScanner {
            pos: 0,
            state: State::Normal,
            escape: false,
            in_code: false,
            newly_safe: None,
            run: None,
            lists: LazyLists(None),
        }
    }

    /// Forgets everything, keeping the vectors' capacity.
    pub(crate) fn reset(&mut self) {
        self.pos = 0;
        self.state = State::Normal;
        self.escape = false;
        self.in_code = false;
        self.newly_safe = None;
        self.run = None;
        if let Some(lists) = self.lists.built() {
            lists.expiry_bound = usize::MAX;
            lists.openers.clear();
            lists.spans.clear();
            lists.emph_open.clear();
            lists.emph.clear();
            lists.list_items.clear();
            lists.quoted.reset();
        }
    }

    /// The list item lines the block scanner recorded (see `markdown::lists`), in order.
    pub(crate) fn list_items(&self) -> &[usize] {
        &self.lists.list_items
    }

    /// The block scanner's quoted paragraph lines (see `markdown::quoted`).
    #[inline]
    pub(super) fn quoted(&self) -> &QuotedLines {
        &self.lists.quoted
    }

    /// The same, to change (built on first use).
    pub(super) fn quoted_mut(&mut self) -> &mut QuotedLines {
        &mut self.lists.quoted
    }

    /// Records the list item line starting at `line` (once).
    pub(crate) fn push_list_item(&mut self, line: usize) {
        if self.lists.list_items.last() != Some(&line) {
            self.lists.list_items.push(line);
        }
    }

    /// Returns, and forgets, the lowest position whose cut turned safe (a bracket that
    /// proved literal) since the previous call.
    pub(crate) fn take_newly_safe(&mut self) -> Option<usize> {
        self.newly_safe.take()
    }

    /// Whether some cut turned safe since the last take.
    pub(crate) fn has_newly_safe(&self) -> bool {
        self.newly_safe.is_some()
    }

    fn mark_newly_safe(&mut self, from: usize) {
        self.newly_safe = Some(self.newly_safe.map_or(from, |p| p.min(from)));
    }

    /// The start of the span still undecided (an open bracket, destination, autolink or
    /// URL), if any: every cut after it is unsafe for now.
    fn open_start(&self) -> Option<usize> {
        let state = match self.state {
            State::Normal => None,
            State::AfterBracket { start }
            | State::Dest { start, .. }
            | State::Url { start }
            | State::Angle { start } => Some(start),
        };
        match (self.lists.openers.first(), state) {
            (Some(&o), Some(s)) => Some(o.min(s)),
            (o, s) => o.copied().or(s),
        }
    }

    /// The span (decided or not) that a cut at `p` would fall inside, if any.
    // Always inlined: the compiler kept a call for the usual answer (none).
    #[inline(always)]
    pub(crate) fn span_at(&self, p: usize) -> Option<InlineSpan> {
        // Most cuts: nothing undecided, and every decided span ended before `p`.
        let none =
            self.state == State::Normal
                && self.lists.0.as_ref().is_none_or(|l| {
                    l.openers.is_empty() && l.spans.last().is_none_or(|s| s.end <= p)
                });
        if none {
            return None;
        }
        self.span_around(p)
    }

    /// [`InlineScanner::span_at`] when a span may hold `p`.
    #[inline(never)]
    fn span_around(&self, p: usize) -> Option<InlineSpan> {
        if let Some(s) = self.open_start()
            && p > s
        {
            return Some(InlineSpan {
                start: s,
                end: usize::MAX,
            });
        }
        let i = self.lists.spans.partition_point(|s| s.start < p);
        self.lists.spans[..i]
            .last()
            .copied()
            .filter(|s| s.contains_cut(p))
    }

    /// The decided spans (for tests).
    #[cfg(test)]
    pub(crate) fn spans(&self) -> &[InlineSpan] {
        &self.lists.spans
    }

    /// Reads `bytes[pos..to]`, ordinary paragraph text (no fence or indented code line).
    /// `bytes` is the whole text known; the bytes before `pos` on the same line are there to
    /// be looked back at.
    ///
    /// The common calls that read nothing (the text was read already, or it is a code
    /// span's) are told inline, without the call to the reading loop.
    #[inline]
    pub(crate) fn feed(&mut self, bytes: &[u8], to: usize) {
        let to = to.min(bytes.len());
        if self.pos >= to {
            return;
        }
        if self.in_code {
            self.pos = to;
            return;
        }
        // A word or two of ordinary text with no special byte and nothing pending or
        // expiring in it: what the reading loop does (it moves on), without the call.
        if to - self.pos <= SHORT_READ
            && self.state == State::Normal
            && self.run.is_none()
            && !self.escape
            && self.expiry_bound() >= to
            && !bytes[self.pos..to].iter().any(|&b| SPECIAL[usize::from(b)])
        {
            self.pos = to;
            return;
        }
        self.read_through(bytes, to);
    }

    /// [`InlineScanner::feed`] with `bytes[pos..to]` to read, outside code spans.
    #[inline(never)]
    fn read_through(&mut self, bytes: &[u8], to: usize) {
        let mut i = self.pos;
        let mut continue_at: Option<usize> = None;
        if let Some((start, ch, prev)) = self.run {
            let more = bytes[i..to].iter().take_while(|&&b| b == ch).count();
            i += more;
            if i == to {
                self.pos = to;
                return;
            }
            self.run = None;
            self.resolve_run(start, i, ch, prev, Some(bytes[i]));
        }
        if self.escape {
            self.escape = false;
            if bytes[i].is_ascii_punctuation() {
                i += 1;
            }
        }
        while i < to {
            // A bracket or destination undecided for too long is literal: decided at the
            // byte `LINK_LOOK` after its start, whatever the deltas (an emphasis opener
            // likewise after `EMPH_LOOK`). The lists are read only when the reading reaches
            // the bound kept on where that happens (see `Lists::expiry_bound`).
            let mut bound = self.expiry_bound();
            if bound <= i {
                match self.reach_expiry_bound(i) {
                    Some(exact) => bound = exact,
                    None => continue,
                }
            }
            let stop = to.min(bound);
            i = match self.state {
                State::Normal => self.normal_text(bytes, i, stop, to),
                State::AfterBracket { start } => {
                    if bytes[i] == b'(' {
                        self.state = State::Dest { start, depth: 0 };
                        i + 1
                    } else {
                        self.state = State::Normal;
                        self.mark_newly_safe(start);
                        i
                    }
                }
                State::Dest { start, depth } => {
                    match bytes[i..stop]
                        .iter()
                        .position(|&b| matches!(b, b'(' | b')' | b'\\'))
                    {
                        None => stop,
                        Some(k) => {
                            let at = i + k;
                            match bytes[at] {
                                b'(' => {
                                    self.state = State::Dest {
                                        start,
                                        depth: depth + 1,
                                    }
                                }
                                b')' if depth > 0 => {
                                    self.state = State::Dest {
                                        start,
                                        depth: depth - 1,
                                    }
                                }
                                b')' => {
                                    self.push_span(start, at + 1);
                                    self.state = State::Normal;
                                }
                                _ => {
                                    // A backslash: the next byte is taken as it is.
                                    if at + 1 >= to {
                                        self.escape = true;
                                        self.pos = to;
                                        return;
                                    }
                                    continue_at = Some(at + 2);
                                }
                            }
                            continue_at.take().unwrap_or(at + 1)
                        }
                    }
                }
                State::Url { start } => {
                    match bytes[i..to].iter().position(|&b| {
                        matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'<' | b']' | b'*')
                    }) {
                        None => to,
                        Some(k) => {
                            self.push_span(start, i + k);
                            self.state = State::Normal;
                            i + k
                        }
                    }
                }
                State::Angle { start } => {
                    match bytes[i..stop]
                        .iter()
                        .position(|&b| matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'<' | b'>'))
                    {
                        None => stop,
                        Some(k) => {
                            let at = i + k;
                            self.state = State::Normal;
                            if bytes[at] == b'>' && is_autolink(&bytes[start + 1..at]) {
                                self.push_span(start, at + 1);
                                at + 1
                            } else {
                                self.mark_newly_safe(start);
                                at
                            }
                        }
                    }
                }
            };
        }
        self.pos = to;
    }

    /// At or before where the next expiry happens: the bound kept with the lists, or,
    /// without them, the exact place (only the state may expire then).
    #[inline]
    fn expiry_bound(&self) -> usize {
        match &self.lists.0 {
            Some(lists) => lists.expiry_bound,
            None => match self.state {
                State::AfterBracket { start }
                | State::Dest { start, .. }
                | State::Angle { start } => start.saturating_add(LINK_LOOK),
                State::Normal | State::Url { .. } => usize::MAX,
            },
        }
    }

    /// The reading reached the bound on the next expiry at `i`: what expires there does
    /// (then `None`: the reading looks again), else the bound becomes the exact expiry,
    /// returned.
    #[cold]
    #[inline(never)]
    fn reach_expiry_bound(&mut self, i: usize) -> Option<usize> {
        let exact = self.expiry();
        if exact <= i {
            self.expire(i);
            let exact = self.expiry();
            self.set_expiry_bound(exact);
            return None;
        }
        self.set_expiry_bound(exact);
        Some(exact)
    }

    /// The reading found the exact expiry: the bound is set to it.
    #[inline]
    fn set_expiry_bound(&mut self, at: usize) {
        if let Some(lists) = self.lists.built() {
            lists.expiry_bound = at;
        }
    }

    /// Something added may expire at `at`: the bound on the next expiry comes down to it
    /// (without lists nothing is kept: a box built later starts at 0).
    #[inline]
    fn lower_expiry(&mut self, at: usize) {
        if let Some(lists) = self.lists.built() {
            lists.expiry_bound = lists.expiry_bound.min(at);
        }
    }

    /// Where the oldest undecided bracket or destination turns literal.
    #[inline]
    fn expiry(&self) -> usize {
        let state = match self.state {
            State::AfterBracket { start } | State::Dest { start, .. } | State::Angle { start } => {
                start
            }
            State::Normal | State::Url { .. } => usize::MAX - LINK_LOOK,
        };
        let first = self
            .lists
            .openers
            .first()
            .copied()
            .unwrap_or(usize::MAX - LINK_LOOK);
        let emph = self
            .lists
            .emph_open
            .first()
            .map_or(usize::MAX, |o| o.pos.saturating_add(EMPH_LOOK));
        (first.min(state) + LINK_LOOK).min(emph)
    }

    /// Drops what is undecided since `LINK_LOOK` bytes before `at` (brackets, a destination,
    /// an autolink): literal text.
    fn expire(&mut self, at: usize) {
        let floor = at.saturating_sub(LINK_LOOK);
        if let State::AfterBracket { start } | State::Dest { start, .. } | State::Angle { start } =
            self.state
            && start <= floor
        {
            self.state = State::Normal;
            self.mark_newly_safe(start);
        }
        let old = self.lists.openers.partition_point(|&o| o <= floor);
        if old > 0 {
            let first = self.lists.openers[0];
            self.lists.openers.drain(..old);
            self.mark_newly_safe(first);
        }
        let old = self
            .lists
            .emph_open
            .partition_point(|o| o.pos.saturating_add(EMPH_LOOK) <= at);
        if old > 0 {
            self.lists.emph_open.drain(..old);
        }
    }

    /// How much of its text a consumer may drain (at most `n` bytes) without cutting
    /// through what is still read: an open bracket, destination, URL or delimiter run,
    /// an unmatched emphasis opener, matched emphasis that goes on past `n`. Positions are
    /// kept relative to the text, so nothing the reading still uses may fall off its front.
    pub(crate) fn keep_from(&self, n: usize) -> usize {
        let mut k = n.min(self.open_start().unwrap_or(n));
        if let Some(o) = self.lists.emph_open.first() {
            k = k.min(o.pos);
        }
        if let Some((start, _, _)) = self.run {
            k = k.min(start);
        }
        for e in &self.lists.emph {
            if e.start < k && e.close + e.len > k {
                k = e.start;
            }
        }
        k
    }

    /// Reads ordinary text from `i` up to `stop` (before the expiry of anything undecided):
    /// returns where to go on, past the first special byte that may change the reading.
    ///
    /// A `.` not after `www` and a `/` not after `:/` change nothing (see
    /// [`InlineScanner::on_special`]): they are passed over here, without going back to the
    /// loop of [`InlineScanner::feed`] (they are most of the special bytes of prose).
    #[inline]
    fn normal_text(&mut self, bytes: &[u8], mut i: usize, stop: usize, to: usize) -> usize {
        loop {
            let Some(at) = find_special(bytes, i, stop) else {
                return stop;
            };
            let inert = match bytes[at] {
                // The byte before first: most dots follow no `w`.
                b'.' => {
                    !(at >= 3
                        && bytes[at - 1] | 0x20 == b'w'
                        && ends_with_ignore_case(&bytes[..at], b"www"))
                }
                b'/' => !(at >= 6 && bytes[at - 1] == b'/' && bytes[at - 2] == b':'),
                _ => false,
            };
            if !inert {
                return self.on_special(bytes, at, to);
            }
            i = at + 1;
        }
    }

    /// Ordinary text stopped at the special byte at `at`; returns where to go on.
    fn on_special(&mut self, bytes: &[u8], at: usize, to: usize) -> usize {
        match bytes[at] {
            ch @ (b'*' | b'_' | b'~') => {
                let end = at + bytes[at..to].iter().take_while(|&&b| b == ch).count();
                let prev = (at > 0).then(|| bytes[at - 1]);
                if end == to {
                    // The run may go on, and its flanking needs the byte after it.
                    self.run = Some((at, ch, prev));
                    return to;
                }
                self.resolve_run(at, end, ch, prev, Some(bytes[end]));
                end
            }
            b'\\' => {
                if at + 1 >= to {
                    self.escape = true;
                    to
                } else if bytes[at + 1].is_ascii_punctuation() {
                    at + 2
                } else {
                    at + 1
                }
            }
            b'[' => {
                let image = at > 0 && bytes[at - 1] == b'!' && !escaped(bytes, at - 1);
                if self.lists.openers.len() < MAX_OPENERS {
                    let start = if image { at - 1 } else { at };
                    self.lists.openers.push(start);
                    self.lower_expiry(start.saturating_add(LINK_LOOK));
                }
                at + 1
            }
            b']' => {
                if let Some(start) = self.lists.built().and_then(|l| l.openers.pop()) {
                    self.state = State::AfterBracket { start };
                }
                at + 1
            }
            b'<' => {
                if bytes.get(at + 1).is_none_or(u8::is_ascii_alphabetic) {
                    self.state = State::Angle { start: at };
                    self.lower_expiry(at.saturating_add(LINK_LOOK));
                }
                at + 1
            }
            b'/' => {
                // `scheme://`: the second slash, after `http:` or `https:`.
                if at >= 6 && bytes[at - 1] == b'/' && bytes[at - 2] == b':' {
                    let before = &bytes[..at - 2];
                    let scheme = if ends_with_ignore_case(before, b"https") {
                        5
                    } else if ends_with_ignore_case(before, b"http") {
                        4
                    } else {
                        0
                    };
                    let start = at - 2 - scheme;
                    if scheme > 0 && url_may_start(bytes, start) {
                        self.state = State::Url { start };
                    }
                }
                at + 1
            }
            _ => {
                // `.`: `www.`
                if at >= 3 && ends_with_ignore_case(&bytes[..at], b"www") {
                    let start = at - 3;
                    if url_may_start(bytes, start) {
                        self.state = State::Url { start };
                    }
                }
                at + 1
            }
        }
    }

    /// A decided span: the spans it holds (an image in a link's text) are dropped.
    fn push_span(&mut self, start: usize, end: usize) {
        while self.lists.spans.last().is_some_and(|s| s.start >= start) {
            self.lists.spans.pop();
        }
        self.lists.spans.push(InlineSpan { start, end });
    }

    /// The reading goes on at `to` without reading the bytes before it (a fence line, an
    /// indented code line): a URL ends where the reading stopped.
    pub(crate) fn skip_to(&mut self, to: usize) {
        self.end_run(None);
        if let State::Url { start } = self.state {
            self.push_span(start, self.pos);
            self.state = State::Normal;
        }
        self.escape = false;
        self.pos = self.pos.max(to);
    }

    /// An inline code span opens at `at` (its backtick run): its text is not read.
    pub(crate) fn code_opens(&mut self, bytes: &[u8], at: usize) {
        self.feed(bytes, at);
        self.end_run(Some(b'`'));
        if let State::Url { start } = self.state {
            self.push_span(start, at);
            self.state = State::Normal;
        }
        self.in_code = true;
    }

    /// The inline code span closes at `at` (just past its closing run): reading goes on.
    pub(crate) fn code_closes(&mut self, at: usize) {
        self.in_code = false;
        self.pos = self.pos.max(at);
    }

    /// The block ends at `at` (the reader has read up to it): whatever is still undecided
    /// is literal text, and a URL ends.
    // Always inlined: the compiler kept a call for the usual case (nothing undecided).
    #[inline(always)]
    pub(crate) fn end_block(&mut self, at: usize) {
        if self.run.is_none()
            && self.state == State::Normal
            && self
                .lists
                .0
                .as_ref()
                .is_none_or(|l| l.openers.is_empty() && l.emph_open.is_empty())
        {
            // Nothing undecided (most block ends): nothing turns literal.
            self.in_code = false;
            self.escape = false;
            self.pos = self.pos.max(at);
            return;
        }
        self.end_open_block(at);
    }

    /// [`InlineScanner::end_block`] with something undecided.
    #[inline(never)]
    fn end_open_block(&mut self, at: usize) {
        self.end_run(None);
        // Delimiters still unmatched at the end of their block are literal.
        if let Some(lists) = self.lists.built() {
            lists.emph_open.clear();
        }
        match self.state {
            State::Url { start } => self.push_span(start, self.pos.min(at).max(start)),
            State::AfterBracket { start } | State::Dest { start, .. } | State::Angle { start } => {
                self.mark_newly_safe(start)
            }
            State::Normal => {}
        }
        self.state = State::Normal;
        if let Some(&first) = self.lists.openers.first() {
            self.mark_newly_safe(first);
            self.lists.openers.clear();
        }
        self.in_code = false;
        self.escape = false;
        self.pos = self.pos.max(at);
    }

    /// A pending delimiter run ends where the reading stopped (the byte after it is
    /// `next`, `None` for the end of a line or block).
    fn end_run(&mut self, next: Option<u8>) {
        if let Some((start, ch, prev)) = self.run.take() {
            // The run's bytes were all read: it ends where the reading stopped.
            self.resolve_run(start, self.pos, ch, prev, next);
        }
    }

    /// Matches a complete delimiter run (see the module docs): closes the nearest openers
    /// it can close, innermost delimiters first, then keeps what is left as an opener if it
    /// can open.
    fn resolve_run(
        &mut self,
        start: usize,
        end: usize,
        ch: u8,
        prev: Option<u8>,
        next: Option<u8>,
    ) {
        let len = end - start;
        if len == 0 {
            return;
        }
        // Strikethrough is read with two tildes only: a single `~` is far more often
        // "about" (`~3800 chars`) than a strikethrough, and closing it at a cut would strike
        // text through that the whole reply shows plainly.
        if ch == b'~' && len != 2 {
            return;
        }
        let (can_open, can_close) = flanking(ch, prev, next);
        let mut at = start;
        let mut left = len;
        if can_close {
            while left > 0 {
                let Some(k) = self
                    .lists
                    .emph_open
                    .iter()
                    .rposition(|o| o.closed_by(ch, len, left, can_open))
                else {
                    break;
                };
                let o = self.lists.emph_open[k];
                let used = if ch == b'~' {
                    left
                } else if o.left >= 2 && left >= 2 {
                    2
                } else {
                    1
                };
                self.lists.emph.push(EmphSpan {
                    start: o.pos + o.left - used,
                    close: at,
                    ch,
                    len: used,
                });
                // The delimiters between them can no longer match.
                self.lists.emph_open.truncate(k + 1);
                if o.left == used {
                    self.lists.emph_open.pop();
                } else {
                    self.lists.emph_open[k].left -= used;
                }
                at += used;
                left -= used;
            }
        }
        if left > 0 && can_open && self.lists.emph_open.len() < MAX_OPENERS {
            self.lower_expiry(at.saturating_add(EMPH_LOOK));
            self.lists.emph_open.push(EmphOpener {
                pos: at,
                ch,
                left,
                run: len.min(255) as u8,
                closes: can_close,
            });
        }
    }

    /// The emphasis, strong emphasis and strikethrough delimiters a cut at `p` leaves open
    /// in the piece before it, outermost first: the matched ones around `p`, and (for a
    /// text that goes on, whose closers may still arrive) those that may open and are not
    /// matched yet. Empty when there are more than a piece repairs.
    #[inline]
    pub(crate) fn emphasis_at(&self, p: usize) -> SpanDelims {
        // Most cuts: no opener waits, and every matched span closed before `p`.
        let none =
            self.lists.0.as_ref().is_none_or(|l| {
                l.emph_open.is_empty() && l.emph.last().is_none_or(|e| e.close <= p)
            });
        if none {
            return SpanDelims::NONE;
        }
        self.emphasis_around(p)
    }

    /// [`InlineScanner::emphasis_at`] when some emphasis may hold `p`.
    #[inline(never)]
    fn emphasis_around(&self, p: usize) -> SpanDelims {
        let mut found: [(usize, u8, usize); MAX_DELIMS] = [(0, 0, 0); MAX_DELIMS];
        let mut n = 0;
        // Matched spans are kept in the order they closed, which is the order of their
        // closing delimiters: only those closing after `p` may hold it.
        let after = self.lists.emph.partition_point(|e| e.close <= p);
        let matched = self.lists.emph[after..]
            .iter()
            .filter(|e| e.holds_cut(p))
            .map(|e| (e.start, e.ch, e.len));
        let open = self
            .lists
            .emph_open
            .iter()
            .filter(|o| o.pos + o.left < p)
            .map(|o| (o.pos, o.ch, o.left.min(3)));
        for item in matched.chain(open) {
            if n == MAX_DELIMS {
                return SpanDelims::NONE;
            }
            found[n] = item;
            n += 1;
        }
        // Outermost first: an outer delimiter starts before an inner one.
        found[..n].sort_unstable_by_key(|&(start, _, _)| start);
        let mut delims = SpanDelims::NONE;
        for &(_, ch, len) in &found[..n] {
            delims.push(ch, len);
        }
        delims
    }

    /// The consumer removed the first `n` bytes of its text: drop the spans that ended
    /// there and shift the rest.
    pub(crate) fn drain(&mut self, n: usize) {
        if let Some(lists) = self.lists.built() {
            lists.drain(n);
        }
        if let Some((start, ch, prev)) = self.run {
            self.run = Some((start.saturating_sub(n), ch, prev));
        }
        self.state = match self.state {
            State::Normal => State::Normal,
            State::AfterBracket { start } => State::AfterBracket {
                start: start.saturating_sub(n),
            },
            State::Dest { start, depth } => State::Dest {
                start: start.saturating_sub(n),
                depth,
            },
            State::Url { start } => State::Url {
                start: start.saturating_sub(n),
            },
            State::Angle { start } => State::Angle {
                start: start.saturating_sub(n),
            },
        };
        self.newly_safe = self.newly_safe.map(|p| p.saturating_sub(n));
        self.pos = self.pos.saturating_sub(n);
    }
}

/// The most delimiter runs a cut closes and reopens.
const MAX_DELIMS: usize = 6;

/// The delimiter runs open at a cut, outermost first: an inline code span's backtick run,
/// emphasis, strong emphasis and strikethrough delimiters. A piece cut inside them ends
/// with them closed (innermost first) and the next piece starts with them reopened
/// (outermost first), so each piece renders them as the whole text does. All ASCII: their
/// length in bytes is their length in every metric.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct SpanDelims {
    runs: [(u8, u8); MAX_DELIMS],
    n: u8,
}

impl SpanDelims {
    /// No delimiters.
    pub(crate) const NONE: SpanDelims = SpanDelims {
        runs: [(0, 0); MAX_DELIMS],
        n: 0,
    };

    /// Adds a run of `len` times `ch`, inside the runs already there; false when it does
    /// not fit (too many runs, or a run longer than 255).
    pub(crate) fn push(&mut self, ch: u8, len: usize) -> bool {
        let n = usize::from(self.n);
        if n == MAX_DELIMS || len == 0 || len > usize::from(u8::MAX) {
            return false;
        }
        self.runs[n] = (ch, len as u8);
        self.n += 1;
        true
    }

    /// Whether there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The runs, outermost first.
    fn runs(&self) -> &[(u8, u8)] {
        &self.runs[..usize::from(self.n)]
    }

    /// Their length (bytes, and units in any metric).
    pub(crate) fn len(&self) -> usize {
        self.runs().iter().map(|&(_, l)| usize::from(l)).sum()
    }

    /// Adds `inner`'s runs inside these; false (and unchanged) when they do not fit.
    pub(crate) fn extend(&mut self, inner: SpanDelims) -> bool {
        if usize::from(self.n) + usize::from(inner.n) > MAX_DELIMS {
            return false;
        }
        for &(ch, len) in inner.runs() {
            self.push(ch, usize::from(len));
        }
        true
    }

    /// Appends the runs that reopen them, outermost first.
    pub(crate) fn push_open(&self, out: &mut String) {
        for &(ch, len) in self.runs() {
            for _ in 0..len {
                out.push(ch as char);
            }
        }
    }

    /// Appends the runs that close them, innermost first.
    pub(crate) fn push_close(&self, out: &mut String) {
        for &(ch, len) in self.runs().iter().rev() {
            for _ in 0..len {
                out.push(ch as char);
            }
        }
    }
}

/// Whether a delimiter run of `ch` between the bytes `prev` and `next` (`None`: the edge
/// of the line, whitespace) may open and may close emphasis (CommonMark's flanking rules;
/// a non-ASCII byte counts as a letter).
fn flanking(ch: u8, prev: Option<u8>, next: Option<u8>) -> (bool, bool) {
    let ws = |b: Option<u8>| b.is_none_or(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'));
    let punct = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_punctuation());
    let left = !ws(next) && (!punct(next) || ws(prev) || punct(prev));
    let right = !ws(prev) && (!punct(prev) || ws(next) || punct(next));
    match ch {
        // `_` inside a word neither opens nor closes (snake_case).
        b'_' => (
            left && (!right || punct(prev)),
            right && (!left || punct(next)),
        ),
        _ => (left, right),
    }
}

/// Whether the byte at `at` is escaped by an odd run of backslashes before it.
fn escaped(bytes: &[u8], at: usize) -> bool {
    bytes[..at]
        .iter()
        .rev()
        .take_while(|&&b| b == b'\\')
        .count()
        % 2
        == 1
}

/// Whether `bytes` ends with `word` (ASCII, any case).
fn ends_with_ignore_case(bytes: &[u8], word: &[u8]) -> bool {
    bytes.len() >= word.len() && bytes[bytes.len() - word.len()..].eq_ignore_ascii_case(word)
}

/// Whether a bare URL may start at `start`: at the text's start or after a byte that is not
/// an ASCII letter or digit.
fn url_may_start(bytes: &[u8], start: usize) -> bool {
    start == 0 || !bytes[start - 1].is_ascii_alphanumeric()
}

/// Whether `inner` (between `<` and `>`) makes an autolink: a letter first, and a `:` (a
/// scheme) or an `@` (an e-mail address) in it.
fn is_autolink(inner: &[u8]) -> bool {
    inner.first().is_some_and(u8::is_ascii_alphabetic)
        && inner.iter().any(|&b| b == b':' || b == b'@')
}

#[cfg(test)]
mod tests {
    use super::super::MarkdownScanner;

    /// The grouped search finds what a byte-by-byte one does: each byte value at each
    /// offset of texts of every length around the group sizes, the first one found.
    #[test]
    fn find_special_finds_the_first_special_byte() {
        let specials = b"[]\\</.*_~";
        for b in 0..=255u8 {
            assert_eq!(super::SPECIAL[usize::from(b)], specials.contains(&b), "{b}");
            for len in 1..40 {
                for at in 0..len {
                    let mut text = vec![b'a'; len];
                    text[at] = b;
                    if at + 1 < len {
                        text[len - 1] = b'*';
                    }
                    let expected = text.iter().position(|b| specials.contains(b));
                    let found = super::find_special(&text, 0, len);
                    assert_eq!(found, expected, "{b} at {at} of {len}");
                    // From every start and to every end, with special bytes before the
                    // start (a group read back must not find them): for a special byte
                    // and two others.
                    if !(specials.contains(&b) || b == b'a' || b == 0xFF) {
                        continue;
                    }
                    for from in 0..len {
                        let mut text = vec![b'*'; len];
                        text[from..].fill(b'a');
                        text[at.max(from)] = b;
                        for to in from..=len {
                            let expected = text[from..to]
                                .iter()
                                .position(|b| specials.contains(b))
                                .map(|k| from + k);
                            let found = super::find_special(&text, from, to);
                            assert_eq!(found, expected, "{b} at {at}, {from}..{to} of {len}");
                        }
                    }
                }
            }
        }
    }

    /// The spans read from `text`, fed whole and byte by byte (they must agree).
    fn spans(text: &str) -> Vec<&str> {
        let mut whole = MarkdownScanner::new();
        whole.finish(text);
        let mut bytewise = MarkdownScanner::new();
        for end in 1..=text.len() {
            if text.is_char_boundary(end) {
                bytewise.scan(&text[..end]);
            }
        }
        bytewise.finish(text);
        assert_eq!(whole.inline.spans(), bytewise.inline.spans(), "{text:?}");
        whole
            .inline
            .spans()
            .iter()
            .map(|s| &text[s.start..s.end])
            .collect()
    }

    #[test]
    fn links_images_autolinks_and_urls() {
        assert_eq!(
            spans("See [the docs](https://x.io/a_(b)) and ![a cat](c.png \"t (1)\")."),
            [
                "[the docs](https://x.io/a_(b))",
                "![a cat](c.png \"t (1)\")"
            ]
        );
        assert_eq!(
            spans("A [link text\nover two lines](u) here"),
            ["[link text\nover two lines](u)"]
        );
        assert_eq!(
            spans("[outer [inner] text](u)"),
            ["[outer [inner] text](u)"]
        );
        assert_eq!(spans("[![img](i.png)](u)"), ["[![img](i.png)](u)"]);
        assert_eq!(
            spans("go to <https://a.b/c> or <me@x.org>, not <div> or < x>"),
            ["<https://a.b/c>", "<me@x.org>"]
        );
        assert_eq!(
            spans("at https://a.b/c?d=e. Or www.x.org\nand xhttps://no.pe"),
            ["https://a.b/c?d=e.", "www.x.org"]
        );
        assert_eq!(
            spans("[https://a.b](https://a.b)"),
            ["[https://a.b](https://a.b)"]
        );
    }

    /// The delimiters a cut at `needle`'s first byte leaves open, in `text` read whole (the
    /// last block ended) and byte by byte (they must agree).
    fn open_at(text: &str, needle: &str) -> String {
        let p = text.find(needle).expect("needle");
        let mut whole = MarkdownScanner::new();
        whole.finish(text);
        whole.end_block(text);
        let mut bytewise = MarkdownScanner::new();
        for end in 1..=text.len() {
            if text.is_char_boundary(end) {
                bytewise.scan(&text[..end]);
            }
        }
        bytewise.finish(text);
        bytewise.end_block(text);
        assert_eq!(whole.emphasis_at(p), bytewise.emphasis_at(p), "{text:?}");
        let mut out = String::new();
        whole.emphasis_at(p).push_open(&mut out);
        out
    }

    #[test]
    fn emphasis_delimiters_open_at_a_cut() {
        assert_eq!(open_at("Some **bold text here** and", " text"), "**");
        assert_eq!(open_at("Some *it* and **bold** x", " and"), "");
        assert_eq!(open_at("***both** then em* x", " then"), "*");
        assert_eq!(open_at("***both at once*** x", " at"), "***");
        assert_eq!(open_at("**bold _and it_ more**", " it_"), "**_");
        assert_eq!(open_at("~~gone text~~ kept", " text"), "~~");
        // `_` inside words, `*` between spaces, unmatched runs: nothing to close.
        assert_eq!(open_at("snake_case and more_words here", " and"), "");
        assert_eq!(open_at("2 * 3 = 6 * 1 ok", " 3"), "");
        assert_eq!(open_at("an **unmatched run", " run"), "");
        assert_eq!(open_at("**not across\n\nblocks**", "across"), "");
        assert_eq!(open_at("`**code**` **real one**", " one"), "**");
        // CommonMark's rule of 3: `2*3` (a run that may open and close) does not close an
        // earlier `**`, nor `**` a `*`; `***a***` and `*a**b***` still pair.
        assert_eq!(open_at("**never closed then 2*3*4 ok", " then"), "");
        assert_eq!(open_at("*a**b c", " c"), "");
        assert_eq!(open_at("*em **strong** em* x", " em*"), "*");
        assert_eq!(open_at("***both at once*** x", " once"), "***");
        // While the text goes on, an opener whose closer may still come counts.
        let mut s = MarkdownScanner::new();
        s.scan("Some **bold text");
        let mut out = String::new();
        s.emphasis_at(11).push_open(&mut out);
        assert_eq!(out, "**");
    }

    #[test]
    fn what_is_not_a_link() {
        assert!(spans("[1] and [2] (later)").is_empty());
        assert!(spans("\\[not](a link)").is_empty());
        assert!(spans("`[code](x)` here").is_empty());
        // A block boundary ends an open bracket or destination: it was literal text.
        assert!(spans("[open\n\ntext](u)").is_empty());
        assert!(spans("[open](u\n- item)").is_empty());
        assert!(spans("```\n[a](b)\n```").is_empty());
    }

    #[test]
    fn undecided_brackets_hold_cuts_until_decided() {
        let mut s = MarkdownScanner::new();
        let text = "Intro [some text";
        s.scan(text);
        assert!(!s.is_safe_cut(text.find(" text").unwrap()));
        assert!(s.is_safe_cut(5));
        let _ = s.take_newly_safe();
        let text = "Intro [some text] and more";
        s.scan(text);
        assert!(
            s.is_safe_cut(text.find(" text").unwrap()),
            "literal brackets"
        );
        assert_eq!(s.take_newly_safe(), Some(6));
        // A bracket open longer than the look-back is literal.
        let long = format!("[{}", "word ".repeat(super::LINK_LOOK / 5 + 2));
        let mut s = MarkdownScanner::new();
        s.scan(&long);
        assert!(s.is_safe_cut(long.len() - 6));
    }
}

/// The reading over a real reply (tables, bold, a stray `~`): split-invariant, and right at
/// every moment of a stream that is drained as a chunker drains it.
#[cfg(test)]
mod corpus_reading {
    use super::super::MarkdownScanner;

    const REPLY: &str = include_str!("../../../tests/data/reasoning-stream-design.md");

    /// Read whole and byte by byte, the spans are the same.
    #[test]
    fn emphasis_reading_is_split_invariant_on_a_corpus_file() {
        let text = REPLY;
        let mut whole = MarkdownScanner::new();
        whole.scan(text);
        let mut bytewise = MarkdownScanner::new();
        for end in 1..=text.len() {
            if text.is_char_boundary(end) {
                bytewise.scan(&text[..end]);
            }
        }
        assert_eq!(whole.inline.lists.emph, bytewise.inline.lists.emph);
        assert_eq!(
            whole.inline.lists.emph_open,
            bytewise.inline.lists.emph_open
        );
        assert_eq!(whole.inline.lists.spans, bytewise.inline.lists.spans);
    }

    /// Read one byte at a time and drained as a chunker drains, the reading answers at every
    /// moment as a reading of the text so far in one go.
    #[test]
    fn emphasis_at_every_moment() {
        let text = REPLY;
        let mut inc = MarkdownScanner::new();
        let mut base = 0;
        for t in 1..=4000 {
            if !text.is_char_boundary(t) {
                continue;
            }
            inc.scan(&text[base..t]);
            if t % 97 == 0 {
                let n = inc.drain_limit(inc.line_start());
                inc.drain(n);
                base += n;
            }
            if t < 3850 {
                continue;
            }
            let mut whole = MarkdownScanner::new();
            whole.scan(&text[..t]);
            for p in 3850.max(base)..t {
                assert_eq!(
                    inc.emphasis_at(p - base),
                    whole.emphasis_at(p),
                    "t {t} p {p}"
                );
            }
        }
    }
}

/// The bound on the next expiry that lets the reading skip reading its lists at each stop
/// (`expiry_bound`) never lies past the exact expiry, whatever the text, its splits and its
/// drains: so every bracket, destination, autolink and emphasis opener expires at the same
/// byte as when the lists were read at every step. Random replies built from the bytes that
/// open and close them, with stretches longer than [`LINK_LOOK`] and [`EMPH_LOOK`], read in
/// random pieces and drained as a chunker drains, against the same reply read in one go.
/// Also the quick answers of the cut queries against their full readings.
#[cfg(test)]
mod fast_paths {
    use super::super::MarkdownScanner;
    use super::{EMPH_LOOK, LINK_LOOK};

    const PIECES: &[&str] = &[
        "word ",
        "more text ",
        "[",
        "]",
        "](",
        "(",
        ")",
        "![",
        "<",
        ">",
        "<https://a.b/c>",
        "https://x.y/z ",
        "www.a.b ",
        "*",
        "**",
        "_",
        "__",
        "~~",
        "~",
        "`",
        "``",
        "\\",
        "\\[",
        "漢字 ",
        "é ",
        "\n",
        "\r\n",
        "\n\n",
        "\n- ",
        "\n> ",
        "\n1. ",
        "\n    code\n",
        "\n```\n",
        "| a | b |",
        "\n|---|---|\n",
        "a_b ",
        "2*3 ",
        " * ",
        " <a",
        " [a",
        "](a",
    ];

    fn reply(rng: &mut fastrand::Rng) -> String {
        let mut s = String::new();
        while s.len() < 12_000 {
            if rng.u8(..40) == 0 {
                // A stretch of ordinary text past the looks: openers before it expire.
                let long = [LINK_LOOK, EMPH_LOOK][rng.usize(..2)] + rng.usize(..64);
                // Words, or one long token (an autolink or a URL that never ends).
                let spaced = rng.bool();
                for _ in 0..long / 8 {
                    s.push_str(match spaced {
                        true => ["wordy ok", "ab cd ef", "1234567 "][rng.usize(..3)],
                        false => "abcdefgh",
                    });
                }
            } else {
                s.push_str(PIECES[rng.usize(..PIECES.len())]);
            }
        }
        s
    }

    fn check(s: &MarkdownScanner) {
        assert!(
            s.inline.expiry_bound() <= s.inline.expiry(),
            "bound {} past the expiry {}",
            s.inline.expiry_bound(),
            s.inline.expiry()
        );
    }

    /// The quick answers of `span_at` and `emphasis_at` (nothing can hold the cut) agree
    /// with the full readings at every position of random replies, read in pieces.
    #[test]
    fn quick_answers_agree_with_the_full_readings() {
        for seed in 100..106 {
            let mut rng = fastrand::Rng::with_seed(seed);
            let text = reply(&mut rng);
            let mut s = MarkdownScanner::new();
            let mut t = 0;
            while t < text.len() {
                t = (t + 1 + rng.usize(..500)).min(text.len());
                while !text.is_char_boundary(t) {
                    t += 1;
                }
                s.scan(&text[..t]);
                for p in t.saturating_sub(600)..=t {
                    assert_eq!(s.inline.span_at(p), s.inline.span_around(p), "{seed} {p}");
                    assert_eq!(
                        s.inline.emphasis_at(p),
                        s.inline.emphasis_around(p),
                        "{seed} {p}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_bound_never_passes_the_expiry() {
        for seed in 0..12 {
            let mut rng = fastrand::Rng::with_seed(seed);
            let text = reply(&mut rng);
            let mut whole = MarkdownScanner::new();
            whole.scan(&text);
            check(&whole);
            let mut inc = MarkdownScanner::new();
            let (mut base, mut t) = (0, 0);
            while t < text.len() {
                t = (t + 1 + rng.usize(..300)).min(text.len());
                while !text.is_char_boundary(t) {
                    t += 1;
                }
                inc.scan(&text[base..t]);
                check(&inc);
                if rng.bool() {
                    let mut n = inc.line_start().min(rng.usize(..=t - base));
                    while !text.is_char_boundary(base + n) {
                        n -= 1;
                    }
                    let n = inc.drain_limit(n);
                    inc.drain(n);
                    base += n;
                    check(&inc);
                }
            }
            // What the drained reading still holds reads as the whole one.
            for p in base..text.len() {
                assert_eq!(
                    inc.inline_at(p - base).map(|s| s.start + base),
                    whole.inline_at(p).map(|s| s.start),
                    "seed {seed} p {p}"
                );
                assert_eq!(
                    inc.emphasis_at(p - base),
                    whole.emphasis_at(p),
                    "seed {seed} p {p}"
                );
            }
        }
    }
}
