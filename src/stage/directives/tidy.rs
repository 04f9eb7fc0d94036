//! Line tidying for the directive parser: removed directives leave no double spaces and no
//! empty lines behind (SPEC §2).
//!
//! Only where something was removed: the spaces around a removed directive collapse to one
//! space, or to none at the start or end of a line; a line that held only directives
//! disappears with its line break; a blank line that would follow another blank line (or the
//! start of the output) because a directive line disappeared is dropped. Text without
//! directives passes through byte for byte.

use std::ops::Range;

use super::DirectiveOutput;

/// Whitespace bookkeeping so removed directives leave no double spaces or empty lines.
///
/// Layout (`repr(C)`): the flags a push reads first, the held spaces last, next to the
/// parser's input that follows it.
#[derive(Clone, Debug)]
#[repr(C)]
pub(super) struct LineTidy {
    /// The current line has released non-space text.
    line_has_text: bool,
    /// A directive was removed on the current line.
    line_had_removal: bool,
    /// A directive was removed since the last released text.
    removed_since_text: bool,
    /// The last released line was blank, or nothing was released yet.
    prev_line_blank: bool,
    /// A directive-only line disappeared and no text followed yet: a blank line that would
    /// sit after another blank line is dropped.
    squeeze_blank: bool,
    /// Text other than spaces was released since the start (or the last reset).
    released_text: bool,
    /// Spaces and tabs not yet released: what they become depends on what follows.
    pending_ws: String,
}

impl LineTidy {
    pub(super) fn new() -> Self {
        LineTidy {
            pending_ws: String::new(),
            line_has_text: false,
            line_had_removal: false,
            removed_since_text: false,
            prev_line_blank: true,
            squeeze_blank: false,
            released_text: false,
        }
    }

    pub(super) fn reset(&mut self) {
        let mut ws = std::mem::take(&mut self.pending_ws);
        ws.clear();
        *self = LineTidy {
            pending_ws: ws,
            ..LineTidy::new()
        };
    }

    /// Text without a line break.
    #[inline]
    pub(super) fn text(&mut self, seg: &str, out: &mut DirectiveOutput) {
        // Plain text (the common case) first, exactly what the general path does with it.
        if self.passes_whole(seg) {
            out.push_text(seg);
            self.passed_whole();
            return;
        }
        self.text_with_spaces(seg, out);
    }

    /// Whether [`LineTidy::text`] releases `seg` whole and holds nothing after it: nothing
    /// was removed since the last released text, no spaces are held, and `seg` ends in
    /// text. Then [`LineTidy::passed_whole`] is what it does besides releasing `seg`.
    #[inline(always)]
    pub(super) fn passes_whole(&self, seg: &str) -> bool {
        // A CR counts as trailing space so that a CRLF directive-only line disappears whole.
        // The spaces are ASCII bytes, which never occur inside a multi-byte char, so
        // trimming bytes cuts `seg` exactly where trimming chars would.
        let is_space = |b: &u8| matches!(b, b' ' | b'\t' | b'\r');
        !self.removed_since_text
            && self.pending_ws.is_empty()
            && seg.as_bytes().last().is_some_and(|b| !is_space(b))
    }

    /// What [`LineTidy::text`] notes after releasing a segment whole (see
    /// [`LineTidy::passes_whole`]).
    #[inline(always)]
    pub(super) fn passed_whole(&mut self) {
        self.line_has_text = true;
        self.squeeze_blank = false;
        self.released_text = true;
    }

    /// [`LineTidy::text`] when spaces are held or the segment ends in one, or something was
    /// removed: out of line, so the plain case above stays small enough to inline.
    #[inline(never)]
    fn text_with_spaces(&mut self, seg: &str, out: &mut DirectiveOutput) {
        let is_space = |b: &u8| matches!(b, b' ' | b'\t' | b'\r');
        let bytes = seg.as_bytes();
        let Some(body_start) = bytes.iter().position(|b| !is_space(b)) else {
            self.pending_ws.push_str(seg);
            return;
        };
        let body_end = bytes
            .iter()
            .rposition(|b| !is_space(b))
            .map_or(body_start, |i| i + 1);
        if self.removed_since_text {
            // Spaces that touch a removed directive collapse to one, or to none at the
            // start of a line.
            if self.line_has_text && !(self.pending_ws.is_empty() && body_start == 0) {
                out.push_text(" ");
            }
            out.push_text(&seg[body_start..body_end]);
        } else {
            out.push_text(&self.pending_ws);
            // The leading spaces and the body in one piece: pushed one after the other they
            // would extend the same text event anyway.
            out.push_text(&seg[..body_end]);
        }
        self.pending_ws.clear();
        if body_end < seg.len() {
            self.pending_ws.push_str(&seg[body_end..]);
        }
        self.line_has_text = true;
        self.removed_since_text = false;
        self.squeeze_blank = false;
        self.released_text = true;
    }

