//! The rendering rule (SPEC §15, §13 item 10), judged independently of the library: every
//! message is rendered on its own by a real CommonMark renderer (pulldown-cmark, with the GFM
//! tables and strikethrough extensions), the whole reply is rendered once, and each rendering
//! is reduced to what a chat user sees: a sequence of visible characters, each tagged with how
//! it renders. The messages' sequences, one after the other, must equal the reply's.
//!
//! Nothing here reads the library's scanner or its block flags: the judge recognises the
//! allowed differences on its own.
//!
//! # The reduction
//!
//! A rendering becomes a list of [`Tok`]ens:
//!
//! - [`Tok::Char`]: a visible character with its [`Style`]: code block, inline code, table
//!   cell (header or body), bold, italic, strikethrough, link (with its URL), image (its alt
//!   text, with its URL). Headings, list items and block quotes are *not* styles: SPEC §15
//!   allows losing them at a message's start.
//! - Whitespace: inside code (blocks and inline spans) every character is kept exactly, as a
//!   `Char`. Elsewhere a run of spaces, tabs and line breaks, a soft or hard break and every
//!   block boundary (paragraph, heading, quote, list, table, code block) together count as one
//!   [`Tok::Sep`], as a chat shows them: a gap. The sequence never starts or ends with `Sep`.
//! - [`Tok::Item`]: a list item's marker (a bullet, or a number), which the chat draws. A
//!   marker is visible, so a message whose `1.` renders as text (`Char('1') Char('.')`) while
//!   the reply renders a list item there, or the reverse (a line of the reply that a message
//!   turns into a list item), is a difference. The marker's number is not compared: a list
//!   that a message starts in the middle of begins at the number written there, and a list
//!   renumbered by its container is the container loss SPEC allows.
//! - [`Tok::Row`] and [`Tok::Cell`] (with the column's alignment): a table's grid.
//! - [`Tok::Rule`]: a thematic break.
//! - Bare URLs (`https://…`, `http://…`, `www.…`) in plain text are links, as chats link them
//!   (GFM's autolink extension, which pulldown-cmark lacks, is done here on the reduced
//!   text: start after whitespace or `*_~(`; end at whitespace or `<`; trailing `?!.,:*_~'"`
//!   and an unbalanced `)` are not part of it).
//! - Raw HTML is shown as its text (chats do not render it). Reference-style links are not
//!   resolved across messages (a message alone has no definitions): the corpus avoids them.
//!
//! # The comparison
//!
//! Each message's sequence is trimmed at its edges of `Sep`, of line breaks in code at its
//! start and of any whitespace in code at its end (a cut there removes only invisible blank
//! space at a message's edge). It must then equal the reply's sequence from where the previous
//! message ended, after skipping the whitespace there (`Sep` and whitespace characters of
//! code: the gap where the cut fell). At the end only whitespace may be left of the reply.
//! Allowed differences, recognised here:
//! - the configured response prefix (rendered as text, followed by `Sep` or nothing) at the
//!   start of a message whose raw text starts with it;
//! - a table header at a message's start (its `Row` and header cells) equal to the last table
//!   header the reply showed before that point, where the reply goes on with a body row: the
//!   synthetic repeated header of a continued table (the same at the top of a preview's
//!   tail window);
//! - with [`Allow::table_room`], table rows that cannot stand under their header within a
//!   piece (see [`TableRoom`]): shown as their source text from a message's start, and such a
//!   row's start (its missing cells padded empty, or as text) at a message's end;
//! - separators at message edges (above).
//!
//! One difference is called out although the tokens would match: a message whose last
//! token is a list marker while the reply goes on with that item's text (the chat shows an
//! empty item, then the text without its marker in the next message).

use std::fmt::Write as _;
use std::rc::Rc;

use pulldown_cmark::{Alignment, Event, Options, Parser, Tag, TagEnd};

/// How a visible character renders.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Style {
    pub(crate) code_block: bool,
    pub(crate) inline_code: bool,
    /// In a table cell: `Some(true)` in the header row.
    pub(crate) cell: Option<bool>,
    pub(crate) bold: bool,
    pub(crate) italic: bool,
    pub(crate) strike: bool,
    /// The link's URL.
    pub(crate) link: Option<Rc<str>>,
    /// The image's URL (the characters are its alt text).
    pub(crate) image: Option<Rc<str>>,
}

impl Style {
    fn plain_text(&self) -> bool {
        !self.code_block && !self.inline_code && self.link.is_none() && self.image.is_none()
    }

    fn code(&self) -> bool {
        self.code_block || self.inline_code
    }

    /// A short label: `code`, `inline`, `th`, `td`, `b`, `i`, `s`, `link(url)`, `img(url)`.
    fn label(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if self.code_block {
            parts.push("code".into());
        }
        if self.inline_code {
            parts.push("inline".into());
        }
        match self.cell {
            Some(true) => parts.push("th".into()),
            Some(false) => parts.push("td".into()),
            None => {}
        }
        if self.bold {
            parts.push("b".into());
        }
        if self.italic {
            parts.push("i".into());
        }
        if self.strike {
            parts.push("s".into());
        }
        if let Some(u) = &self.link {
            parts.push(format!("link({u})"));
        }
        if let Some(u) = &self.image {
            parts.push(format!("img({u})"));
        }
        parts.join(",")
    }
}

