//! Quoted lines that a message starting before them would show as indented code (SPEC §15,
//! containers).
//!
//! In `> Run it:\n>     cargo build`, the second line goes on with the quote's paragraph
//! (indented code cannot interrupt a paragraph); in `> 1) Run:\n>     ```sh`, the fence
//! stands 1 column into the item's content. Either line, seen by a message that starts after
//! the start of the quoted line before it (in that line, or at the break before the deep
//! one), has lost the paragraph or the item: there it opens a quote whose content stands 4
//! columns past the marker's optional space, and reads as indented code. A de-indentation
//! takes columns off a line's start, before its `>`, so no synthetic edge shows such a line
//! as the reply does: no cut is made in that stretch, from the start of the last line before
//! it that carries a `>` and content (blank quoted lines and lazy lines go on with it). A
//! line the reply reads as the same indented code in the quote is no such line. (Under list
//! items alone, lines are shown de-indented instead: see `text::dedent`.)
//!
//! Whether the line after a quoted line is such a line is known only once its prefix and
//! indentation are read. Until then, cuts after the quoted line's start are undecided
//! (unsafe, as in a line that may still be a fence line), the quoted line's own included:
//! a cut there taken as safe would turn unsafe when a deep line follows, and a streaming
//! consumer must never see a cut turn unsafe. They turn safe when the next line is not
//! one. A cut at the limit waits for that line meanwhile (see
//! `Planner::plan`), as it waits for a line that may still be a fence line.

/// The quoted lines read so far (see the module docs).
#[derive(Clone, Debug, Default)]
pub(super) struct QuotedLines {
    /// Where the last line that carries a `>` and content starts, while the quote goes on
    /// (blank quoted lines and lazy continuation lines keep it): cuts after it wait for the
    /// line after it.
    from: Option<usize>,
    /// From a line's start until a line that decides is read: `from`.
    pending: Option<usize>,
    /// Stretches `(from, to)`, in order: a cut at `p` with `from < p < to` would start a
    /// message before a quoted line that it would show as indented code.
    spans: Vec<(usize, usize)>,
}

/// How a line reads, for [`QuotedLines::line_read`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct QuotedLine {
    /// It carries a `>`.
    pub quoted: bool,
    /// It holds only whitespace after its prefixes.
    pub blank: bool,
    /// It keeps containers it does not carry as a paragraph's lazy continuation.
    pub lazy: bool,
    /// Its first non-blank byte after its last `>` stands 5 or more columns past the `>`,
    /// and the reply does not read it as that same indented code in the quote.
    pub deep: bool,
}

impl QuotedLines {
    /// Nothing read.
    pub(super) const NONE: QuotedLines = QuotedLines {
        from: None,
        pending: None,
        spans: Vec::new(),
    };

    /// Whether no quote goes on and nothing is pending (reading a line that carries no `>`
    /// changes nothing then).
    #[inline]
    pub(super) fn is_idle(&self) -> bool {
        self.from.is_none() && self.pending.is_none()
    }

    /// Forgets everything, keeping the capacity.
    pub(super) fn reset(&mut self) {
        self.from = None;
        self.pending = None;
        self.spans.clear();
    }

    /// A line starts. Returns where cuts turned safe, if they did.
    #[inline]
    pub(super) fn line_starts(&mut self) -> Option<usize> {
        let before = self.pending;
        self.pending = self.from;
        match (before, self.pending) {
            (Some(m), None) => Some(m + 1),
            _ => None,
        }
    }

    /// Whether a cut at `p` falls in a stretch where no message may start (a known one, or
    /// one still undecided).
    #[inline]
    pub(super) fn blocks_cut(&self, p: usize) -> bool {
        if self.undecided_at(p) {
            return true;
        }
        if self.spans.is_empty() {
            return false;
        }
        let i = self.spans.partition_point(|&(from, _)| from < p);
        self.spans[..i].last().is_some_and(|&(_, to)| p < to)
    }

