//! A message that starts among a table's rows shows the table's header again (SPEC §15,
//! tables).
//!
//! The chunker repeats a long table's header and delimiter rows at the top of a block that
//! goes on with its rows wherever they fit in a block with the row after the cut. Where they
//! do not, the block starts with the row plainly and carries the header as a repeat would
//! show it ([`Block::table_head`](crate::text::block::Block::table_head)). A message has
//! more room than a block when the text limit is above `chunk_max`, so where such a block
//! starts a message, the message may show the header before it after all: with the whole
//! block when they fit together, else with as many of the block's rows as fit (the rows
//! after them start the next message, under the header again). Only the rows' source text
//! and the synthetic header are shown: `lead + source + sep` and the sends' source ranges
//! stay exact.

use smallvec::SmallVec;

use crate::Lane;
use crate::render::Measured;
use crate::text::markdown::MarkdownScanner;

use super::CoalescerConfig;
use super::piece::{is_sep_ws, line_breaks};

/// `head` then `text`, with its length in the metric and the render that measured it (if
/// one was needed), when the two stay within `max`, the line cap and (with a rendered
/// format) the posted limit together.
pub(super) fn with_table_head(
    config: &CoalescerConfig,
    head: &str,
    text: &str,
    lane: Lane,
) -> Option<(String, usize, Option<Measured>)> {
    let mut joined = String::with_capacity(head.len() + text.len());
    joined.push_str(head);
    joined.push_str(text);
    // (Exact in every metric: `head` ends with a line break, after which a cluster starts.)
    let units = config.metric.len(head) + config.metric.len(text);
    let lines = line_breaks(&joined) + 1;
    if units > config.max || config.max_lines.is_some_and(|cap| lines > cap) {
        return None;
    }
    let (within, measured) = config.posts_within(&joined, Some(units), lane);
    within.then_some((joined, units, measured))
}

/// The first rows of `text` (a block's text that starts with a body row of the table `head`
/// heads) under `head`, where `head` and the whole text do not fit in a message together:
/// `head` and the rows up to the last row end that fits (the message, with its length and
/// render), and where the rest starts in `text` (the next row's start, past its
/// indentation, as the chunker starts a block there). `None` when not even the first row
/// fits under the header, or no row follows it in the table: the text then goes on plainly,
/// as in its block.
pub(super) fn rows_under_head(
    config: &CoalescerConfig,
    head: &str,
    text: &str,
    lane: Lane,
) -> Option<(String, usize, Option<Measured>, usize)> {
    let mut joined = String::with_capacity(head.len() + text.len());
    joined.push_str(head);
    joined.push_str(text);
    // Which line breaks fall between two rows of the table: read as the message would
    // show it (rare: once per block that cannot start a message with its header whole).
    let mut scanner = MarkdownScanner::new();
    scanner.finish(&joined);
    let bytes = joined.as_bytes();
    let metric = config.metric;
    // The rows' container prefix as the delimiter row shows it (a quote's `>`, an item's
    // indentation): a line read alone may be a row where, in the reply, it left the
    // table's containers (a lazy line, the next list item), so a row after a cut must
    // carry the same prefix and a pipe right after it.
    let delimiter = head.split('\n').nth(1).unwrap_or("");
    let prefix =
        &delimiter[..delimiter.len() - delimiter.trim_start_matches([' ', '\t', '>']).len()];
    // Cuts that fit: (end of the message, start of the rest, units), in order.
    let mut cuts: SmallVec<[(usize, usize, usize); 8]> = SmallVec::new();
    let (mut units, mut counted) = (metric.len(head), head.len());
    for nl in memchr::memchr_iter(b'\n', &bytes[head.len()..]).map(|i| head.len() + i) {
        let indent = bytes[nl + 1..]
            .iter()
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count();
        let next = nl + 1 + indent;
        // The next line is a row of the table the header starts.
        let row = &bytes[nl + 1..];
        let same_prefix =
            row.starts_with(prefix.as_bytes()) && row.get(prefix.len()) == Some(&b'|');
        if !same_prefix || scanner.table_at(next).is_none_or(|t| t.start >= head.len()) {
            break;
        }
        let mut end = nl;
        while end > head.len() && is_sep_ws(bytes[end - 1]) {
            end -= 1;
        }
        if end == head.len() {
            continue;
        }
        units += metric.len(&joined[counted..end]);
        counted = end;
        let lines = line_breaks(&joined[..end]) + 1;
        if units > config.max || config.max_lines.is_some_and(|cap| lines > cap) {
            break;
        }
        cuts.push((end, next, units));
    }
    // The most rows that fit as posted, too.
    cuts.iter().rev().find_map(|&(end, next, units)| {
        let (within, measured) = config.posts_within(&joined[..end], Some(units), lane);
        within.then(|| (joined[..end].to_owned(), units, measured, next - head.len()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LengthMetric;

    fn config(max: usize) -> CoalescerConfig {
        CoalescerConfig {
            min: 1,
            max,
            metric: LengthMetric::Chars,
            ..CoalescerConfig::default()
        }
    }

    #[test]
    fn the_rows_that_fit_under_the_header_and_where_the_rest_starts() {
        let head = "| H | I |\n|---|---|\n";
        let text = "| a | 1 |\n| b | 2 |\n| c | 3 |";
        let max = head.len() + "| a | 1 |\n| b | 2 |".len();
        let (first, units, _, next) =
            rows_under_head(&config(max), head, text, Lane::Answer).unwrap();
        assert_eq!(first, format!("{head}| a | 1 |\n| b | 2 |"));
        assert_eq!(units, max);
        assert_eq!(&text[next..], "| c | 3 |");
        // Not even the first row fits: nothing.
        assert!(rows_under_head(&config(head.len() + 3), head, text, Lane::Answer).is_none());
        // The whole text fits: with_table_head takes it.
        let whole = with_table_head(&config(200), head, text, Lane::Answer).unwrap();
        assert_eq!(whole.0, format!("{head}{text}"));
    }

    #[test]
    fn a_line_without_the_rows_prefix_is_no_row_to_cut_before() {
        // A table in a list item: a line at column 0 left the item in the reply (it ends
        // the table there), though read alone it would be one more row.
        let head = "  | H | I |\n  |---|---|\n";
        let text = "| a | 1 |\n  | b | 2 |\n| lazy | x |";
        let max = head.len() + text.len() - 1;
        let (first, _, _, next) = rows_under_head(&config(max), head, text, Lane::Answer).unwrap();
        assert_eq!(first, format!("{head}| a | 1 |"));
        assert_eq!(&text[next..], "| b | 2 |\n| lazy | x |");
        // In a quote: the `>` must be there.
        let head = "> | H | I |\n> |---|---|\n";
        let text = "> | a | 1 |\n> | b | 2 |\n| c | 3 |";
        let max = head.len() + text.len() - 1;
        let (first, _, _, next) = rows_under_head(&config(max), head, text, Lane::Answer).unwrap();
        assert_eq!(first, format!("{head}> | a | 1 |"));
        assert_eq!(&text[next..], "> | b | 2 |\n| c | 3 |");
    }
}
