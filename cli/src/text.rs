//! `chunk` and `split`: the text core on a file, one JSON object per piece per line.

use std::io::{self, BufWriter, Write};

use clap::Args;
use replystream::{
    Block, BlockChunker, BreakPreference, ChunkerConfig, Format, LengthMetric, PlatformSplitter,
    RenderOptions, SplitConfig, SplitMode, TableMode, render,
};
use serde::Serialize;

use crate::values::{
    self, BREAK_PREFERENCES, FORMATS, LineCap, MAX_UNITS, METRICS, SPLIT_MODES, TABLE_MODES,
};
use crate::{CliError, read_input};

/// One output line: a block or a piece, with its place in the input.
#[derive(Serialize)]
struct Record<'a> {
    text: &'a str,
    lead: &'a str,
    sep: &'a str,
    len: usize,
    start: usize,
    end: usize,
    fence_reopened: bool,
    indent_reopened: bool,
    fence_closed: bool,
    table_header_repeated: bool,
    head_len: usize,
    tail_len: usize,
    spans_reopened: bool,
    spans_closed: bool,
    /// Columns taken off the lines of `text` (a piece starting inside deep list-item code).
    dedent: usize,
    /// Quote markers kept at each line's start before the `dedent` columns are taken off
    /// (a piece starting inside a list item's deep fence in a block quote).
    dedent_quotes: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    flushed: Option<bool>,
    /// (split with --format) the format `text` is in, and the Markdown piece it came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    format: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    markdown: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    entities: Option<serde_json::Value>,
}

/// Writes records as JSON lines to a buffered stdout.
struct JsonLines<W: Write> {
    out: W,
    metric: LengthMetric,
}

impl<W: Write> JsonLines<W> {
    fn write(&mut self, block: &Block, flushed: Option<bool>) -> Result<(), CliError> {
        self.write_rendered(block, flushed, None)
    }

    /// Writes a piece; with `format`, `text` is the piece rendered into it.
    fn write_rendered(
        &mut self,
        block: &Block,
        flushed: Option<bool>,
        format: Option<(Format, &RenderOptions)>,
    ) -> Result<(), CliError> {
        let rendered = format.map(|(f, options)| render(&block.text, f, options));
        let text = rendered
            .as_ref()
            .map_or(block.text.as_str(), |r| r.text.as_str());
        let entities = match (format, &rendered) {
            (Some((Format::TelegramEntities, _)), Some(r)) => {
                Some(crate::replay::entities_json(&r.entities))
            }
            _ => None,
        };
        let record = Record {
            text,
            lead: &block.lead,
            sep: &block.sep,
            len: self.metric.len(text),
            start: block.source.start,
            end: block.source.end,
            fence_reopened: block.fence_reopened,
            indent_reopened: block.indent_reopened,
            fence_closed: block.fence_closed,
            table_header_repeated: block.table_header_repeated,
            head_len: block.head_len,
            tail_len: block.tail_len,
            spans_reopened: block.spans_reopened,
            spans_closed: block.spans_closed,
            dedent: block.dedent,
            dedent_quotes: block.dedent_quotes,
            flushed,
            format: format.map(|(f, _)| f.name()),
            markdown: format.map(|_| block.text.as_str()),
            entities,
        };
        serde_json::to_writer(&mut self.out, &record).map_err(|err| match err.io_error_kind() {
            Some(kind) => CliError::output(io::Error::from(kind)),
            None => CliError::runtime(format!("cannot encode output: {err}")),
        })?;
        self.out.write_all(b"\n").map_err(CliError::output)
    }

    fn finish(mut self) -> Result<(), CliError> {
        self.out.flush().map_err(CliError::output)
    }
}

fn json_lines(metric: LengthMetric) -> JsonLines<BufWriter<io::StdoutLock<'static>>> {
    JsonLines {
        out: BufWriter::new(io::stdout().lock()),
        metric,
    }
}

/// `replystream chunk`: stream FILE through the block chunker.
#[derive(Args, Debug)]
#[command(after_help = OUTPUT_FIELDS)]
pub(crate) struct ChunkArgs {
    /// The text to chunk: a path, or - for standard input (UTF-8)
    #[arg(value_name = "FILE")]
    file: String,

