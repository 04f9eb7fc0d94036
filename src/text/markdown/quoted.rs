//! Quoted paragraph lines indented past the quote's code column (SPEC §15, containers).
//!
//! In `> Run it:\n>     cargo build`, the second line goes on with the quote's paragraph
//! (indented code cannot interrupt a paragraph): its indentation is no code. A message that
//! starts after the content of the paragraph's last line that carries a `>` (in that line,
//! or at the break before `>     cargo build`) has lost the paragraph: there the line opens
//! a quote whose content stands 4 columns past the marker's optional space, and reads as
//! indented code. A de-indentation takes columns off a line's start, before its `>`, so no
//! synthetic edge shows that line as text: no cut is made in that stretch. (Under list items
//! alone, the same line is shown de-indented instead: see `text::dedent`.)
//!
//! Whether the line after a quoted paragraph line is such a line is known only once its
//! prefix and indentation are read. Until then, cuts from that content on are undecided
//! (unsafe, as in a line that may still be a fence line), and they turn safe when the line
//! is not one.

/// The quoted paragraph lines read so far (see the module docs).
#[derive(Clone, Debug, Default)]
pub(super) struct QuotedLines {
    /// Where the content of the paragraph's last line that carries a `>` starts, while that
    /// paragraph goes on (a lazy continuation line keeps it).
    para: Option<usize>,
    /// After such a paragraph's line, until a line that decides is read: `para`. A lazy
    /// continuation line (no `>`) decides nothing: the paragraph goes on in the quote.
    pending: Option<usize>,
    /// Stretches `(from, to)`, in order: a cut at `p` with `from < p < to` would start a
    /// message in a quoted paragraph before a line that it would show as indented code.
    spans: Vec<(usize, usize)>,
}

/// How a line that goes on after a quoted paragraph line reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Goes {
    /// It goes on with the paragraph, its content indented 4 columns or more past the last
    /// `>` (and its optional space) before it.
    DeepInQuote,
    /// Anything else: a blank line, a new block, a shallower or lazy continuation line.
    Otherwise,
}

impl QuotedLines {
    /// Nothing read.
    pub(super) const NONE: QuotedLines = QuotedLines {
        para: None,
        pending: None,
        spans: Vec::new(),
    };

    /// Whether no quoted paragraph goes on and none is pending (reading a line that
    /// carries no `>` changes nothing then).
    #[inline]
    pub(super) fn is_idle(&self) -> bool {
        self.para.is_none() && self.pending.is_none()
    }

    /// Forgets everything, keeping the capacity.
    pub(super) fn reset(&mut self) {
        self.para = None;
        self.pending = None;
        self.spans.clear();
    }

    /// A line starts; the line before it left a paragraph open (`paragraph`) or not.
    /// Returns where cuts turned safe, if they did (a paragraph that went on lazily ended).
    #[inline]
    pub(super) fn line_starts(&mut self, paragraph: bool) -> Option<usize> {
        let before = self.pending;
        self.pending = self.para.filter(|_| paragraph);
        match (before, self.pending) {
            (Some(m), None) => Some(m + 1),
            _ => None,
        }
    }

    /// Whether a cut at `p` falls in a stretch where no message may start (a known one, or
    /// one still undecided).
    #[inline]
    pub(super) fn blocks_cut(&self, p: usize) -> bool {
        if self.pending.is_some_and(|m| p > m) {
            return true;
        }
        if self.spans.is_empty() {
            return false;
        }
        let i = self.spans.partition_point(|&(from, _)| from < p);
        self.spans[..i].last().is_some_and(|&(_, to)| p < to)
    }

    /// Whether the line being read goes on after a quoted paragraph line (its reading
    /// matters: see [`QuotedLines::line_read`]).
    #[inline]
    pub(super) fn is_pending(&self) -> bool {
        self.pending.is_some()
    }