/// One visible unit of a rendering (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tok {
    Char(char, Style),
    Sep,
    Item { ordered: bool },
    Row,
    Cell(Align),
    Rule,
}

/// A table column's alignment (pulldown-cmark's, owned here so tokens compare simply).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Align {
    None,
    Left,
    Center,
    Right,
}

impl Tok {
    /// Whitespace a cut may fall in: a separator, or a whitespace character (code included).
    fn is_gap(&self) -> bool {
        match self {
            Tok::Sep => true,
            Tok::Char(c, _) => matches!(c, ' ' | '\t' | '\n' | '\r'),
            _ => false,
        }
    }

    fn is_line_break(&self) -> bool {
        matches!(self, Tok::Sep | Tok::Char('\n' | '\r', _))
    }

    fn is_header_part(&self) -> bool {
        match self {
            Tok::Cell(_) | Tok::Sep => true,
            Tok::Char(_, s) => s.cell == Some(true),
            _ => false,
        }
    }
}

/// Renders `markdown` (CommonMark + GFM tables and strikethrough) and reduces it to tokens.
pub(crate) fn render(markdown: &str) -> Vec<Tok> {
    render_blocks(markdown).0
}

/// [`render`], and where each block (paragraph, heading, code block, table, list item,
/// quote, rule) starts among the tokens.
pub(crate) fn render_blocks(markdown: &str) -> (Vec<Tok>, Vec<usize>) {
    let r = reduce(markdown);
    (r.toks, r.blocks)
}

/// Renders `markdown` and reduces it, keeping where each table body row lies.
fn reduce(markdown: &str) -> Reducer {
    let mut r = Reducer::default();
    let mut options = Options::empty();
    options.insert(Options::ENABLE_TABLES);
    options.insert(Options::ENABLE_STRIKETHROUGH);
    for (event, range) in Parser::new_ext(markdown, options).into_offset_iter() {
        r.table_source(&event, range, markdown);
        r.event(event);
    }
    while r.toks.last() == Some(&Tok::Sep) {
        r.toks.pop();
    }
    link_bare_urls(&mut r.toks);
    r
}

#[derive(Default)]
struct Reducer {
    toks: Vec<Tok>,
    style: Style,
    bold: u32,
    italic: u32,
    strike: u32,
    links: Vec<Option<Rc<str>>>,
    images: Vec<Rc<str>>,
    /// Per open list: ordered?
    lists: Vec<bool>,
    columns: Vec<Align>,
    column: usize,
    in_head: bool,
    /// Where each block starts.
    blocks: Vec<usize>,
    /// The body rows of every table, in order.
    rows: Vec<BodyRow>,
    /// The open table's header and delimiter rows, as written (see [`BodyRow::head`]).
    head: Option<Rc<str>>,
}

/// A table body row of a rendering: where its tokens are, and its source.
#[derive(Clone, Debug)]
struct BodyRow {
    /// Its `Row` token.
    tok: usize,
    /// Where its tokens end: the next row's `Row` token, or the end of the table.
    tok_end: usize,
    /// The source line that holds it, container markers and indentation included, up to
    /// its last non-whitespace character.
    line: Rc<str>,
    /// The table's header and delimiter rows as written: from the start of the header's
    /// line to the end of the delimiter row's line (before its `\n`), so with any container
    /// markers and a CRLF's `\r`.
    head: Rc<str>,
    /// Whether this is the last row of its table.
    last: bool,
}

impl Reducer {
    /// Notes the source of a table's header and body rows (before the event is reduced:
    /// a row's `Row` token is the next token).
    fn table_source(&mut self, event: &Event<'_>, range: std::ops::Range<usize>, src: &str) {
        let line_start = |p: usize| src[..p].rfind('\n').map_or(0, |i| i + 1);
        let line_end = |p: usize| src[p..].find('\n').map_or(src.len(), |i| p + i);
        match event {
            Event::Start(Tag::TableHead) => {
                let start = line_start(range.start);
                let header_end = line_end(range.start);
                let delim_end = line_end((header_end + 1).min(src.len()));
                self.head = Some(Rc::from(&src[start..delim_end]));
            }
            Event::Start(Tag::TableRow) => {
                let tok = self.toks.len();
                if let Some(prev) = self.rows.last_mut().filter(|r| !r.last) {
                    prev.tok_end = tok;
                }
                let line = &src[line_start(range.start)..line_end(range.start)];
                self.rows.push(BodyRow {
                    tok,
                    tok_end: tok,
                    line: Rc::from(line.trim_end()),
                    head: self.head.clone().unwrap_or_else(|| Rc::from("")),
                    last: false,
                });
            }
            Event::End(TagEnd::Table) => {
                let tok = self.toks.len();
                if let Some(prev) = self.rows.last_mut().filter(|r| !r.last) {
                    prev.tok_end = tok;
                    prev.last = true;
                }
                self.head = None;
            }
            _ => {}
        }
    }

    fn sep(&mut self) {
        // Right after a list marker there is no gap (a loose item's paragraph and a tight
        // item's text start alike).
        if !matches!(self.toks.last(), None | Some(Tok::Sep | Tok::Item { .. })) {
            self.toks.push(Tok::Sep);
        }
    }

    fn restyle(&mut self) {
        self.style.bold = self.bold > 0;
        self.style.italic = self.italic > 0;
        self.style.strike = self.strike > 0;
        self.style.link = self.links.iter().rev().find_map(|l| l.clone());
        self.style.image = self.images.last().cloned();
    }

