//! Independent checks of the text-core invariants (SPEC §3, §9, §13), shared by the chunker
//! and splitter property tests and the golden snapshots. Written against the public API only:
//! the fence reader here is this file's own (CommonMark rules), not the library's scanner.
#![allow(dead_code)]

use proptest::prelude::*;
use replystream::{Block, BlockChunker, BreakPreference, ChunkerConfig, LengthMetric};
use unicode_segmentation::{GraphemeCursor, UnicodeSegmentation};

// The tests' container reader, shared with `common` (a test may load both).
#[allow(clippy::duplicate_mod)]
#[path = "../common/containers.rs"]
mod containers;

/// The sample replies in `tests/data`.
pub(crate) fn corpus() -> Vec<(String, String)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// Proptest case count: `default`, or `PROPTEST_CASES` for longer local runs.
pub(crate) fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

// ----- an independent fence reader -----

/// A fence marker as this reader sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fence {
    pub ch: char,
    pub len: usize,
    pub indent: usize,
}

/// `line` (no `\n`, a trailing `\r` ignored) as an opening fence line: up to 3 spaces, 3 or
/// more backticks or tildes, and for backticks an info string without a backtick.
pub(crate) fn opening(line: &str) -> Option<Fence> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let ch = rest.chars().next().filter(|&c| c == '`' || c == '~')?;
    let len = rest.chars().take_while(|&c| c == ch).count();
    if len < 3 || (ch == '`' && rest[len..].contains('`')) {
        return None;
    }
    Some(Fence { ch, len, indent })
}

/// Whether `line` closes a fence opened with `open`: up to 3 spaces, at least as many of the
/// same char, then only spaces and tabs.
pub(crate) fn closes(open: Fence, line: &str) -> bool {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return false;
    }
    let rest = &line[indent..];
    let len = rest.chars().take_while(|&c| c == open.ch).count();
    len >= open.len && rest[len..].chars().all(|c| c == ' ' || c == '\t')
}

/// How a text reads, fence-wise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Reading {
    /// No fence is left open at the end.
    pub balanced: bool,
    /// Some line is neither blank nor a fence's opening or closing line.
    pub content: bool,
}

/// Reads the fences of `text` line by line, in their containers (list items, quotes: see
/// `containers`).
pub(crate) fn read_fences(text: &str) -> Reading {
    let (lines, fences) = containers::read(text, &[]);
    let content = lines
        .iter()
        .any(|l| !l.fence_line && !text[l.start..l.end].trim_matches(is_space).is_empty());
    Reading {
        balanced: fences.iter().all(|f| f.end.is_some()),
        content,
    }
}

/// Whether a fence of `text` in containers ends in `range` (its end included, or in the
/// whitespace just before it) because the line after it leaves a container (CommonMark
/// closes it there with no closing line): a piece ending there leaves it open at its end, as
/// the text does; a piece that holds that end but not the container's start reads the fence
/// on at the top level, and so does one that reopened it after a drain before the line that
/// ended it had come (a known limit: no synthetic line can stand in the middle of a piece).
fn fence_ends_with_container(text: &str, range: std::ops::Range<usize>) -> bool {
    containers::read(text, &[]).1.iter().any(|f| {
        f.by_container
            && f.end.is_some_and(|e| {
                let before = e < range.start && text[e..range.start].chars().all(is_space);
                let after = e > range.end && text[range.end..e].chars().all(is_space);
                (e >= range.start || before) && (e <= range.end || after)
            })
    })
}

/// The number of lines of `text` that count against a line cap of `cap`: all of them, except
/// when what follows its last line of content (a line neither blank nor a fence's opening
/// or closing line) is fence lines and blank lines only, and that content line and what
/// follows are more than `cap` lines: no cut could then keep those fence lines with content
/// within the cap, and the cap yields to "no piece of fence lines only". A content line that
/// is code counts the line that would reopen its fence too (a piece starting at it starts
/// with that line). Then only the lines through the content line count.
pub(crate) fn capped_lines(text: &str, cap: usize) -> usize {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut open: Option<Fence> = None;
    // (The last content line, and whether it is code.)
    let mut last_content = None;
    for (i, line) in lines.iter().enumerate() {
        let blank = line.trim_matches(is_space).is_empty();
        match open {
            Some(f) if closes(f, line) => open = None,
            Some(_) if !blank => last_content = Some((i, 1)),
            Some(_) => {}
            None => match opening(line) {
                Some(f) => open = Some(f),
                None if !blank => last_content = Some((i, 0)),
                None => {}
            },
        }
    }
    match last_content {
        Some((i, reopen)) if lines.len() - i + reopen > cap => i + 1,
        _ => lines.len(),
    }
}