    /// Emit no block before N units are buffered [0..=1000000; 0 counts as 1]
    #[arg(long, value_name = "N", default_value_t = 800,
          value_parser = values::units(0, MAX_UNITS))]
    min: usize,

    // The help states the library's minimums (`values::min_limits`).
    #[arg(long, value_name = "N", default_value_t = 1200,
          help = format!("No block longer than N units, fence lines included [0..=1000000; \
                          raised to --min, then at least {}]", values::min_limits()),
          value_parser = values::units(0, MAX_UNITS))]
    max: usize,

    /// Preferred cut
    #[arg(long = "break", value_name = "B", default_value = "paragraph",
          value_parser = BREAK_PREFERENCES)]
    break_preference: BreakPreference,

    /// Length unit
    #[arg(long, value_name = "M", default_value = "chars", value_parser = METRICS)]
    metric: LengthMetric,

    /// Feed the text as deltas of K characters [1..=1000000]
    #[arg(long, value_name = "K", default_value_t = 4,
          value_parser = values::units(1, MAX_UNITS))]
    token: usize,

    /// Emit each paragraph as soon as its blank line arrives
    #[arg(long)]
    flush_on_paragraph: bool,
}

/// The fields of `chunk` and `split` output, shown after their help.
const OUTPUT_FIELDS: &str = "\
Output: one JSON object per line, one per block (chunk) or piece (split):
  text            the piece as displayed (synthetic fence lines included)
  lead            whitespace before it that no sep holds (leading whitespace of FILE)
  sep             the source text between this piece and the next
  len             the length of text in the metric
  start, end      the byte range of FILE that text shows (synthetic lines excluded)
  fence_reopened  text starts with a synthetic fence opening line
  indent_reopened text starts with 4 synthetic spaces (an indented code line goes on;
                  in a quote after its `>` markers and a space, within head_len)
  fence_closed    text ends with a synthetic fence closing line
  table_header_repeated
                  text starts with a table's header and delimiter rows again (the
                  piece goes on with the rows of a table cut between two rows)
  head_len        bytes of synthetic text at the start of the Markdown piece (0: none)
  tail_len        bytes of synthetic text at the end of the Markdown piece (0: none);
                  piece[head_len .. len(piece) - tail_len] is FILE[start..end] exactly
                  (the piece is text, or markdown with split --format)
  spans_reopened  text starts with inline delimiters reopened (emphasis, a code span's
                  backticks) that the piece before closed at a cut inside them
  spans_closed    text ends with inline delimiters closing what a cut fell inside
  dedent          columns taken off each line of text (a piece that starts inside code
                  4 or more columns deep in a list item, shown as the item reads)
  dedent_quotes   quote markers kept at each line's start before the dedent columns
                  (a list item's deep fence in a block quote; 0: leading columns)
  flushed         (chunk) the block came from the final forced drain
  format          (split --format) the format text is rendered in
  markdown        (split --format) the Markdown piece text was rendered from
  entities        (split --format telegram-entities) type, offset, length (UTF-16), url, language";

/// `replystream chunk FILE [OPTIONS]`: feeds FILE to a [`BlockChunker`] in deltas of
/// `--token` characters, then drains it, printing every block as it comes out.
pub(crate) fn run_chunk(args: ChunkArgs) -> Result<(), CliError> {
    let config = ChunkerConfig {
        min: args.min,
        max: args.max,
        break_preference: args.break_preference,
        flush_on_paragraph: args.flush_on_paragraph,
        metric: args.metric,
    };
    // An invalid configuration is the caller's mistake: report it before reading input,
    // exactly as the library refuses it.
    let mut chunker =
        BlockChunker::new(config).map_err(|err| CliError::usage(format!("chunk: {err}")))?;
    let text = read_input(&args.file)?;
    let mut out = json_lines(config.metric);
    let mut blocks = Vec::new();
    for delta in char_deltas(&text, args.token) {
        chunker.push(delta, &mut blocks);
        for block in blocks.drain(..) {
            out.write(&block, Some(false))?;
        }
    }
    chunker.flush(&mut blocks);
    for block in blocks.drain(..) {
        out.write(&block, Some(true))?;
    }
    out.finish()
}

/// `text` in consecutive pieces of `k` characters (the last may be shorter); `k >= 1`.
pub(crate) fn char_deltas(text: &str, k: usize) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest.char_indices().nth(k).map_or(rest.len(), |(i, _)| i);
        let (delta, tail) = rest.split_at(end);
        rest = tail;
        Some(delta)
    })
}