    /// Text outside code: whitespace runs become one separator.
    fn text(&mut self, text: &str) {
        for c in text.chars() {
            if matches!(c, ' ' | '\t' | '\n' | '\r') {
                self.sep();
            } else {
                self.toks.push(Tok::Char(c, self.style.clone()));
            }
        }
    }

    /// Code: every character kept.
    fn code(&mut self, text: &str, inline: bool) {
        let mut style = self.style.clone();
        if inline {
            style.inline_code = true;
        }
        for c in text.chars() {
            self.toks.push(Tok::Char(c, style.clone()));
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) if self.style.code_block => self.code(&t, false),
            Event::Text(t) | Event::Html(t) | Event::InlineHtml(t) => self.text(&t),
            Event::Code(t) => self.code(&t, true),
            Event::InlineMath(t) | Event::DisplayMath(t) | Event::FootnoteReference(t) => {
                self.text(&t)
            }
            Event::SoftBreak | Event::HardBreak => self.sep(),
            Event::Rule => {
                self.sep();
                self.blocks.push(self.toks.len());
                self.toks.push(Tok::Rule);
                self.sep();
            }
            Event::TaskListMarker(done) => self.text(if done { "[x]" } else { "[ ]" }),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        if matches!(
            tag,
            Tag::Paragraph
                | Tag::Heading { .. }
                | Tag::CodeBlock(_)
                | Tag::Table(_)
                | Tag::HtmlBlock
                | Tag::Item
                | Tag::BlockQuote(_)
        ) {
            self.sep();
            self.blocks.push(self.toks.len());
        }
        match tag {
            Tag::CodeBlock(_) => {
                self.sep();
                self.style.code_block = true;
            }
            Tag::List(start) => {
                self.sep();
                self.lists.push(start.is_some());
            }
            Tag::Item => {
                self.sep();
                let ordered = self.lists.last().copied().unwrap_or(false);
                self.toks.push(Tok::Item { ordered });
            }
            Tag::Table(aligns) => {
                self.sep();
                self.columns = aligns
                    .iter()
                    .map(|a| match a {
                        Alignment::None => Align::None,
                        Alignment::Left => Align::Left,
                        Alignment::Center => Align::Center,
                        Alignment::Right => Align::Right,
                    })
                    .collect();
            }
            Tag::TableHead => {
                self.in_head = true;
                self.column = 0;
                self.toks.push(Tok::Row);
            }
            Tag::TableRow => {
                self.column = 0;
                self.toks.push(Tok::Row);
            }
            Tag::TableCell => {
                let align = self
                    .columns
                    .get(self.column)
                    .copied()
                    .unwrap_or(Align::None);
                self.column += 1;
                self.toks.push(Tok::Cell(align));
                self.style.cell = Some(self.in_head);
            }
            Tag::Emphasis => {
                self.italic += 1;
                self.restyle();
            }
            Tag::Strong => {
                self.bold += 1;
                self.restyle();
            }
            Tag::Strikethrough => {
                self.strike += 1;
                self.restyle();
            }
            Tag::Link { dest_url, .. } => {
                self.links.push(Some(Rc::from(dest_url.as_ref())));
                self.restyle();
            }
            Tag::Image { dest_url, .. } => {
                self.images.push(Rc::from(dest_url.as_ref()));
                self.restyle();
            }
            _ => self.sep(),
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::CodeBlock => {
                self.style.code_block = false;
                self.sep();
            }
            TagEnd::List(_) => {
                self.lists.pop();
                self.sep();
            }
            TagEnd::Table => {
                self.columns.clear();
                self.sep();
            }
            TagEnd::TableHead => self.in_head = false,
            TagEnd::TableRow => {}
            TagEnd::TableCell => self.style.cell = None,
            TagEnd::Emphasis => {
                self.italic -= 1;
                self.restyle();
            }
            TagEnd::Strong => {
                self.bold -= 1;
                self.restyle();
            }
            TagEnd::Strikethrough => {
                self.strike -= 1;
                self.restyle();
            }
            TagEnd::Link => {
                self.links.pop();
                self.restyle();
            }
            TagEnd::Image => {
                self.images.pop();
                self.restyle();
            }
            _ => self.sep(),
        }
    }
}

/// Links the bare URLs of plain text, as chats do (see the module docs).
fn link_bare_urls(toks: &mut [Tok]) {
    let mut i = 0;
    while i < toks.len() {
        let Tok::Char(_, style) = &toks[i] else {
            i += 1;
            continue;
        };
        if !style.plain_text() {
            i += 1;
            continue;
        }
        let style = style.clone();
        let mut j = i;
        let mut run = Vec::new();
        while let Some(Tok::Char(c, s)) = toks.get(j) {
            if *s != style {
                break;
            }
            run.push(*c);
            j += 1;
        }
        for (a, b) in bare_urls(&run) {
            let text: String = run[a..b].iter().collect();
            let url: Rc<str> = if text.starts_with("www.") {
                Rc::from(format!("http://{text}"))
            } else {
                Rc::from(text)
            };
            for t in &mut toks[i + a..i + b] {
                if let Tok::Char(_, s) = t {
                    s.link = Some(url.clone());
                }
            }
        }
        i = j;
    }
}