/// The lines of `text` that read as fence lines (opening or closing) outside/inside fences.
fn fence_lines(text: &str) -> Vec<&str> {
    let mut open: Option<Fence> = None;
    let mut out = Vec::new();
    for line in text.split('\n') {
        match open {
            Some(f) if closes(f, line) => {
                open = None;
                out.push(line);
            }
            Some(_) => {}
            None => {
                if let Some(f) = opening(line) {
                    open = Some(f);
                    out.push(line);
                }
            }
        }
    }
    out
}

// ----- what may be expected of a text -----

/// The widest grapheme cluster of `text` in `metric`.
pub(crate) fn widest_cluster(text: &str, metric: LengthMetric) -> usize {
    text.graphemes(true)
        .map(|g| metric.len(g))
        .max()
        .unwrap_or(0)
}

/// The longest run of lines without content (blank lines and fence lines): its units
/// (with its line breaks) and its lines. A piece holding content next to it must hold it
/// whole, or show fence lines only.
fn contentless_run(text: &str, metric: LengthMetric) -> (usize, usize) {
    let mut open: Option<Fence> = None;
    let (mut best, mut run) = ((0, 0), (0, 0));
    for line in text.split('\n') {
        let fence_line = match open {
            Some(f) if closes(f, line) => {
                open = None;
                true
            }
            Some(_) => false,
            None => opening(line).map(|f| open = Some(f)).is_some(),
        };
        if fence_line || line.trim_matches(is_space).is_empty() {
            run = (run.0 + metric.len(line) + 1, run.1 + 1);
            best = (best.0.max(run.0), best.1.max(run.1));
        } else {
            run = (0, 0);
        }
    }
    best
}

/// The longest fence line of `text` in `metric`.
fn widest_fence_line(text: &str, metric: LengthMetric) -> usize {
    fence_lines(text)
        .iter()
        .map(|l| metric.len(l))
        .max()
        .unwrap_or(0)
}

/// The cost, in `metric`, of closing and reopening (with a bare marker) the widest fence of
/// `text`: both synthetic lines with their newlines.
fn widest_repair(text: &str) -> usize {
    fence_lines(text)
        .iter()
        .map(|l| {
            let indent = l.len() - l.trim_start_matches(' ').len();
            let ch = l[indent..].chars().next().unwrap();
            let run = l[indent..].chars().take_while(|&c| c == ch).count();
            2 * (indent + run + 1)
        })
        .max()
        .unwrap_or(0)
}

/// The most consecutive blank lines (whitespace only) in `text`.
fn blank_run(text: &str) -> usize {
    let mut best = 0;
    let mut run = 0;
    for line in text.split('\n') {
        if line.trim_matches(is_space).is_empty() {
            run += 1;
            best = best.max(run);
        } else {
            run = 0;
        }
    }
    best
}

/// What a run may be held to: everything, when the text stays within the envelope every
/// accepted limit guarantees (its fences can be closed and reopened around its widest
/// cluster, and its indented code continued beside it).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Expect {
    pub metric: LengthMetric,
    pub max: usize,
    /// The line cap, if any.
    pub max_lines: Option<usize>,
    /// Fences balanced, no cluster split.
    pub strict: bool,
    /// No piece of fence lines only (bar a too-long opening line's head): when the limit
    /// holds an empty fence, the blank lines after it, and a fence's opening line with a
    /// cluster of code and its closing line.
    pub content: bool,
}