    /// [`LineTidy::text`] for the segment `text[start..end]` when nothing was removed since
    /// the last released text, and the spaces held (if any) are the bytes right before the
    /// segment in `text`: then what `text` would release is one stretch of `text`, the held
    /// spaces and the segment up to its trailing spaces, whose range this returns (the
    /// trailing spaces are held, as `text` holds them). `None`, with nothing changed, when
    /// that is not so or the segment is only spaces: call [`LineTidy::text`].
    #[inline(always)]
    pub(super) fn plain(&mut self, text: &str, start: usize, end: usize) -> Option<Range<usize>> {
        if self.removed_since_text {
            return None;
        }
        let bytes = text.as_bytes();
        let is_space = |b: &u8| matches!(b, b' ' | b'\t' | b'\r');
        let body_end = start + bytes[start..end].iter().rposition(|b| !is_space(b))? + 1;
        let held = self.pending_ws.len();
        if held > 0 {
            if held > start || &bytes[start - held..start] != self.pending_ws.as_bytes() {
                return None;
            }
            self.pending_ws.clear();
        }
        if body_end < end {
            self.pending_ws.push_str(&text[body_end..end]);
        }
        self.line_has_text = true;
        self.squeeze_blank = false;
        self.released_text = true;
        Some(start - held..body_end)
    }

    /// [`LineTidy::text`] and [`LineTidy::newline`] for the lines of `b`, text whose last
    /// line break is at `last_nl`, when nothing was removed on the current line or since
    /// the last blank line that a removal squeezed, and no spaces are held. Then every line
    /// break goes out as written, with the spaces before it: what is released is `b`
    /// without the spaces (and tabs, CRs) at its end after `last_nl`, which are held; this
    /// returns its length. `None`, with nothing changed, when that is not so.
    #[inline]
    pub(super) fn pass_lines(&mut self, b: &[u8], last_nl: usize) -> Option<usize> {
        if self.removed_since_text
            || self.line_had_removal
            || self.squeeze_blank
            || !self.pending_ws.is_empty()
        {
            return None;
        }
        let is_space = |c: u8| matches!(c, b' ' | b'\t' | b'\r');
        let has_body = |seg: &[u8]| seg.iter().any(|&c| c != b'\n' && !is_space(c));
        // The line the last break ends: from the break before it, or from before `b`.
        let line_start = b[..last_nl].iter().rposition(|&c| c == b'\n');
        let line_text = match line_start {
            Some(p) => has_body(&b[p + 1..last_nl]),
            None => self.line_has_text || has_body(&b[..last_nl]),
        };
        // Every break released the line before it: the last one says whether it was blank.
        self.prev_line_blank = !line_text;
        self.released_text |= has_body(&b[..last_nl]);
        let tail = &b[last_nl + 1..];
        let released = match tail.iter().rposition(|&c| !is_space(c)) {
            Some(e) => {
                self.line_has_text = true;
                self.released_text = true;
                last_nl + 1 + e + 1
            }
            None => {
                self.line_has_text = false;
                last_nl + 1
            }
        };
        Some(released)
    }

    /// The spaces [`LineTidy::pass_lines`] held: the end of the text it was given, from
    /// `released` on (empty when nothing is held).
    #[inline]
    pub(super) fn hold_spaces(&mut self, spaces: &str) {
        self.pending_ws.push_str(spaces);
    }

    /// Whether text other than spaces was released since the start.
    #[inline]
    pub(super) fn released_text(&self) -> bool {
        self.released_text
    }

    #[inline]
    pub(super) fn removal(&mut self) {
        self.line_had_removal = true;
        self.removed_since_text = true;
    }

    #[inline]
    pub(super) fn newline(&mut self, out: &mut DirectiveOutput) {
        if self.line_has_text {
            if !self.removed_since_text {
                // Trailing whitespace after text, touching no removed directive: as written.
                out.push_text(&self.pending_ws);
            } else if self.pending_ws.ends_with('\r') {
                // Spaces after a removed directive go; the CR of a CRLF stays.
                out.push_text("\r");
            }
            out.push_text("\n");
            self.prev_line_blank = false;
        } else if self.line_had_removal {
            // The line held only directives: it disappears, line break included.
            self.squeeze_blank = true;
        } else if !(self.squeeze_blank && self.prev_line_blank) {
            out.push_text(&self.pending_ws);
            out.push_text("\n");
            self.prev_line_blank = true;
        }
        self.pending_ws.clear();
        self.line_has_text = false;
        self.line_had_removal = false;
        self.removed_since_text = false;
    }