/// The bare URLs of a run of plain characters (no whitespace inside), as char ranges.
fn bare_urls(run: &[char]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let starts_with = |at: usize, s: &str| {
        s.chars().enumerate().all(|(k, c)| {
            run.get(at + k)
                .is_some_and(|&r| r.to_ascii_lowercase() == c)
        })
    };
    let mut i = 0;
    while i < run.len() {
        let after_ok = i == 0 || matches!(run[i - 1], '*' | '_' | '~' | '(');
        let scheme = ["https://", "http://", "www."]
            .into_iter()
            .find(|s| starts_with(i, s));
        let Some(scheme) = scheme.filter(|_| after_ok) else {
            i += 1;
            continue;
        };
        let body = i + scheme.len();
        let mut end = body;
        while end < run.len() && run[end] != '<' {
            end += 1;
        }
        // Trailing punctuation and an unbalanced `)` are not part of it.
        while let Some(&last) = run[body..end].last() {
            let punctuation = matches!(
                last,
                '?' | '!' | '.' | ',' | ':' | '*' | '_' | '~' | '\'' | '"'
            );
            let unbalanced = last == ')'
                && run[i..end].iter().filter(|&&c| c == ')').count()
                    > run[i..end].iter().filter(|&&c| c == '(').count();
            if !punctuation && !unbalanced {
                break;
            }
            end -= 1;
        }
        if run[body..end].iter().any(|c| c.is_alphanumeric()) {
            out.push((i, end));
            i = end;
        } else {
            i = body;
        }
    }
    out
}

/// What the judge allows besides the reply itself.
#[derive(Clone, Debug, Default)]
pub(crate) struct Allow {
    /// The response prefix the test configured.
    pub(crate) prefix: Option<String>,
    /// The room a piece has, for the one table case where a continuation cannot repeat its
    /// header (see [`TableRoom`]). `None`: every continuation must.
    pub(crate) table_room: Option<TableRoom>,
    /// The messages were cut from a stream (the engine, the chunker): a cut made while an
    /// emphasis delimiter run was still unmatched in a paragraph that went on (its closer
    /// could still come) closed it at the message's end and reopened it at the next one's
    /// start, and the reply may never close it. Then the message shows, from that run to its
    /// end, the emphasis the reply does not (the run literal there), and the next message
    /// starts with the run's delimiters. Recognised here: a message that differs from the
    /// reply, ends with delimiter chars (`*`, `_`, `~`) and, without them, shows exactly the
    /// reply's stretch; the next message is then compared without as many delimiter chars at
    /// its start (after the prefix). Never for the splitter, which sees the whole text.
    pub(crate) streamed: bool,
    /// The room of a message, where it is larger than a piece's (`table_room`): the engine
    /// merges pieces into messages, and a message that starts right at a table row's start
    /// shows the header again wherever the header and that row fit in a message. So such a
    /// message may show the rows plainly only where they do not fit in this room (rows
    /// that a message starts in the middle of, after a message that ended inside them, are
    /// judged by `table_room`). `None`: `table_room` for every row.
    pub(crate) message_room: Option<TableRoom>,
}

/// How a length is counted (as the test configured the library; counted here).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Count {
    Chars,
    Utf16,
    Bytes,
    Graphemes,
}

impl Count {
    /// The count of the library's `metric` (the counting itself is done here).
    pub(crate) fn of(metric: replystream::LengthMetric) -> Count {
        match metric {
            replystream::LengthMetric::Chars => Count::Chars,
            replystream::LengthMetric::Utf16 => Count::Utf16,
            replystream::LengthMetric::Bytes => Count::Bytes,
            replystream::LengthMetric::Graphemes => Count::Graphemes,
            other => panic!("no count for {other:?}"),
        }
    }

    pub(crate) fn len(self, s: &str) -> usize {
        match self {
            Count::Chars => s.chars().count(),
            Count::Utf16 => s.encode_utf16().count(),
            Count::Bytes => s.len(),
            // Cluster boundaries are Unicode's (the one count the judge borrows: every
            // test binary that holds the judge has the library, not always a segmenter).
            Count::Graphemes => replystream::LengthMetric::Graphemes.len(s),
        }
    }
}

/// The room of a piece: `max` units counted by `count`, at most `max_lines` lines.
///
/// A table continuation repeats the header and delimiter rows so that it renders as a
/// table; where those two rows and the row the piece starts with do not fit together in a
/// piece (each line as written, joined by line breaks, the row up to its last non-blank
/// character), no piece can show that row as a table. The judge then lets the piece show
/// the rows from there as their source text (a paragraph of pipes), as the ordinary cut
/// rules leave them: every line of the piece up to the table's end (or the piece's end)
/// is the source line of the next row, the first one from where the previous piece ended
/// (its container markers may be left off); what follows the table renders as the reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TableRoom {
    pub(crate) max: usize,
    pub(crate) count: Count,
    pub(crate) max_lines: Option<usize>,
}

impl TableRoom {
    /// Whether `row` cannot follow its header within the room.
    fn too_tight(&self, row: &BodyRow) -> bool {
        let units = self.count.len(&row.head) + 1 + self.count.len(&row.line);
        let lines = row.head.split('\n').count() + 1;
        units > self.max || self.max_lines.is_some_and(|cap| lines > cap)
    }
}