impl Expect {
    pub(crate) fn for_text(
        text: &str,
        metric: LengthMetric,
        max: usize,
        lines: Option<usize>,
    ) -> Expect {
        let widest = widest_cluster(text, metric);
        // With a line cap, the lines of an empty fence (2), an opening line, the blank lines
        // after it, a line of code and a closing line must fit one piece.
        let lines_fit = lines.is_none_or(|m| m >= 5 + blank_run(text));
        // A text line that starts like a fence line without being one (a backtick in what
        // would be its info string) and is longer than a piece: any cut in it misreads.
        let fake_fence_line = text.split('\n').any(|l| {
            let body = l.trim_start_matches(' ');
            l.len() - body.len() < 4
                && (body.starts_with("```") || body.starts_with("~~~"))
                && opening(l).is_none()
                && metric.len(l) >= max
        });
        // A line indented 4 or more before a fence-like run keeps 4 spaces (unindented it
        // would read as a fence line): beside a reopened fence, it needs room for them.
        let indented_run = text.split('\n').any(|l| {
            let body = l.trim_start_matches(' ');
            l.len() - body.len() >= 4 && (body.starts_with("```") || body.starts_with("~~~"))
        });
        // A line that ends in a run of 3 or more marker chars: in a fence, the rest of it
        // after a cut before that run reads as a closing line, so a piece must hold the
        // line's head and all but 2 of the run (the rest, fewer than 3, reads as code),
        // beside the repair. Where that does not fit, no piece can show it right: the
        // limit wins.
        let repair = widest_repair(text);
        let closer_tail = text.split('\n').any(|l| {
            let body = l.trim_end_matches([' ', '\t', '\r']);
            let head = body.trim_end_matches(['`', '~']);
            let run = body.len() - head.len();
            run >= 3 && repair + metric.len(head) + (run - 2) * widest.max(1) > max
        });
        let strict = repair + widest <= max
            && 4 + widest <= max
            && (!indented_run || repair + 4 + widest <= max)
            && lines_fit
            && !fake_fence_line
            && !closer_tail;
        let line = widest_fence_line(text, metric);
        let (run_units, run_lines) = contentless_run(text, metric);
        // A cluster of code may have a run on either side that must stay with it (a fence's
        // opening line and blank lines before it, an empty fence after it), in a piece that
        // may reopen and close a fence.
        let content = strict
            && 2 * run_units + widest + 2 * (line + 1) <= max
            && lines.is_none_or(|m| 2 * run_lines + 3 <= m);
        Expect {
            metric,
            max,
            max_lines: lines,
            strict,
            content,
        }
    }
}

/// Whether byte `p` of `text` is a grapheme cluster boundary.
fn is_boundary(text: &str, p: usize) -> bool {
    if p == 0 || p >= text.len() {
        return true;
    }
    if !text.is_char_boundary(p) {
        return false;
    }
    GraphemeCursor::new(p, text.len(), true)
        .is_boundary(text, 0)
        .unwrap_or(true)
}

/// Whether the cluster around byte `p` is followed at once by three backticks or tildes.
fn glued_to_fence_run(text: &str, p: usize) -> bool {
    let mut cursor = GraphemeCursor::new(p, text.len(), true);
    let end = cursor
        .next_boundary(text, 0)
        .ok()
        .flatten()
        .unwrap_or(text.len());
    // (Up to 3 spaces between: the rest of the line is a closing line all the same.)
    let rest = &text[end..];
    let rest = rest
        .strip_prefix("   ")
        .or_else(|| rest.strip_prefix("  "))
        .or_else(|| rest.strip_prefix(' '))
        .unwrap_or(rest);
    rest.starts_with("```") || rest.starts_with("~~~")
}

/// The line of `text` around byte range `r`, if `r` lies within one line.
fn line_around<'a>(text: &'a str, r: &std::ops::Range<usize>) -> Option<&'a str> {
    let start = text[..r.start].rfind('\n').map_or(0, |i| i + 1);
    let end = text[r.end..].find('\n').map_or(text.len(), |i| r.end + i);
    (!text[start..r.start].contains('\n') && !text[r.clone()].contains('\n'))
        .then_some(&text[start..end])
}

/// Whether `r` lies within one opening fence line of `text` that cannot be shown in one
/// piece with its first line of code and a closing line (too long for the limit, or too
/// many blank lines before the code for the line cap): then a piece showing (the head of)
/// that line alone is unavoidable.
fn opener_too_long(text: &str, r: &std::ops::Range<usize>, e: Expect) -> bool {
    let Some(line) = line_around(text, r) else {
        return false;
    };
    let Some(f) = opening(line) else {
        return false;
    };
    let line_start = text[..r.start].rfind('\n').map_or(0, |i| i + 1);
    let after = line_start + line.len();
    // The blank lines after the opening line, then the first line of code.
    let rest = &text[after..];
    let code = rest
        .char_indices()
        .find(|&(_, c)| !is_space(c))
        .map_or(rest.len(), |(i, _)| i);
    let code_line = rest[..code].rfind('\n').map_or(0, |i| i + 1);
    let first = rest[code..].graphemes(true).next().unwrap_or("");
    let close = f.indent + f.len + 1;
    // The code's indentation is shown too.
    let units = e.metric.len(&text[line_start..after + code]) + e.metric.len(first) + close;
    let lines = 2 + rest[..code_line].matches('\n').count() + 1;
    units > e.max || e.max_lines.is_some_and(|m| lines > m)
}