/// `replystream split`: split FILE to a platform's text limit.
#[derive(Args, Debug)]
#[command(after_help = OUTPUT_FIELDS)]
pub(crate) struct SplitArgs {
    /// The text to split: a path, or - for standard input (UTF-8)
    #[arg(value_name = "FILE")]
    file: String,

    // The help states the library's minimums (`values::min_limits`).
    #[arg(long, value_name = "N", default_value_t = 4000,
          help = format!("The platform's text limit, fence lines included [{}..=1000000; at \
                          least {}]", values::MIN_LIMIT_ANY_METRIC, values::min_limits()),
          value_parser = values::units(values::MIN_LIMIT_ANY_METRIC, MAX_UNITS))]
    limit: usize,

    /// Length unit
    #[arg(long, value_name = "M", default_value = "chars", value_parser = METRICS)]
    metric: LengthMetric,

    /// Fill pieces to the limit, or split at every paragraph first
    #[arg(long, value_name = "MODE", default_value = "length", value_parser = SPLIT_MODES)]
    mode: SplitMode,

    /// At most N lines per piece (Discord: 17), or none [3..=1000000]
    #[arg(long, value_name = "N|none",
          value_parser = values::line_cap(replystream::MIN_MAX_LINES as u64))]
    max_lines: Option<LineCap>,

    /// Render each piece into a platform format (text then holds it; markdown holds the
    /// piece it came from) [markdown, discord, telegram-html, telegram-entities,
    /// slack-mrkdwn, whatsapp, plain]
    #[arg(long, value_name = "NAME", value_parser = FORMATS)]
    format: Option<Format>,

    /// With --format: how tables show [code, bullets, off, native; default: the format's]
    #[arg(long, value_name = "MODE", value_parser = TABLE_MODES, requires = "format")]
    table_mode: Option<TableMode>,
}

/// `replystream split FILE [OPTIONS]`: splits FILE with a [`PlatformSplitter`] and prints
/// every piece.
pub(crate) fn run_split(args: SplitArgs) -> Result<(), CliError> {
    let options = RenderOptions {
        table_mode: args.table_mode,
        ..RenderOptions::default()
    };
    // With --format, the limit counts each piece as the platform counts it once rendered.
    let config = SplitConfig {
        limit: args.limit,
        metric: args.metric,
        mode: args.mode,
        max_lines: args.max_lines.and_then(|LineCap(cap)| cap),
        format: args.format.unwrap_or_default(),
        render: options,
    };
    // An invalid configuration is the caller's mistake: report it before reading input.
    let splitter =
        PlatformSplitter::new(config).map_err(|err| CliError::usage(format!("split: {err}")))?;
    let text = read_input(&args.file)?;
    let mut out = json_lines(config.metric);
    let format = args.format.map(|f| (f, &options));
    for piece in splitter.split(&text) {
        out.write_rendered(&piece, None, format)?;
    }
    out.finish()
}

#[cfg(test)]
mod tests {
    use super::char_deltas;

    #[test]
    fn deltas_cut_on_char_boundaries_and_cover_the_text() {
        let text = "héllo 👨‍👩‍👧 wörld";
        for k in 1..=text.len() + 1 {
            let deltas: Vec<&str> = char_deltas(text, k).collect();
            assert_eq!(deltas.concat(), text);
            assert!(deltas.iter().all(|d| !d.is_empty()));
            assert!(deltas.iter().all(|d| d.chars().count() <= k));
            let full = &deltas[..deltas.len() - 1];
            assert!(full.iter().all(|d| d.chars().count() == k));
        }
        assert_eq!(char_deltas("", 4).count(), 0);
    }
}
