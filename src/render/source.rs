//! The Markdown formats, written from the source: `markdown` keeps the send as written;
//! `discord` keeps it too, apart from tables (Discord shows none: laid out per table mode)
//! and `@everyone` / `@here`, which get a zero-width space after the `@` so they do not ping
//! unless the host allows it. Code blocks are left untouched (a mention in code never pings).

use super::TableMode;
use super::blocks::parse_document;
use super::ir::{Block, Table};
use super::table::aligned_table;

/// The zero-width space that breaks a mass mention.
const BREAK: &str = "\u{200B}";

/// Writes `markdown` for a Markdown platform: tables per `tables`, mass mentions broken
/// unless `allow_mentions`.
pub(crate) fn write_markdown(markdown: &str, tables: TableMode, allow_mentions: bool) -> String {
    let convert_tables =
        matches!(tables, TableMode::Code | TableMode::Bullets) && may_hold_table(markdown);
    let has_mentions =
        !allow_mentions && (markdown.contains("@everyone") || markdown.contains("@here"));
    if !convert_tables && !has_mentions {
        return markdown.to_owned();
    }
    let mut out = String::with_capacity(markdown.len() + 16);
    let mut at = 0;
    for located in parse_document(markdown) {
        let range = located.range;
        let (replace, code) = match &located.block {
            Block::Table(table) if convert_tables => (Some(table_markdown(table, tables)), false),
            Block::Code { .. } => (None, true),
            _ => (None, false),
        };
        if replace.is_none() && !code {
            continue;
        }
        push_source(&markdown[at..range.start], has_mentions, &mut out);
        match replace {
            Some(text) => {
                out.push_str(&text);
                // Keep the table's own line ending.
                let lines = &markdown[range.clone()];
                let ending = &lines[lines.trim_end_matches(['\n', '\r']).len()..];
                out.push_str(ending);
            }
            None => out.push_str(&markdown[range.clone()]),
        }
        at = range.end;
    }
    push_source(&markdown[at..], has_mentions, &mut out);
    out
}

/// Whether `markdown` may hold a table: a line that could be a delimiter row (`|---|:-:|`),
/// as written, container prefixes included (quote markers, list markers, indentation):
/// a `|` and a `-`, and nothing but those, `:`, list and quote marker bytes, whitespace
/// and non-ASCII bytes (a cell is trimmed of Unicode whitespace). Without one no table is
/// read, so the send is not parsed to find one (code with `|` in it is common).
fn may_hold_table(markdown: &str) -> bool {
    let bytes = markdown.as_bytes();
    let Some(first) = memchr::memchr(b'|', bytes) else {
        return false;
    };
    let mut start = bytes[..first]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    while start < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |p| start + p);
        let line = &bytes[start..end];
        let row_bytes = line.iter().all(|&b| {
            b >= 0x80
                || b.is_ascii_digit()
                || matches!(
                    b,
                    b'|' | b'-'
                        | b':'
                        | b'>'
                        | b'*'
                        | b'+'
                        | b'.'
                        | b')'
                        | b' '
                        | b'\t'
                        | b'\r'
                        | b'\x0b'
                        | b'\x0c'
                )
        });
        if row_bytes && line.contains(&b'|') && line.contains(&b'-') {
            return true;
        }
        // On to the next line with a `|`.
        match memchr::memchr(b'|', &bytes[end..]) {
            Some(p) => {
                let pipe = end + p;
                start = bytes[..pipe]
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |p| p + 1);
            }
            None => return false,
        }
    }
    false
}

fn push_source(text: &str, break_mentions: bool, out: &mut String) {
    if !break_mentions {
        out.push_str(text);
        return;
    }
    let mut rest = text;
    while let Some(p) = rest.find('@') {
        out.push_str(&rest[..=p]);
        rest = &rest[p + 1..];
        if rest.starts_with("everyone") || rest.starts_with("here") {
            out.push_str(BREAK);
        }
    }
    out.push_str(rest);
}

/// A table in Markdown for a platform without tables.
fn table_markdown(table: &Table, tables: TableMode) -> String {
    if tables == TableMode::Code {
        let body = aligned_table(table);
        let longest = longest_backtick_run(&body);
        let fence = "`".repeat(longest.max(2) + 1);
        return format!("{fence}\n{body}\n{fence}");
    }
    let mut out = String::new();
    let rows: Vec<&Vec<String>> = if table.raw_rows.is_empty() {
        vec![&table.raw_header]
    } else {
        table.raw_rows.iter().collect()
    };
    for (r, row) in rows.into_iter().enumerate() {
        if r > 0 {
            out.push('\n');
        }
        out.push_str("- ");
        let mut first = true;
        for (header, cell) in table.raw_header.iter().zip(row) {
            if cell.is_empty() {
                continue;
            }
            if !first {
                out.push_str("; ");
            }
            first = false;
            if !table.raw_rows.is_empty() && !header.is_empty() {
                out.push_str(header);
                out.push_str(": ");
            }
            out.push_str(cell);
        }
    }
    out
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whenever the parser reads a table, the pre-check says a table may be there; code
    /// and prose with `|` in them are not parsed for one.
    #[test]
    fn every_table_read_is_one_the_check_lets_through() {
        const PIECES: &[&str] = &[
            "| a | b |\n",
            "|---|---|\n",
            "| :-: | --: |\n",
            "--- | ---\n",
            "a | b\n",
            "> ",
            "- ",
            "1. ",
            "  ",
            "\t",
            "\n",
            "\u{3000}",
            "| 日本 |\n",
            "|-|\n",
            "x",
            "\\|",
            "let f = |x| x - 1;\n",
            "```\n",
        ];
        let mut rng = fastrand::Rng::with_seed(7);
        let mut tables = 0;
        for _ in 0..20_000 {
            let md: String = (0..rng.usize(1..12))
                .map(|_| PIECES[rng.usize(..PIECES.len())])
                .collect();
            let read = parse_document(&md)
                .iter()
                .any(|l| matches!(l.block, Block::Table(_)));
            if read {
                tables += 1;
                assert!(may_hold_table(&md), "{md:?}");
            }
        }
        assert!(tables > 1000, "{tables}");
        assert!(!may_hold_table("let f = |x| x - 1;\nlet g = |a, b| a | b;"));
        assert!(!may_hold_table("Pick one | or the other - not both."));
        assert!(may_hold_table("> | a |\n> |:-:|"));
    }
}