/// The fence whose opening line holds byte `p` of `text` past its start (a piece starting
/// there goes on with the rest of that line), with the container prefix its synthetic
/// lines show (quote markers kept, list markers as spaces).
fn opening_line_around(text: &str, p: usize) -> Option<(Fence, String)> {
    let (_, fences) = containers::read(text, &[]);
    let f = fences
        .iter()
        .find(|f| f.open_start < p && p <= f.open_end)?;
    let prefix = text[f.open_start..f.open_content]
        .chars()
        .map(|c| if c == '>' || c == '\t' { c } else { ' ' })
        .collect();
    let m = f.marker;
    Some((
        Fence {
            ch: m.ch as char,
            len: m.len,
            indent: m.indent,
        },
        prefix,
    ))
}

/// Whether the synthetic start of block `b` of `text` is well-formed, and its length in
/// bytes: a reopened fence line, 4 spaces, or, for a block that starts in the middle of an
/// opening line, the fence's bare marker (the rest of the line follows it).
fn synthetic_start(text: &str, b: &Block) -> Result<usize, String> {
    if b.fence_reopened
        && let Some((f, prefix)) = opening_line_around(text, b.source.start)
    {
        let marker: String = prefix
            .chars()
            .chain(" ".repeat(f.indent).chars())
            .chain(std::iter::repeat_n(f.ch, f.len))
            .collect();
        let marker = containers::dedent_lines(&marker, b.dedent, true);
        if !b.text.starts_with(&marker) {
            return Err(format!(
                "no bare marker {marker:?} before the rest of its line"
            ));
        }
        // A space keeps the rest from lengthening the marker run.
        let spaced =
            text[b.source.start..].starts_with(f.ch) && b.text[marker.len()..].starts_with(' ');
        return Ok(marker.len() + usize::from(spaced));
    }
    if b.fence_reopened {
        let nl = b.text.find('\n').ok_or("no reopened fence line")?;
        // An opening line, maybe in containers (a quote's `>`, a list item's columns).
        containers::open_at_end(&b.text[..nl])
            .ok_or_else(|| format!("bad reopened line {:?}", &b.text[..nl]))?;
        Ok(nl + 1)
    } else if b.indent_reopened {
        if b.text.starts_with("    ") {
            return Ok(4);
        }
        // In a block quote: the quote markers of the line the code goes on in (through its
        // last `>`, list markers and digits shown as spaces), a space, then the 4 spaces.
        let line = &text[text[..b.source.start].rfind('\n').map_or(0, |i| i + 1)..];
        let blank = |c: char| if c == '>' || c == '\t' { c } else { ' ' };
        let quoted = b.text.find(">     ").and_then(|q| {
            let (shown, source) = (&b.text[..=q], line.get(..=q)?);
            let same = shown.chars().eq(source.chars().map(blank));
            (same && source.ends_with('>')).then_some(q + 6)
        });
        quoted.ok_or_else(|| "no reopened indentation".into())
    } else if b.table_header_repeated {
        // Two lines, the second a delimiter row, that stand in the text before the source.
        let mut lines = b.text.splitn(3, '\n');
        let (header, delimiter) = (lines.next().unwrap_or(""), lines.next().unwrap_or(""));
        let is_delimiter = delimiter.contains('|')
            && delimiter.contains('-')
            && delimiter
                .trim_end_matches('\r')
                .chars()
                .all(|c| matches!(c, '|' | '-' | ':' | ' '));
        let head = format!("{header}\n{delimiter}\n");
        if !is_delimiter || !text[..b.source.start].contains(&head) {
            return Err(format!("bad repeated table header {head:?}"));
        }
        Ok(head.len())
    } else {
        Ok(0)
    }
}

