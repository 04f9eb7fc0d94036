//! Table modes for formats that cannot show a GFM table: `code` lays the table out as an
//! aligned monospace block (column widths by display width, so CJK and emoji count two
//! columns), `bullets` turns each body row into one bullet of `header: value` pairs.

use super::ir::{Align, Inline, Table, plain_text};
use super::width::display_width;

/// The table as aligned monospace text: cells separated by ` | `, the header underlined
/// with `-` joined by `-|-`, each column padded to its widest cell by its alignment.
/// Cells show their text without markup (a code block cannot show bold). No line ends
/// with spaces.
pub(crate) fn aligned_table(table: &Table) -> String {
    let cell_text = |cell: &Vec<Inline>| {
        let mut s = String::new();
        plain_text(cell, &mut s);
        s
    };
    let mut rows: Vec<Vec<String>> = Vec::with_capacity(table.rows.len() + 1);
    rows.push(table.header.iter().map(cell_text).collect());
    for row in &table.rows {
        rows.push(row.iter().map(cell_text).collect());
    }
    let columns = table.align.len();
    let mut widths = vec![1; columns];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(display_width(cell));
        }
    }
    let mut out = String::new();
    for (r, row) in rows.iter().enumerate() {
        if r > 0 {
            out.push('\n');
        }
        let start = out.len();
        for (c, cell) in row.iter().enumerate() {
            if c > 0 {
                out.push_str(" | ");
            }
            let pad = widths[c] - display_width(cell);
            let (before, after) = match table.align[c] {
                Align::Left => (0, pad),
                Align::Right => (pad, 0),
                Align::Center => (pad / 2, pad - pad / 2),
            };
            out.extend(std::iter::repeat_n(' ', before));
            out.push_str(cell);
            out.extend(std::iter::repeat_n(' ', after));
        }
        let kept = start + out[start..].trim_end().len();
        out.truncate(kept);
        if r == 0 {
            out.push('\n');
            for (c, w) in widths.iter().enumerate() {
                if c > 0 {
                    out.push_str("-|-");
                }
                out.extend(std::iter::repeat_n('-', *w));
            }
        }
    }
    out
}

/// The body rows as `(header text, cell)` pairs, for one bullet per row. A table with no
/// body rows gives its header as the one row (with no header labels).
pub(crate) fn bullet_rows(table: &Table) -> Vec<Vec<(String, &Vec<Inline>)>> {
    let headers: Vec<String> = table
        .header
        .iter()
        .map(|h| {
            let mut s = String::new();
            plain_text(h, &mut s);
            s
        })
        .collect();
    if table.rows.is_empty() {
        return vec![
            table
                .header
                .iter()
                .map(|cell| (String::new(), cell))
                .collect(),
        ];
    }
    table
        .rows
        .iter()
        .map(|row| headers.iter().cloned().zip(row.iter()).collect())
        .collect()
}
