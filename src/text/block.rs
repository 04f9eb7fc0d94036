//! The unit of output of the chunker and the splitter.

use std::ops::Range;

/// One piece of text cut from a longer text, ready to be shown as (part of) a message.
///
/// `text` is what is displayed. It is `source` from the original text, plus, when the cut fell
/// inside a fenced code block, a synthetic opening fence line at the start (`fence_reopened`)
/// and/or a synthetic closing fence line at the end (`fence_closed`), each joined by `"\n"`.
/// `sep` is the original text between this piece and the next one (`"\n\n"`, `"\n"`, `" "`,
/// `""` for a hard cut, or whatever whitespace run stood there). Concatenating
/// `original[source] + sep` over all pieces gives back the original text exactly.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Block {
    /// The display text, synthetic fence lines included.
    pub text: String,
    /// The source text that separated this piece from the next one.
    pub sep: String,
    /// The byte range of the original text that `text` shows (synthetic lines excluded).
    pub source: Range<usize>,
    /// `text` starts with a synthetic fence opening line and a `"\n"`.
    pub fence_reopened: bool,
    /// `text` ends with a `"\n"` and a synthetic fence closing line.
    pub fence_closed: bool,
}