/// Checks every invariant of the blocks of one message `text`, all drained (SPEC §13, 1-4 and
/// the text rules of §3): within the limit and the line cap; not empty; exact reconstruction
/// (`lead + source + sep` over the blocks is `text`; the display text is the source plus
/// synthetic fence lines or indentation only); separators and leads are whitespace; and,
/// within the envelope every accepted limit guarantees, cuts at grapheme boundaries, fences
/// balanced and no block of fence lines only.
pub(crate) fn check_blocks(text: &str, blocks: &[Block], e: Expect) -> Result<(), String> {
    let mut rebuilt = String::with_capacity(text.len());
    let reading = read_fences(text);
    for (k, b) in blocks.iter().enumerate() {
        let ctx = || {
            format!(
                "block {k} {:?} (lead {:?}, sep {:?})",
                b.text, b.lead, b.sep
            )
        };
        let len = e.metric.len(&b.text);
        if len > e.max {
            return Err(format!("{}: {len} > max {}", ctx(), e.max));
        }
        if let Some(cap) = e.max_lines {
            let lines = capped_lines(&b.text, cap);
            if lines > cap {
                return Err(format!("{}: {lines} lines > {cap}", ctx()));
            }
        }
        if b.text.trim_matches(is_space).is_empty() {
            return Err(format!("{}: empty or whitespace only", ctx()));
        }
        if !b.lead.chars().all(is_space) || !b.sep.chars().all(is_space) {
            return Err(format!("{}: lead or sep is not whitespace", ctx()));
        }
        if b.source.start != rebuilt.len() + b.lead.len() {
            return Err(format!(
                "{}: source {:?} does not follow the text before ({})",
                ctx(),
                b.source,
                rebuilt.len() + b.lead.len()
            ));
        }
        rebuilt.push_str(&b.lead);
        let source = text
            .get(b.source.clone())
            .ok_or_else(|| format!("{}: source {:?} out of range", ctx(), b.source))?;
        rebuilt.push_str(source);
        rebuilt.push_str(&b.sep);
        let from = if b.spans_reopened {
            // Reopened inline delimiters: backticks, `*`, `_`, `~` only.
            let head = b.text.get(..b.head_len).unwrap_or("\u{0}");
            if head.is_empty() || !head.bytes().all(|c| b"`*_~".contains(&c)) {
                return Err(format!("{}: bad reopened delimiters {head:?}", ctx()));
            }
            b.head_len
        } else {
            synthetic_start(text, b).map_err(|err| format!("{}: {err}", ctx()))?
        };
        let mut shown = &b.text[from..];
        if b.spans_closed {
            let cut = shown.len().saturating_sub(b.tail_len);
            let tail = &shown[cut..];
            if tail.is_empty() || !tail.bytes().all(|c| b"`*_~".contains(&c)) {
                return Err(format!("{}: bad closing delimiters {tail:?}", ctx()));
            }
            shown = &shown[..cut];
        } else if b.fence_closed {
            let nl = shown
                .rfind('\n')
                .ok_or_else(|| format!("{}: no closing line", ctx()))?;
            shown = &shown[..nl];
        }
        let expected = containers::expected_shown(text, b);
        if shown != expected {
            return Err(format!("{}: shows {shown:?}, source {source:?}", ctx()));
        }
        if b.head_len != from || b.tail_len != b.text.len() - from - shown.len() {
            return Err(format!(
                "{}: head_len {} / tail_len {} do not match the synthetic text",
                ctx(),
                b.head_len,
                b.tail_len
            ));
        }
        if b.text[b.source_in_text()] != expected {
            return Err(format!("{}: source_in_text is wrong", ctx()));
        }
        if !e.strict {
            continue;
        }
        for p in [b.source.start, b.source.end] {
            // Balanced fences come first: a cluster glued to a fence-like run (an emoji right
            // before "````") may have to be split.
            if !is_boundary(text, p) && !glued_to_fence_run(text, p) {
                return Err(format!("{}: cut at {p} splits a grapheme cluster", ctx()));
            }
        }
        let r = read_fences(&b.text);
        if !r.balanced && !fence_ends_with_container(text, b.source.clone()) {
            return Err(format!("{}: unbalanced fences", ctx()));
        }
        if e.content && !r.content && reading.content {
            // The one allowed case: the head of an opening line too long to fit beside code.
            let head_of_long_opener = opener_too_long(text, &b.source, e);
            if !head_of_long_opener {
                return Err(format!("{}: only fence lines", ctx()));
            }
        }
    }
    if blocks.is_empty() && !text.chars().all(is_space) {
        return Err(format!("no block for {text:?}"));
    }
    if !blocks.is_empty() && rebuilt != text {
        return Err(format!("not rebuilt exactly:\n{rebuilt:?}\nvs\n{text:?}"));
    }
    Ok(())
}