    /// The line starting at `line_start` was read: its content starts at `content` (past
    /// its indentation), its prefix before that holds a `>` (`quoted`) or not, it is a
    /// paragraph's lazy continuation (`lazy`), and it `goes` on as told. Returns where cuts
    /// turned safe, if they did.
    pub(super) fn line_read(
        &mut self,
        line_start: usize,
        content: usize,
        quoted: bool,
        lazy: bool,
        goes: Goes,
    ) -> Option<usize> {
        let newly_safe = match (self.pending, goes) {
            (Some(m), Goes::DeepInQuote) => {
                if self.spans.last().is_none_or(|&(_, to)| to < line_start) {
                    self.spans.push((m, line_start));
                }
                self.pending = None;
                None
            }
            // A lazy line goes on with the paragraph: the next line decides.
            (Some(_), Goes::Otherwise) if lazy && !quoted => None,
            (Some(m), Goes::Otherwise) => {
                self.pending = None;
                Some(m + 1)
            }
            (None, _) => None,
        };
        self.para = match (quoted, lazy) {
            (true, _) => Some(content),
            (false, true) => self.para,
            (false, false) => None,
        };
        newly_safe
    }

    /// No more text comes: a line still pending is none. Returns where cuts turned safe.
    pub(super) fn finish(&mut self) -> Option<usize> {
        self.pending.take().map(|m| m + 1)
    }

    /// The consumer removed the first `n` bytes of its text.
    pub(super) fn drain(&mut self, n: usize) {
        let keep = self.spans.partition_point(|&(_, to)| to <= n);
        self.spans.drain(..keep);
        for (from, to) in &mut self.spans {
            *from = from.saturating_sub(n);
            *to -= n;
        }
        self.para = self.para.map(|m| m.saturating_sub(n));
        self.pending = self.pending.map(|m| m.saturating_sub(n));
    }
}

/// The columns between the last `>` of `prefix` (a line's start up to its content) and the
/// content, when it holds one (a tab goes to the next multiple of 4 columns from the line's
/// start). The content reads as indented code in a quote opened by that `>` when this is 5
/// or more (the marker's optional space, then 4).
pub(super) fn columns_past_quote(prefix: &[u8]) -> Option<usize> {
    let (mut col, mut after) = (0, None);
    for &b in prefix {
        col = match b {
            b'\t' => col + 4 - col % 4,
            _ => col + 1,
        };
        if b == b'>' {
            after = Some(col);
        }
    }
    after.map(|a| col - a)
}

#[cfg(test)]
mod tests {
    use super::super::MarkdownScanner;
    use super::columns_past_quote;

    #[test]
    fn no_cut_starts_a_message_before_a_deep_quoted_paragraph_line() {
        let text = "> Run it:\n>     cargo build\n> done.";
        let at = |x: &str| text.find(x).unwrap();
        let mut s = MarkdownScanner::new();
        s.finish(text);
        assert!(!s.is_safe_cut(at(" it:")), "in the line before");
        assert!(!s.is_safe_cut(at("\n>     cargo")), "at the break before");
        assert!(s.is_safe_cut(at(" build")), "in the deep line");
        assert!(s.is_safe_cut(at("\n> done")), "after it");
        // Less deep: no code alone either.
        let text = "> Run it:\n>    cargo build";
        let mut s = MarkdownScanner::new();
        s.finish(text);
        assert!(s.is_safe_cut(text.find('\n').unwrap()));
    }

    #[test]
    fn the_next_lines_indentation_decides() {
        let text = "> Run it:\n> x";
        let brk = text.find('\n').unwrap();
        let mut s = MarkdownScanner::new();
        s.scan(&text[..brk + 3]);
        assert!(!s.is_safe_cut(brk), "undecided");
        let _ = s.take_newly_safe();
        s.scan(text);
        assert!(s.is_safe_cut(brk));
        assert!(s.take_newly_safe().is_some_and(|p| p <= brk));
        // A lazy line decides nothing: the line after it does.
        let text = "> Run it,\nthen this:\n>     cargo build";
        let mut s = MarkdownScanner::new();
        s.scan(&text[..text.find("\n>").unwrap() + 2]);
        assert!(!s.is_safe_cut(text.find(" it,").unwrap()));
        s.finish(text);
        assert!(!s.is_safe_cut(text.find(" this:").unwrap()));
        assert!(!s.is_safe_cut(text.find("\nthen").unwrap()));
    }

    #[test]
    fn columns_are_counted_from_the_last_marker() {
        assert_eq!(columns_past_quote(b"    "), None);
        assert_eq!(columns_past_quote(b">     "), Some(5));
        assert_eq!(columns_past_quote(b"   > >  "), Some(2));
        // The tab after `>` reaches column 4: 3 columns past it.
        assert_eq!(columns_past_quote(b">\t"), Some(3));
        assert_eq!(columns_past_quote(b">\t\t"), Some(7));
    }
}