    /// Whether the line being read comes after a quoted line (how it reads matters).
    #[inline]
    pub(super) fn is_pending(&self) -> bool {
        self.pending.is_some()
    }

    /// The line starting at `line_start` was read as `line`. Returns where cuts turned
    /// safe, if they did.
    pub(super) fn line_read(&mut self, line_start: usize, line: QuotedLine) -> Option<usize> {
        // A blank quoted line or a lazy one goes on with the quote: the next line decides.
        let goes_on = (line.quoted && line.blank) || (line.lazy && !line.quoted);
        let newly_safe = match self.pending {
            Some(m) if line.deep => {
                if self.spans.last().is_none_or(|&(_, to)| to < line_start) {
                    self.spans.push((m, line_start));
                }
                self.pending = None;
                None
            }
            Some(_) if goes_on => None,
            Some(m) => {
                self.pending = None;
                Some(m + 1)
            }
            None => None,
        };
        self.from = match (line.quoted && !line.blank, goes_on) {
            (true, _) => Some(line_start),
            (false, true) => self.from,
            (false, false) => None,
        };
        newly_safe
    }

    /// Whether a cut at `p` waits for the line after the last quoted one: `pending` (that
    /// line is being read) or `from` (the quoted line, or one going on with it, is).
    #[inline]
    pub(super) fn undecided_at(&self, p: usize) -> bool {
        self.pending.or(self.from).is_some_and(|m| p > m)
    }

    /// No more text comes: no line follows. Returns where cuts turned safe.
    pub(super) fn finish(&mut self) -> Option<usize> {
        let m = self.pending.take().or(self.from.take());
        m.map(|m| m + 1)
    }

    /// The consumer removed the first `n` bytes of its text.
    pub(super) fn drain(&mut self, n: usize) {
        let keep = self.spans.partition_point(|&(_, to)| to <= n);
        self.spans.drain(..keep);
        for (from, to) in &mut self.spans {
            *from = from.saturating_sub(n);
            *to -= n;
        }
        self.from = self.from.map(|m| m.saturating_sub(n));
        self.pending = self.pending.map(|m| m.saturating_sub(n));
    }
}

/// The columns between the last `>` of the run of spaces, tabs and `>` that starts `line`
/// and the byte after that run (a tab goes to the next multiple of 4 columns from the
/// line's start), when the run holds a `>`; `None` also when the line ends (or the text
/// does) within the run. A message that starts with this line reads what follows as
/// indented code in the quote that `>` opens when this is 5 or more (the marker's optional
/// space, then 4).
pub(super) fn columns_past_quote(line: &[u8]) -> Option<usize> {
    let (mut col, mut after) = (0, None);
    for &b in line {
        match b {
            b'\t' => col += 4 - col % 4,
            b' ' => col += 1,
            b'>' => {
                col += 1;
                after = Some(col);
            }
            b'\n' | b'\r' => return None,
            _ => return after.map(|a| col - a),
        }
    }
    None
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
        // In the quoted line itself, before its end: the line after it may be deep.
        let mut s = MarkdownScanner::new();
        s.scan(&text[..brk]);
        assert!(
            !s.is_safe_cut(text.find(" it").unwrap()),
            "undecided in the line"
        );
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
        assert_eq!(columns_past_quote(b"    x"), None);
        assert_eq!(columns_past_quote(b">     x"), Some(5));
        assert_eq!(columns_past_quote(b"   > >  x"), Some(2));
        assert_eq!(columns_past_quote(b"> 1)     x"), Some(1));
        assert_eq!(columns_past_quote(b">     \n"), None);
        // The tab after `>` reaches column 4: 3 columns past it.
        assert_eq!(columns_past_quote(b">\tx"), Some(3));
        assert_eq!(columns_past_quote(b">\t\tx"), Some(7));
    }
}