/// The tokens of a message as compared: the prefix dropped (when its raw text starts with
/// it), the edges trimmed.
fn message_tokens(raw: &str, allow: &Allow) -> Vec<Tok> {
    let mut toks = render(raw);
    if let Some(prefix) = allow.prefix.as_deref().filter(|p| raw.starts_with(*p)) {
        let p = render(prefix);
        if toks.starts_with(&p) && matches!(toks.get(p.len()), None | Some(Tok::Sep)) {
            toks.drain(..p.len());
        }
    }
    let start = toks.iter().take_while(|t| t.is_line_break()).count();
    toks.drain(..start);
    while toks.last().is_some_and(Tok::is_gap) {
        toks.pop();
    }
    toks
}

/// The header row (from its `Row` up to the next `Row`) at the start of `toks`, if it starts
/// with one.
fn leading_header(toks: &[Tok]) -> Option<usize> {
    if toks.first() != Some(&Tok::Row) {
        return None;
    }
    let n = 1 + toks[1..].iter().take_while(|t| t.is_header_part()).count();
    (n > 1 && toks[1..n].iter().any(|t| matches!(t, Tok::Char(..)))).then_some(n)
}

/// The last header row the reply showed before `at`.
fn last_header_before(reply: &[Tok], at: usize) -> Option<&[Tok]> {
    let mut i = at;
    while i > 0 {
        i -= 1;
        if reply[i] == Tok::Row
            && let Some(n) = leading_header(&reply[i..])
            && i + n <= at
        {
            return Some(&reply[i..i + n]);
        }
    }
    None
}

/// Shows tokens readably: runs of characters with one style as `«style|text»` (plain text
/// without a label), `␣` for a separator, `•`/`#.` for list markers, `‖` for a row, `¦` for
/// a cell, `—` for a rule.
pub(crate) fn describe(toks: &[Tok]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Tok::Char(_, style) => {
                let mut text = String::new();
                while let Some(Tok::Char(c, s)) = toks.get(i) {
                    if s != style {
                        break;
                    }
                    text.push(*c);
                    i += 1;
                }
                let label = style.label();
                let text = format!("{text:?}");
                let text = &text[1..text.len() - 1];
                if label.is_empty() {
                    out.push_str(text);
                } else {
                    let _ = write!(out, "«{label}|{text}»");
                }
                continue;
            }
            Tok::Sep => out.push('␣'),
            Tok::Item { ordered: false } => out.push('•'),
            Tok::Item { ordered: true } => out.push_str("#."),
            Tok::Row => out.push('‖'),
            Tok::Cell(Align::None) => out.push('¦'),
            Tok::Cell(a) => {
                let _ = write!(out, "¦{a:?}:");
            }
            Tok::Rule => out.push('—'),
        }
        i += 1;
    }
    out
}

/// Where `msg` matches `reply` from `at`: the length of the common prefix.
fn common(reply: &[Tok], at: usize, msg: &[Tok]) -> usize {
    reply[at.min(reply.len())..]
        .iter()
        .zip(msg)
        .take_while(|(a, b)| a == b)
        .count()
}

/// Checks the rendering rule for `messages`, the texts a chat shows one after the other, of
/// the reply `reply`. The error is a readable account of the first difference.
pub(crate) fn check_messages(
    reply: &str,
    messages: &[String],
    allow: &Allow,
) -> Result<(), String> {
    let reduced = reduce(reply);
    let whole = reduced.toks;
    let rows = reduced.rows;
    let mut at = 0;
    // Delimiter chars the message before closed although the reply never closes them.
    let mut reopened = 0;
    for (index, raw) in messages.iter().enumerate() {
        let raw = &without_reopened(raw, std::mem::take(&mut reopened), allow);
        let (msg, raw) = match speculative_close(&whole, at, raw, allow) {
            Some((n, msg)) => {
                reopened = n;
                (msg, raw)
            }
            None => (message_tokens(raw, allow), raw),
        };
        if msg.is_empty() {
            return Err(format!(
                "message {index} shows nothing (only markup or blank)\n  raw: {raw:?}"
            ));
        }
        let gap = whole[at..].iter().take_while(|t| t.is_gap()).count();
        let candidates = readings(&whole, at, &msg);
        let found = matching_reading(&whole, at, &msg, &candidates);
        match found {
            Some(&(k, drop)) => {
                at += k + msg.len() - drop;
                // A list marker at the very end, its text in the next message: the chat
                // shows an empty item, then the text without its marker.
                let next = whole[at..].iter().find(|t| !t.is_gap());
                if msg.last().is_some_and(|t| matches!(t, Tok::Item { .. }))
                    && matches!(next, Some(Tok::Char(..)))
                {
                    return Err(format!(
                        "message {index} ends with a lone list marker; its item's text is in \
                         the next message\n  message raw text: {raw:?}"
                    ));
                }
            }
            // A message that ends inside a row that cannot stand whole under its header
            // (cut by the ordinary rules) shows that row's missing cells empty.
            None if allow.table_room.is_some_and(|room| {
                padded_row_end(&whole, &rows, at + gap, &msg, room).is_some()
            }) =>
            {
                let room = allow.table_room.unwrap();
                at = padded_row_end(&whole, &rows, at + gap, &msg, room).unwrap();
            }
            None if allow.table_room.is_some_and(|room| {
                row_start_end(&whole, &rows, at + gap, raw, allow, room).is_some()
            }) =>
            {
                let room = allow.table_room.unwrap();
                at = row_start_end(&whole, &rows, at + gap, raw, allow, room).unwrap();
            }
            None if allow.table_room.is_some_and(|room| {
                plain_rows(&whole, &rows, at + gap, raw, allow, room).is_some()
            }) =>
            {
                let room = allow.table_room.unwrap();
                at = plain_rows(&whole, &rows, at + gap, raw, allow, room).unwrap();
            }
            None => {
                let (k, drop) = candidates
                    .iter()
                    .copied()
                    .max_by_key(|&(k, d)| common(&whole, at + k, &msg[d..]))
                    .unwrap();
                let body = &msg[drop..];
                let same = common(&whole, at + k, body);
                return Err(diff(index, raw, &whole, at + k, body, same));
            }
        }
    }
    if let Some(p) = whole[at..].iter().position(|t| !t.is_gap()) {
        let from = at + p;
        return Err(format!(
            "the reply goes on after the last message: {}",
            describe(&whole[from..(from + 60).min(whole.len())])
        ));
    }
    Ok(())
}

