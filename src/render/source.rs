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
        matches!(tables, TableMode::Code | TableMode::Bullets) && markdown.contains('|');
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
