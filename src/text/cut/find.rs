//! The search for the best safe cut in a window, and for a line break of code.

use crate::text::markdown::{FenceMarker, MarkdownScanner};

use super::bounds::*;
use super::candidate::*;

/// The best safe candidate with `lo <= end <= hi` for a piece starting at `start`: the first
/// class of `order` that has one, and the last candidate of that class. Searches backward
/// from `hi` and stops early once the best class is found.
#[allow(clippy::too_many_arguments)]
pub(crate) fn find_cut(
    text: &str,
    scanner: &MarkdownScanner,
    start: usize,
    lo: usize,
    hi: usize,
    order: &[BreakClass],
    complete: bool,
    safety: Safety,
    bounds: Option<ContentBounds>,
) -> Option<Cut> {
    let bytes = text.as_bytes();
    let hi = hi.min(bytes.len().saturating_sub(1));
    let lo = lo.max(1);
    if order.is_empty() || lo > hi {
        return None;
    }
    let mut lines = LineStarts::new(start);
    let mut best: Option<(usize, Candidate)> = None;
    // The best one before a quoted list item's deep fence: only when no other fits.
    let mut last_resort: Option<(usize, Candidate)> = None;
    let mut j = hi;
    loop {
        if may_be_candidate(bytes, j)
            && let Some(f) = scanner.fence_at(j)
        {
            // Every cut from the fence's first inner position up to `j` is inside it: none
            // of them can be chosen, so jump over them.
            let first = if f.continued { f.start } else { f.start + 1 };
            if first <= lo {
                break;
            }
            j = first - 1;
            continue;
        }
        if may_be_candidate(bytes, j)
            && let Some(c) = candidate_at(text, j, complete)
            && let Some(rank) = c.rank(order)
            && best.is_none_or(|(r, _)| rank < r)
            && match safety {
                Safety::Strict => scanner.is_safe_cut(j),
                Safety::InCodeSpan => scanner.is_safe_cut_in_code_span(j),
                Safety::InTable => scanner.is_safe_cut_in_table(j),
                Safety::InTableLink => scanner.is_safe_cut_in_table_link(j),
                Safety::InLink => scanner.is_safe_cut_in_link(j),
                Safety::InQuotedStretch => scanner.is_safe_cut_in_quoted_stretch(j),
            }
            && allows(bounds, c.end, c.sep_end)
            && !truncates_into_fence_line(text, &mut lines, c.end, None)
        {
            if c.has(BreakClass::Line) && starts_quoted_deep_fence(scanner, c.sep_end) {
                if last_resort.is_none_or(|(r, _)| rank < r) {
                    last_resort = Some((rank, c));
                }
            } else {
                best = Some((rank, c));
                if rank == 0 {
                    break;
                }
            }
        }
        if j == lo {
            break;
        }
        j -= 1;
    }
    best.or(last_resort).map(|(rank, c)| Cut {
        end: c.end,
        sep_end: c.sep_end,
        class: order[rank],
    })
}

/// Whether a piece starting at `at` starts at the opening line of a fence in a list item
/// inside a block quote that, shown without the item, reads as indented code: past the
/// quote's `>` and the one space that goes with it, the item's columns and the fence's own
/// indentation reach 4. De-indenting cannot help there (the spaces stand after a `>`), so a
/// cut right before such a line is taken only where no other fits in the window.
fn starts_quoted_deep_fence(scanner: &MarkdownScanner, at: usize) -> bool {
    let Some(f) = scanner.fence_at(at + 1).filter(|f| f.start == at) else {
        return false;
    };
    let prefix = f.marker.prefix.as_str();
    let Some(q) = prefix.rfind('>') else {
        return false;
    };
    let after = &prefix.as_bytes()[q + 1..];
    let cols = after.iter().fold(0, |c, &b| match b {
        b'\t' => c + 4 - c % 4,
        _ => c + 1,
    });
    let quote_space = usize::from(matches!(after.first(), Some(b' ' | b'\t')));
    cols - quote_space + f.marker.indent >= 4
}

/// The last line break of code at which a piece may end, with `content_start < end <= hi`:
/// the piece keeps some code after `content_start`, the next piece starts on a line that
/// holds code (in a fence with marker char `marker`: not just marker chars and spaces, so
/// that it never starts with a closing line), and `bounds` allow it.
pub(crate) fn find_code_line_cut(
    text: &str,
    content_start: usize,
    hi: usize,
    fence: Option<FenceMarker>,
    bounds: Option<ContentBounds>,
) -> Option<Cut> {
    let bytes = text.as_bytes();
    let hi = hi.min(bytes.len());
    let mut search_end = hi;
    while search_end > content_start {
        let nl = content_start + memchr::memrchr(b'\n', &bytes[content_start..search_end])?;
        // The whitespace run around this newline: the piece ends at its start.
        let mut p = nl;
        while p > content_start && is_ws(bytes[p - 1]) {
            p -= 1;
        }
        let mut r = nl + 1;
        let mut last_nl = nl;
        while r < bytes.len() && is_ws(bytes[r]) {
            if bytes[r] == b'\n' {
                last_nl = r;
            }
            r += 1;
        }
        let q = last_nl + 1;
        let holds_code = match fence {
            Some(m) => starts_code(text, q, m),
            None => r < bytes.len(),
        };
        if p > content_start
            && p <= hi
            && boundary_at(text, p)
            && !(p > 0 && is_ws(bytes[p - 1]))
            && holds_code
            && allows(bounds, p, q)
        {
            return Some(Cut {
                end: p,
                sep_end: q,
                class: BreakClass::CodeLine,
            });
        }
        search_end = p.min(nl);
    }
    None
}

/// Whether the line starting at `at`, inside the fence with marker `fence`, is a line of
/// code: not blank and not one that closes the fence. A line that the text ends in the middle
/// of counts as code only once it can no longer become a closing line.
pub(super) fn starts_code(text: &str, at: usize, fence: FenceMarker) -> bool {
    let rest = &text[at..];
    match rest.find('\n') {
        Some(nl) => {
            let line = &rest[..nl];
            !line.trim_matches([' ', '\t', '\r']).is_empty() && !fence.is_closed_by(line)
        }
        None => rest.bytes().any(|b| !is_ws(b) && b != fence.ch),
    }
}

/// Whether `text[from..end]` holds non-whitespace.
#[inline]
pub(super) fn shows(text: &str, from: usize, end: usize) -> bool {
    end > from && text.as_bytes()[from..end].iter().any(|&b| !is_ws(b))
}