// ----- hard Markdown -----

/// The widest emoji sequence kept whole (a kiss with two skin tones, 10 code points).
pub(crate) const KISS: &str =
    "\u{1F469}\u{1F3FB}\u{200D}\u{2764}\u{FE0F}\u{200D}\u{1F48B}\u{200D}\u{1F468}\u{1F3FC}";

/// A fence line: up to 3 spaces, 3 to 5 backticks or tildes, an info string (none, short,
/// long, with spaces; for tildes maybe with tildes in it).
fn fence_line() -> impl Strategy<Value = String> {
    (
        0usize..4,
        prop_oneof![Just('`'), Just('~')],
        3usize..6,
        prop_oneof![
            3 => Just(String::new()),
            2 => Just("rust".to_string()),
            1 => "[a-z]{2,6}( [a-z=\"]{2,12}){3,6}".prop_map(|s| s),
            1 => Just("md ~~~ x".to_string()),
        ],
    )
        .prop_map(|(indent, ch, len, info)| {
            let info = if ch == '`' {
                info.replace('~', "")
            } else {
                info
            };
            format!("{}{}{info}", " ".repeat(indent), ch.to_string().repeat(len))
        })
}

/// A fragment of Markdown chosen to hit every rule.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => "[a-z]{1,8}".prop_map(|w| w),
        4 => Just(" ".to_string()),
        3 => Just("\n".to_string()),
        2 => Just("\n\n".to_string()),
        1 => Just("\r\n".to_string()),
        1 => Just("\r\n\r\n".to_string()),
        1 => Just("\t".to_string()),
        1 => Just("   ".to_string()),
        3 => fence_line().prop_map(|l| format!("\n{l}\n")),
        1 => fence_line().prop_map(|l| format!("\n{l}\r\n")),
        1 => Just("\n````md\n```\ninner\n```\n````\n".to_string()),
        1 => Just("\n```\n```\n".to_string()),
        1 => Just("\n``` x\n".to_string()),
        2 => Just("\n\n    indented code line\n".to_string()),
        1 => Just("\n\n\tcode after a tab\n\n    more code\n".to_string()),
        2 => Just("`code span`".to_string()),
        1 => Just("``a ` b``".to_string()),
        2 => Just("`".to_string()),
        1 => Just("``".to_string()),
        1 => Just("\n- item ".to_string()),
        1 => Just("\n1. step ".to_string()),
        1 => Just("\n# Title ".to_string()),
        1 => Just("\n> quote ".to_string()),
        2 => Just("\n\n| Item | Cost |\n|---|:--:|\n".to_string()),
        2 => Just("\n| row | cell with words |".to_string()),
        1 => Just("\n|---|---|\n".to_string()),
        1 => Just(" | ".to_string()),
        1 => Just("\n| a \\| b |\r\n| - |\r\n".to_string()),
        1 => Just("e\u{301}\u{302}".to_string()),
        1 => Just(" \u{301}".to_string()),
        1 => Just("a\u{600}  ".to_string()),
        1 => Just("👨\u{200d}👩\u{200d}👧\u{200d}👦".to_string()),
        1 => Just(KISS.to_string()),
        1 => Just("🇫🇷🇩🇪".to_string()),
        1 => Just("今日は晴れ。明日は雨！".to_string()),
        1 => Just("中文句子。消息".to_string()),
        2 => Just(". ".to_string()),
        1 => Just("! ".to_string()),
        1 => Just("3.14".to_string()),
        1 => Just("…".to_string()),
        1 => "x{20,90}".prop_map(|w| w),
    ]
}