    /// The end of the text (the last line has no line break).
    pub(super) fn finish(&mut self, out: &mut DirectiveOutput) {
        let keep_ws = if self.line_has_text {
            !self.line_had_removal
        } else {
            !(self.line_had_removal || (self.squeeze_blank && self.prev_line_blank))
        };
        if keep_ws {
            out.push_text(&self.pending_ws);
        }
        self.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `pieces`: `Ok(text)` is a line's text (a `\n` in it ends the line), `Err(())`
    /// a removed directive.
    fn tidy(pieces: &[Result<&str, ()>]) -> String {
        let mut t = LineTidy::new();
        let mut out = DirectiveOutput::default();
        for piece in pieces {
            match piece {
                Ok(text) => {
                    let mut lines = text.split('\n').peekable();
                    while let Some(line) = lines.next() {
                        t.text(line, &mut out);
                        if lines.peek().is_some() {
                            t.newline(&mut out);
                        }
                    }
                }
                Err(()) => t.removal(),
            }
        }
        t.finish(&mut out);
        out.text
    }

    #[test]
    fn spaces_around_a_removal_collapse() {
        assert_eq!(tidy(&[Ok("Hi "), Err(()), Ok(" there")]), "Hi there");
        assert_eq!(tidy(&[Err(()), Ok("  Hello")]), "Hello");
        assert_eq!(tidy(&[Ok("Hello "), Err(())]), "Hello");
        assert_eq!(tidy(&[Ok("a"), Err(()), Ok("b")]), "ab");
    }

    #[test]
    fn directive_only_lines_disappear() {
        assert_eq!(tidy(&[Err(()), Ok("\nHello")]), "Hello");
        assert_eq!(tidy(&[Ok("P1\n\n"), Err(()), Ok("\n\nP2")]), "P1\n\nP2");
        assert_eq!(tidy(&[Ok("P1\n"), Err(()), Ok("\n\nP2")]), "P1\n\nP2");
        assert_eq!(tidy(&[Ok("x\r\n"), Err(()), Ok("\r\ny")]), "x\r\ny");
    }

    /// `plain` releases exactly what `text` releases and holds what it holds, wherever it
    /// answers; it declines (changing nothing) after a removal and when the held spaces are
    /// not the bytes before the segment.
    #[test]
    fn plain_is_text_where_it_answers() {
        // Segments of one line, with removals (`None`) between some of them.
        let cases: [&[Option<&str>]; 6] = [
            &[
                Some("ab"),
                Some("cd "),
                Some("ef"),
                Some("  "),
                Some(" g h  "),
            ],
            &[Some("  x"), Some("\t "), Some("y\r"), Some("z")],
            &[Some("a "), None, Some(" b "), Some("c")],
            &[Some("a"), None, Some("b  "), Some("c"), Some(" ")],
            &[Some(" "), Some(" "), Some("é "), Some("ü")],
            &[None, Some("  a "), Some("b")],
        ];
        for case in cases {
            let mut whole = String::new();
            let (mut by_text, mut by_plain) = (LineTidy::new(), LineTidy::new());
            let (mut out_text, mut out_plain) =
                (DirectiveOutput::default(), DirectiveOutput::default());
            let mut answered = 0;
            for seg in case {
                let Some(seg) = seg else {
                    by_text.removal();
                    by_plain.removal();
                    continue;
                };
                let start = whole.len();
                whole.push_str(seg);
                by_text.text(seg, &mut out_text);
                match by_plain.plain(&whole, start, whole.len()) {
                    Some(range) => {
                        answered += 1;
                        out_plain.push_text(&whole[range]);
                    }
                    None => by_plain.text(seg, &mut out_plain),
                }
                assert_eq!(out_plain.text, out_text.text, "{case:?} after {seg:?}");
                assert_eq!(
                    by_plain.pending_ws, by_text.pending_ws,
                    "{case:?} after {seg:?}"
                );
            }
            by_text.newline(&mut out_text);
            by_plain.newline(&mut out_plain);
            assert_eq!(out_plain.text, out_text.text, "{case:?}");
            assert!(answered > 0, "{case:?}");
        }
        // Held spaces that are not the bytes before the segment: no answer, nothing changed.
        let mut t = LineTidy::new();
        let mut out = DirectiveOutput::default();
        t.text("a ", &mut out);
        assert_eq!(t.plain("a\tb", 2, 3), None);
        assert_eq!(t.pending_ws, " ");
        // After a removal: no answer.
        t.removal();
        assert_eq!(t.plain("a b", 2, 3), None);
    }

    #[test]
    fn text_without_removals_is_untouched() {
        let text = "a  \nb\n\n\n  \nc   ";
        assert_eq!(tidy(&[Ok(text)]), text);
    }
}
