//! The unit of output of the chunker and the splitter.

use std::ops::Range;

/// One piece of text cut from a longer text, ready to be shown as (part of) a message.
///
/// `text` is what is displayed: `source` from the original text, plus synthetic text where a
/// cut fell inside code. A piece cut inside a fenced code block ends with `"\n"` and a
/// synthetic closing fence line (`fence_closed`), and the next piece starts with a synthetic
/// opening fence line and `"\n"` (`fence_reopened`); a piece that continues an indented code
/// line cut in its middle starts with 4 synthetic spaces (`indent_reopened`).
///
/// The whitespace between pieces is kept, not lost: `sep` is the original text between this
/// piece and the next one (`"\n\n"`, `"\n"`, `" "`, `""` for a hard cut, or whatever
/// whitespace stood there, blank lines included), and `lead` is whitespace before this
/// piece that no separator holds (the text's leading whitespace, on the first piece).
/// Concatenating `lead + original[source] + sep` over all pieces gives back the original
/// text exactly.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Block {
    /// The display text, synthetic text included.
    pub text: String,
    /// Whitespace before `source` that the previous piece's `sep` does not hold: the
    /// leading whitespace of the text (or, for the chunker, of the text after a flush).
    pub lead: String,
    /// The source text that separated this piece from the next one.
    pub sep: String,
    /// The byte range of the original text that `text` shows (synthetic text excluded).
    pub source: Range<usize>,
    /// `text` starts with a synthetic fence opening line and a `"\n"`.
    pub fence_reopened: bool,
    /// `text` starts with 4 synthetic spaces: an indented code line cut in its middle goes
    /// on here.
    pub indent_reopened: bool,
    /// `text` ends with a `"\n"` and a synthetic closing fence line.
    pub fence_closed: bool,
}

impl Block {
    /// The byte range of `text` that shows `source`: `text` without its synthetic start and
    /// end.
    pub fn source_in_text(&self) -> Range<usize> {
        let start = if self.fence_reopened {
            self.text.find('\n').map_or(0, |i| i + 1)
        } else if self.indent_reopened {
            4
        } else {
            0
        };
        let end = (start + self.source.len()).min(self.text.len());
        start..end
    }
}