/// Random hard Markdown: fences (backtick and tilde, long info strings, empty, unclosed,
/// nested longer fences), indented code, inline code with stray backticks, CRLF, combining
/// marks (after spaces too), prepended chars, ZWJ emoji, flags, CJK.
pub(crate) fn hard_markdown() -> impl Strategy<Value = String> {
    prop::collection::vec(fragment(), 0..70).prop_map(|v| v.concat())
}

/// A limit for `metric` from the smallest accepted one up: mostly tiny.
pub(crate) fn limit_for(metric: LengthMetric, extra: usize) -> usize {
    metric.min_limit() + extra
}

/// Long random hard Markdown (several KiB): the fragments of [`hard_markdown`] and long
/// lines without a break, so the chunker compacts its buffer many times and plans cuts on
/// lines longer than a block.
pub(crate) fn long_markdown() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        20 => fragment(),
        1 => "[a-z]{150,700}".prop_map(|w| w),
        1 => "([a-z]{1,9} ){40,120}".prop_map(|w| w),
        1 => "(`[a-z ]{0,40}){10,60}".prop_map(|w| w),
    ];
    prop::collection::vec(piece, 300..1200).prop_map(|v| v.concat())
}

// ----- the chunker, whole and in deltas -----

/// The blocks of `deltas` pushed into a chunker with `config`, then a flush.
pub(crate) fn run_chunker(
    config: ChunkerConfig,
    deltas: impl IntoIterator<Item = impl AsRef<str>>,
) -> Vec<Block> {
    let mut c = BlockChunker::new(config).expect("valid config");
    let mut out = Vec::new();
    for d in deltas {
        c.push(d.as_ref(), &mut out);
    }
    c.flush(&mut out);
    out
}

/// Splits `text` at char boundaries after the given sizes (cycled).
pub(crate) fn deltas<'a>(text: &'a str, sizes: &[usize]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut at = 0;
    let mut k = 0;
    while at < text.len() {
        let mut end = (at + sizes[k % sizes.len()].max(1)).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[at..end]);
        at = end;
        k += 1;
    }
    out
}

/// The first blocks where two block lists differ.
pub(crate) fn first_diff<'a>(
    a: &'a [Block],
    b: &'a [Block],
) -> (Option<&'a Block>, Option<&'a Block>) {
    let i = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    (a.get(i), b.get(i))
}

/// Every invariant for one text and config: the checks of [`check_blocks`] on the whole text
/// as one delta, a lead only on the first block, and the same blocks from 1-char deltas and
/// from deltas of `sizes`.
pub(crate) fn check_all(text: &str, config: ChunkerConfig, sizes: &[usize]) -> Result<(), String> {
    let whole = run_chunker(config, [text]);
    let expect = Expect::for_text(text, config.metric, config.max, None);
    check_blocks(text, &whole, expect).map_err(|e| format!("{config:?}: {e}"))?;
    if let Some(b) = whole.iter().skip(1).find(|b| !b.lead.is_empty()) {
        return Err(format!("{config:?}: a lead on a later block: {b:?}"));
    }
    for split in [deltas(text, &[1]), deltas(text, sizes)] {
        let blocks = run_chunker(config, &split);
        if blocks != whole {
            let (a, b) = first_diff(&blocks, &whole);
            return Err(format!(
                "{config:?}: deltas of {:?} differ:\n{a:#?}\nvs whole\n{b:#?}",
                split.iter().take(4).map(|d| d.len()).collect::<Vec<_>>()
            ));
        }
    }
    Ok(())
}

/// Every break preference.
pub(crate) const PREFS: [BreakPreference; 3] = [
    BreakPreference::Paragraph,
    BreakPreference::Newline,
    BreakPreference::Sentence,
];

/// A chunker configuration: any metric and preference, limits mostly tiny (down to the
/// smallest the metric accepts), any `min` below `max`.
pub(crate) fn chunker_config() -> impl Strategy<Value = ChunkerConfig> {
    (
        0usize..4,
        prop_oneof![6 => 0usize..40, 2 => 40usize..200, 1 => 200usize..1200],
        0u32..=100,
        0usize..3,
        any::<bool>(),
    )
        .prop_map(|(m, extra, min_pct, p, fop)| {
            let metric = LengthMetric::ALL[m];
            let max = metric.min_limit() + extra;
            ChunkerConfig {
                min: (max * min_pct as usize / 100).max(1),
                max,
                break_preference: PREFS[p],
                flush_on_paragraph: fop,
                metric,
            }
        })
}
