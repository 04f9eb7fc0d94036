//! Lays the blocks of a send out as styled text for the formats that are not Markdown:
//! headings bold, list markers as text (`•`, `1.`) with the indentation of their nesting,
//! quotes as quote spans (never nested: Telegram refuses nested quotes), code blocks as `pre`
//! spans, tables per table mode, images as links to the image. Nothing inside code is
//! styled and links do not nest, as the platforms require.

use super::TableMode;
use super::ir::{Block, Inline, Table, plain_text};
use super::styled::{SpanKind, Styled};
use super::table::{aligned_table, bullet_rows};

/// The marker of a thematic break.
const RULE: &str = "──────────";

/// Lays `blocks` out. `capacity`: room to reserve for the text (the Markdown's length:
/// the layout is about as long), so it is not grown a few bytes at a time.
pub(crate) fn layout(blocks: &[Block], tables: TableMode, capacity: usize) -> Styled {
    let mut l = Layout {
        out: Styled {
            text: String::with_capacity(capacity),
            spans: Vec::new(),
        },
        indent: String::new(),
        quotes: 0,
        links: 0,
        tables,
    };
    l.blocks(blocks, false);
    l.out.finish();
    l.out
}

struct Layout {
    out: Styled,
    /// What each new line inside the current list item starts with.
    indent: String,
    /// Open quote spans (only the outermost is a span).
    quotes: usize,
    /// Open link spans.
    links: usize,
    tables: TableMode,
}

impl Layout {
    fn newline(&mut self) {
        self.out.text.push('\n');
        self.out.text.push_str(&self.indent);
    }

    fn text(&mut self, text: &str) {
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', text.as_bytes()) {
            self.out.text.push_str(&text[start..nl]);
            self.newline();
            start = nl + 1;
        }
        self.out.text.push_str(&text[start..]);
    }

    fn blocks(&mut self, blocks: &[Block], in_item: bool) {
        let mut number: Option<u64> = None;
        for (i, block) in blocks.iter().enumerate() {
            if i > 0 {
                let tight = match (&blocks[i - 1], block) {
                    (Block::ListItem { marker: a, .. }, Block::ListItem { marker: b, .. }) => {
                        a == b
                    }
                    (_, Block::ListItem { .. }) => in_item,
                    _ => false,
                };
                if !tight {
                    self.out.text.push('\n');
                }
                self.newline();
            }
            match block {
                Block::ListItem { number: n, .. } => {
                    number = match (number, n) {
                        (Some(prev), Some(_)) if i > 0 && same_list(&blocks[i - 1], block) => {
                            Some(prev + 1)
                        }
                        (_, n) => *n,
                    };
                }
                _ => number = None,
            }
            self.block(block, number);
        }
    }

    fn block(&mut self, block: &Block, number: Option<u64>) {
        match block {
            Block::Paragraph(inlines) => self.inlines(inlines),
            Block::Heading(inlines) => {
                let span = self.out.open(SpanKind::Bold);
                self.inlines(inlines);
                self.out.close(span);
            }
            Block::ListItem { children, .. } => {
                let marker = match number {
                    Some(n) => format!("{n}. "),
                    None => "• ".to_owned(),
                };
                self.out.text.push_str(&marker);
                let saved = self.indent.len();
                self.indent
                    .extend(std::iter::repeat_n(' ', marker.chars().count()));
                self.blocks(children, true);
                self.indent.truncate(saved);
            }
            Block::Quote(children) => {
                let span = (self.quotes == 0)
                    .then(|| self.out.open(SpanKind::Quote { expandable: false }));
                self.quotes += 1;
                self.blocks(children, false);
                self.quotes -= 1;
                if let Some(span) = span {
                    self.out.close(span);
                }
            }
            Block::Code { language, text } => self.pre(text, language.clone()),
            Block::Table(table) => self.table(table),
            Block::Rule => self.out.text.push_str(RULE),
        }
    }

    /// A code block: its lines as written (no list indentation inside the code).
    fn pre(&mut self, text: &str, language: Option<String>) {
        let span = self.out.open(SpanKind::Pre { language });
        self.out.text.push_str(text);
        self.out.close(span);
    }

    fn table(&mut self, table: &Table) {
        match self.tables {
            TableMode::Code => {
                let text = aligned_table(table);
                self.pre(&text, None);
            }
            TableMode::Bullets => {
                for (i, row) in bullet_rows(table).into_iter().enumerate() {
                    if i > 0 {
                        self.newline();
                    }
                    self.out.text.push_str("• ");
                    for (j, (header, cell)) in row.into_iter().enumerate() {
                        if j > 0 {
                            self.out.text.push_str("; ");
                        }
                        if !header.is_empty() {
                            self.out.text.push_str(&header);
                            self.out.text.push_str(": ");
                        }
                        self.inlines(cell);
                    }
                }
            }
            TableMode::Off | TableMode::Native => {
                let source = table.source.clone();
                self.text(&source);
            }
        }
    }

    fn inlines(&mut self, inlines: &[Inline]) {
        for inline in inlines {
            self.inline(inline);
        }
    }

    fn wrap(&mut self, kind: SpanKind, children: &[Inline]) {
        let span = self.out.open(kind);
        self.inlines(children);
        self.out.close(span);
    }

    fn inline(&mut self, inline: &Inline) {
        match inline {
            Inline::Text(t) => self.text(t),
            Inline::Bold(c) => self.wrap(SpanKind::Bold, c),
            Inline::Italic(c) => self.wrap(SpanKind::Italic, c),
            Inline::Strike(c) => self.wrap(SpanKind::Strike, c),
            Inline::Code(code) => {
                let span = self.out.open(SpanKind::Code);
                self.out.text.push_str(code);
                self.out.close(span);
            }
            Inline::Link { children, url } => self.link(children, url),
            Inline::Image { alt, url } => self.link(alt, url),
            Inline::HardBreak | Inline::SoftBreak => self.newline(),
        }
    }

    /// A link: a link span when the URL is one a chat accepts and no link is open;
    /// otherwise its text followed by the destination, so nothing the model wrote is lost.
    fn link(&mut self, children: &[Inline], url: &str) {
        let mut shown = String::new();
        plain_text(children, &mut shown);
        if shown.trim().is_empty() && !url.is_empty() {
            // A link with no text shows its URL (an empty span would hide it).
            self.inlines(children);
            let text = [Inline::Text(url.to_owned())];
            return self.link(&text, url);
        }
        if self.links == 0 && is_linkable(url) {
            self.links += 1;
            self.wrap(
                SpanKind::Link {
                    url: url.to_owned(),
                },
                children,
            );
            self.links -= 1;
            return;
        }
        self.inlines(children);
        if !url.is_empty() && shown != url {
            self.out.text.push_str(" (");
            self.out.text.push_str(url);
            self.out.text.push(')');
        }
    }
}

/// Whether `next` continues the ordered list `prev` is an item of.
fn same_list(prev: &Block, next: &Block) -> bool {
    matches!((prev, next), (
        Block::ListItem { number: Some(_), marker: a, .. },
        Block::ListItem { marker: b, .. },
    ) if a == b)
}

/// Whether a chat accepts `url` as a link target: an absolute web, mail or Telegram URL
/// with no whitespace or quote in it.
pub(crate) fn is_linkable(url: &str) -> bool {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    let scheme = lower.starts_with("https://")
        || lower.starts_with("http://")
        || lower.starts_with("mailto:")
        || lower.starts_with("tg://");
    scheme && url.len() > 8 && !url.contains(|c: char| c.is_whitespace() || c.is_control())
}