/// Where `msg` (a message's tokens, matched from the reply's token `here`, a repeated
/// header allowed at its start) leaves the reply, when it ends inside a table row that
/// cannot stand whole under its header in `room`, showing that row's missing cells empty.
fn padded_row_end(
    whole: &[Tok],
    rows: &[BodyRow],
    here: usize,
    msg: &[Tok],
    room: TableRoom,
) -> Option<usize> {
    let cells = msg
        .iter()
        .rev()
        .take_while(|t| matches!(t, Tok::Cell(_)))
        .count();
    if cells == 0 {
        return None;
    }
    let body = &msg[..msg.len() - cells];
    let drop = leading_header(body)
        .filter(|_| whole.get(here) == Some(&Tok::Row) && leading_header(&whole[here..]).is_none())
        .filter(|&n| last_header_before(whole, here) == Some(&body[..n]));
    [0, drop.unwrap_or(0)].into_iter().find_map(|d| {
        let body = &body[d..];
        let end = here + body.len();
        let row = rows.iter().find(|r| r.tok < end && end < r.tok_end)?;
        (whole.get(here..end) == Some(body) && room.too_tight(row)).then_some(end)
    })
}

/// Where `raw`, a message matched from the reply's token `here` (a repeated header allowed
/// at its start), leaves the reply, when its last line is the start of a table row that
/// cannot stand whole under its header in `room` (cut by the ordinary rules, that start
/// shows as text) and the lines before it show the reply up to that row.
fn row_start_end(
    whole: &[Tok],
    rows: &[BodyRow],
    here: usize,
    raw: &str,
    allow: &Allow,
    room: TableRoom,
) -> Option<usize> {
    let (before, last) = raw.trim_end().rsplit_once('\n')?;
    let shows = |line: &str| render(line.trim_start_matches([' ', '\t', '>']).trim_end());
    let msg = message_tokens(before, allow);
    let drop = leading_header(&msg)
        .filter(|_| whole.get(here) == Some(&Tok::Row) && leading_header(&whole[here..]).is_none())
        .filter(|&n| last_header_before(whole, here) == Some(&msg[..n]));
    [0, drop.unwrap_or(0)].into_iter().find_map(|d| {
        let body = &msg[d..];
        let end = here + body.len();
        if whole.get(here..end) != Some(body) {
            return None;
        }
        let gap = whole[end..].iter().take_while(|t| t.is_gap()).count();
        let row = rows.iter().find(|r| r.tok == end + gap)?;
        let (shown, want) = (shows(last), shows(&row.line));
        (room.too_tight(row) && !shown.is_empty() && want.starts_with(&shown) && shown != want)
            .then_some(row.tok + 1)
    })
}

/// Where `raw`, a message that starts at the reply's token `here`, leaves the reply, when it
/// shows table rows that cannot follow their header in a piece as their source text (see
/// [`TableRoom`]). `None` when the message is not that case or differs.
fn plain_rows(
    whole: &[Tok],
    rows: &[BodyRow],
    here: usize,
    raw: &str,
    allow: &Allow,
    room: TableRoom,
) -> Option<usize> {
    let j = rows
        .iter()
        .position(|r| r.tok <= here && here < r.tok_end)?;
    let starts_row = here == rows[j].tok;
    let start_room = allow.message_room.filter(|_| starts_row).unwrap_or(room);
    if !room.too_tight(&rows[j]) || !start_room.too_tight(&rows[j]) {
        return None;
    }
    let mut text = raw;
    if let Some(rest) = allow.prefix.as_deref().and_then(|p| text.strip_prefix(p)) {
        text = rest.strip_prefix([' ', '\n']).unwrap_or(rest);
    }
    let text = text.trim_start_matches([' ', '\t', '\r', '\n']);
    // A row's line without its container markers and indentation, as it renders on its
    // own (synthetic delimiters at a piece's edges render alike).
    let shows = |line: &str| render(line.trim_start_matches([' ', '\t', '>']).trim_end());
    let lines: Vec<&str> = text.split('\n').collect();
    let mut k = 0;
    // The tokens after the rows shown, and whether the message ended inside a row.
    let mut after = rows[j].tok_end;
    let mut ended_inside = false;
    while let Some(line) = lines.get(k) {
        let Some(row) = rows.get(j + k).filter(|_| k == 0 || !rows[j + k - 1].last) else {
            break;
        };
        let shown = shows(line);
        let want = shows(&row.line);
        let last_line = k + 1 == lines.len();
        // The first line may start inside its row (the previous message ended there),
        // unless that message ended right before the row; the last may end inside one.
        let inside_start = k == 0 && here > row.tok;
        let ok = !shown.is_empty()
            && match (inside_start, last_line) {
                (false, false) => shown == want,
                (false, true) => want.starts_with(&shown),
                (true, false) => want.ends_with(&shown),
                (true, true) => want.windows(shown.len()).any(|w| w == shown.as_slice()),
            };
        if !ok {
            break;
        }
        // Whether the line stops before its row's end (a prefix that happens to be a
        // suffix too, like a lone `|`, still stops there).
        ended_inside = match (inside_start, last_line) {
            (false, true) => shown != want,
            (true, true) => !want.ends_with(&shown),
            _ => false,
        };
        after = if ended_inside {
            row.tok + 1
        } else {
            row.tok_end
        };
        k += 1;
        if ended_inside {
            break;
        }
    }
    if k == 0 || (ended_inside && k < lines.len()) {
        return None;
    }
    // Rows left out before what follows the table: not this case.
    let rest = lines[k..].join("\n");
    if rest.trim().is_empty() {
        return Some(after);
    }
    if !rows[j + k - 1].last {
        return None;
    }
    let rest = message_tokens(&rest, &Allow::default());
    let gap = whole[after..].iter().take_while(|t| t.is_gap()).count();
    let from = after + gap;
    (whole.len() >= from + rest.len() && whole[from..from + rest.len()] == *rest)
        .then_some(from + rest.len())
}

/// `raw` without `n` emphasis delimiter chars at its start (after the prefix), when it starts
/// with them: the reopening of a run the message before closed (see [`Allow::streamed`]).
fn without_reopened(raw: &str, n: usize, allow: &Allow) -> String {
    let head = allow
        .prefix
        .as_deref()
        .filter(|p| raw.starts_with(*p))
        .map_or(0, str::len);
    let body = &raw[head..];
    let run = body
        .bytes()
        .take_while(|b| matches!(b, b'*' | b'_' | b'~'))
        .count();
    match n > 0 && run >= n {
        true => format!("{}{}", &raw[..head], &body[n..]),
        false => raw.to_owned(),
    }
}

/// Where message tokens `msg` may start in the reply from `at`: `(k, drop)` pairs, `k`
/// gap tokens skipped, `drop` tokens of a repeated table header left off. The literal
/// reading first, then with a repeated table header dropped. Skipping into a code line's
/// indentation is no gap: the skipped run may hold a line break only if it ends with one
/// when code follows.
fn readings(whole: &[Tok], at: usize, msg: &[Tok]) -> Vec<(usize, usize)> {
    let gap = whole[at..].iter().take_while(|t| t.is_gap()).count();
    let mut candidates: Vec<(usize, usize)> = (0..=gap)
        .filter(|&k| {
            let skipped = &whole[at..at + k];
            let code_next = matches!(whole.get(at + k), Some(Tok::Char(_, s)) if s.code_block);
            !code_next
                || !skipped.iter().any(Tok::is_line_break)
                || skipped.last().is_some_and(Tok::is_line_break)
        })
        .map(|k| (k, 0))
        .collect();
    if let Some(n) = leading_header(msg) {
        let here = at + gap;
        if whole.get(here) == Some(&Tok::Row)
            && leading_header(&whole[here..]).is_none()
            && last_header_before(whole, here) == Some(&msg[..n])
        {
            candidates.push((gap, n));
        }
    }
    candidates
}

/// The first of `candidates` (see [`readings`]) under which `msg` shows the reply.
fn matching_reading<'c>(
    whole: &[Tok],
    at: usize,
    msg: &[Tok],
    candidates: &'c [(usize, usize)],
) -> Option<&'c (usize, usize)> {
    candidates.iter().find(|&&(k, drop)| {
        let body = &msg[drop..];
        whole.len() >= at + k + body.len() && whole[at + k..at + k + body.len()] == *body
    })
}

/// With [`Allow::streamed`]: when `raw` does not show the reply's stretch from `at` but does
/// without the delimiter chars it ends with, how many there are and its tokens without them.
fn speculative_close(
    whole: &[Tok],
    at: usize,
    raw: &str,
    allow: &Allow,
) -> Option<(usize, Vec<Tok>)> {
    if !allow.streamed {
        return None;
    }
    let run = raw
        .bytes()
        .rev()
        .take_while(|b| matches!(b, b'*' | b'_' | b'~'))
        .count();
    if run == 0 {
        return None;
    }
    // As the messages are matched: gaps skipped, a repeated table header left off.
    let shows = |toks: &[Tok]| {
        at <= whole.len() && matching_reading(whole, at, toks, &readings(whole, at, toks)).is_some()
    };
    if shows(&message_tokens(raw, allow)) {
        return None;
    }
    // The closing delimiters may follow the reply's own closing run of the same char
    // (`**bold words here**` then `**`): the message shows one run of 4, of which only the
    // last ones are the speculative close. The fewest that, left off, show the reply.
    (1..=run).find_map(|n| {
        let toks = message_tokens(&raw[..raw.len() - n], allow);
        shows(&toks).then_some((n, toks))
    })
}

/// A readable account of a difference: message `index` matches the reply from `start` for
/// `same` tokens, then differs.
fn diff(index: usize, raw: &str, reply: &[Tok], start: usize, msg: &[Tok], same: usize) -> String {
    let before = same.saturating_sub(12);
    let shown_end = (same + 24).min(msg.len());
    let reply_end = (start + same + 24).min(reply.len());
    let raw_shown: String = if raw.chars().count() > 1200 {
        let head: String = raw.chars().take(600).collect();
        let tail: String = {
            let v: Vec<char> = raw.chars().collect();
            v[v.len() - 600..].iter().collect()
        };
        format!("{head:?} … {tail:?}")
    } else {
        format!("{raw:?}")
    };
    format!(
        "message {index} renders differently from the reply, at its token {same} (reply token \
         {}):\n  message: …{}⟦{}⟧\n  reply:   …{}⟦{}⟧\n  message raw text: {raw_shown}",
        start + same,
        describe(&msg[before..same]),
        describe(&msg[same..shown_end]),
        describe(&reply[start + before..(start + same).min(reply.len())]),
        describe(&reply[(start + same).min(reply.len())..reply_end]),
    )
}

/// How much of a preview is held to the rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PreviewRule {
    /// Every block but the last (the one still being written) shows its stretch of the
    /// reply exactly.
    Settled,
    /// The last block too, up to its last word (which may still grow: a word, a URL being
    /// typed): an open fence, inline code span or emphasis shows as it will (SPEC §15, the
    /// healed tail). A link or a table still being written (SPEC §15 heals neither) leaves
    /// its whole block free, as under `Settled`.
    Healed,
}

/// Checks one preview text (cursor and tail header included, as sent) against the reply's
/// tokens `reply`: its tokens, once the cursor and the tail header (`…` on its own line) are
/// removed, match a stretch of the reply, apart from what `rule` leaves free at the end.
pub(crate) fn check_preview(
    reply: &[Tok],
    preview: &str,
    cursor: Option<&str>,
    allow: &Allow,
    rule: PreviewRule,
) -> Result<(), String> {
    let mut raw = preview.to_owned();
    if let Some(c) = cursor.filter(|c| !c.is_empty())
        && let Some(p) = raw.rfind(c)
    {
        raw.replace_range(p..p + c.len(), "");
    }
    let (raw, tail) = match raw.strip_prefix("…\n") {
        Some(rest) => (rest.to_owned(), true),
        None => (raw, false),
    };
    // The blocks of the preview, as rendered (before the edges are trimmed).
    let (full, blocks) = render_blocks(&raw);
    let msg = message_tokens(&raw, allow);
    // `message_tokens` trims only gaps and the prefix at the front: find the shift.
    let shift = full.len() - msg.len() - full.iter().rev().take_while(|t| t.is_gap()).count();
    let last_block = blocks
        .iter()
        .rev()
        .map(|&b| b.saturating_sub(shift))
        .find(|&b| b < msg.len())
        .unwrap_or(0);
    let free_from = match rule {
        PreviewRule::Settled => last_block,
        PreviewRule::Healed if unfinished_link_or_table(&raw) => last_block,
        PreviewRule::Healed => msg.iter().rposition(Tok::is_gap).map_or(0, |g| g + 1),
    };
    // Where the preview starts in the reply: at its start, or, behind a tail header,
    // wherever it matches best.
    let starts: Vec<usize> = if tail {
        (0..reply.len()).collect()
    } else {
        (0..=reply.iter().take_while(|t| t.is_gap()).count()).collect()
    };
    let (start, same) = starts
        .iter()
        .map(|&s| (s, common(reply, s, &msg)))
        .max_by_key(|&(s, n)| (n, std::cmp::Reverse(s)))
        .unwrap_or((0, 0));
    if same >= free_from.min(msg.len()) {
        return Ok(());
    }
    // A tail window that starts among a table's body rows shows the table's header again
    // on top: the rest must then match the reply at a body row of a table with that header.
    if tail && let Some(n) = leading_header(&msg) {
        let body = &msg[n..];
        let repeated = starts.iter().any(|&s| {
            reply[s] == Tok::Row
                && leading_header(&reply[s..]).is_none()
                && last_header_before(reply, s) == Some(&msg[..n])
                && n + common(reply, s, body) >= free_from.min(msg.len())
        });
        if repeated {
            return Ok(());
        }
    }
    Err(format!(
        "preview ({rule:?}) differs from the reply before its free tail (token {free_from}): {}",
        diff(0, preview, reply, start, &msg, same)
    ))
}

/// Whether the last block of `raw` (after its last blank line) holds a link whose URL is not
/// closed yet (`[` with no `](…)` closed after it, or `<` with no `>`), or a table row (a
/// line starting with `|`): constructs SPEC §15 does not heal in previews.
fn unfinished_link_or_table(raw: &str) -> bool {
    let block = raw.rsplit("\n\n").next().unwrap_or(raw);
    if block
        .lines()
        .any(|l| l.trim_start_matches([' ', '>']).starts_with('|'))
    {
        return true;
    }
    if let Some(open) = block.rfind('[') {
        let after = block[open..].trim_end();
        let unfinished = match after.find(']') {
            None => true,
            Some(p) if p + 1 == after.len() => true,
            Some(p) => after[p + 1..].starts_with('(') && !after[p..].contains(')'),
        };
        if unfinished {
            return true;
        }
    }
    block.rfind('<').is_some_and(|p| !block[p..].contains('>'))
}
