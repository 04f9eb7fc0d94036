//! `chunk` and `split`: the text core on a file, one JSON object per piece per line.

use std::io::{self, BufWriter, Write};

use replystream::{
    Block, BlockChunker, BreakPreference, ChunkerConfig, LengthMetric, PlatformSplitter,
    SplitConfig, SplitMode,
};
use serde::Serialize;

use crate::args::{Arg, ArgReader};
use crate::{CliError, print_usage, read_input};

/// One output line: a block or a piece, with its place in the input.
#[derive(Serialize)]
struct Record<'a> {
    text: &'a str,
    sep: &'a str,
    len: usize,
    start: usize,
    end: usize,
    fence_reopened: bool,
    fence_closed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    flushed: Option<bool>,
}

/// Writes records as JSON lines to a buffered stdout.
struct JsonLines<W: Write> {
    out: W,
    metric: LengthMetric,
}

impl<W: Write> JsonLines<W> {
    fn write(&mut self, block: &Block, flushed: Option<bool>) -> Result<(), CliError> {
        let record = Record {
            text: &block.text,
            sep: &block.sep,
            len: self.metric.len(&block.text),
            start: block.source.start,
            end: block.source.end,
            fence_reopened: block.fence_reopened,
            fence_closed: block.fence_closed,
            flushed,
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

const METRIC_NAMES: &str = "utf16, chars, bytes or graphemes";

fn parse_metric(args: &mut ArgReader) -> Result<LengthMetric, CliError> {
    args.parsed("metric", METRIC_NAMES)
}

/// A count option that must be a whole number (`0` allowed; the library decides whether it
/// is a valid configuration).
pub(crate) fn parse_count(args: &mut ArgReader, name: &str) -> Result<usize, CliError> {
    args.parsed(name, "a whole number")
}

/// Takes the single FILE argument; a second one is an error.
pub(crate) fn set_file(file: &mut Option<String>, value: String) -> Result<(), CliError> {
    match file {
        Some(first) => Err(CliError::usage(format!(
            "unexpected argument {value:?} (FILE is already {first:?})"
        ))),
        None => {
            *file = Some(value);
            Ok(())
        }
    }
}

pub(crate) fn require_file(file: Option<String>, subcommand: &str) -> Result<String, CliError> {
    file.ok_or_else(|| {
        CliError::usage(format!(
            "{subcommand}: missing FILE (a path, or - for standard input)"
        ))
    })
}

/// Options of `chunk`.
struct ChunkOptions {
    file: String,
    config: ChunkerConfig,
    token_chars: usize,
}

fn parse_chunk(mut args: ArgReader) -> Result<Option<ChunkOptions>, CliError> {
    let mut file = None;
    let mut config = ChunkerConfig::default();
    let mut token_chars = 4;
    while let Some(arg) = args.next_arg()? {
        match arg {
            Arg::Help => return Ok(None),
            Arg::Positional(value) => set_file(&mut file, value)?,
            Arg::Long(name) => match name.as_str() {
                "help" => return Ok(None),
                "min" => config.min = parse_count(&mut args, "min")?,
                "max" => config.max = parse_count(&mut args, "max")?,
                "break" => {
                    config.break_preference = match args.value("break")?.trim() {
                        "paragraph" => BreakPreference::Paragraph,
                        "newline" => BreakPreference::Newline,
                        "sentence" => BreakPreference::Sentence,
                        other => {
                            return Err(CliError::usage(format!(
                                "invalid value {other:?} for --break \
                                 (expected paragraph, newline or sentence)"
                            )));
                        }
                    }
                }
                "metric" => config.metric = parse_metric(&mut args)?,
                "token" => {
                    token_chars = parse_count(&mut args, "token")?;
                    if token_chars == 0 {
                        return Err(CliError::usage("--token must be at least 1"));
                    }
                }
                "flush-on-paragraph" => config.flush_on_paragraph = true,
                _ => return Err(unknown_option("chunk", &name)),
            },
        }
    }
    Ok(Some(ChunkOptions {
        file: require_file(file, "chunk")?,
        config,
        token_chars,
    }))
}

/// `replystream chunk FILE [OPTIONS]`: feeds FILE to a [`BlockChunker`] in deltas of
/// `--token` characters, then drains it, printing every block as it comes out.
pub(crate) fn run_chunk(args: ArgReader) -> Result<(), CliError> {
    let Some(options) = parse_chunk(args)? else {
        return print_usage();
    };
    // An invalid configuration is the caller's mistake: report it before reading input.
    let mut chunker = BlockChunker::new(options.config)
        .map_err(|err| CliError::usage(format!("chunk: {err}")))?;
    let text = read_input(&options.file)?;
    let mut out = json_lines(options.config.metric);
    let mut blocks = Vec::new();
    for delta in char_deltas(&text, options.token_chars) {
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

/// Options of `split`.
struct SplitOptions {
    file: String,
    config: SplitConfig,
}

fn parse_split(mut args: ArgReader) -> Result<Option<SplitOptions>, CliError> {
    let mut file = None;
    let mut config = SplitConfig::default();
    while let Some(arg) = args.next_arg()? {
        match arg {
            Arg::Help => return Ok(None),
            Arg::Positional(value) => set_file(&mut file, value)?,
            Arg::Long(name) => match name.as_str() {
                "help" => return Ok(None),
                "limit" => config.limit = parse_count(&mut args, "limit")?,
                "metric" => config.metric = parse_metric(&mut args)?,
                "mode" => {
                    config.mode = match args.value("mode")?.trim() {
                        "length" => SplitMode::Length,
                        "newline" => SplitMode::Newline,
                        other => {
                            return Err(CliError::usage(format!(
                                "invalid value {other:?} for --mode (expected length or newline)"
                            )));
                        }
                    }
                }
                "max-lines" => config.max_lines = Some(parse_count(&mut args, "max-lines")?),
                _ => return Err(unknown_option("split", &name)),
            },
        }
    }
    Ok(Some(SplitOptions {
        file: require_file(file, "split")?,
        config,
    }))
}

/// `replystream split FILE [OPTIONS]`: splits FILE with a [`PlatformSplitter`] and prints
/// every piece.
pub(crate) fn run_split(args: ArgReader) -> Result<(), CliError> {
    let Some(options) = parse_split(args)? else {
        return print_usage();
    };
    // An invalid configuration is the caller's mistake: report it before reading input.
    let splitter = PlatformSplitter::new(options.config)
        .map_err(|err| CliError::usage(format!("split: {err}")))?;
    let text = read_input(&options.file)?;
    let mut out = json_lines(options.config.metric);
    for piece in splitter.split(&text) {
        out.write(&piece, None)?;
    }
    out.finish()
}

pub(crate) fn unknown_option(subcommand: &str, name: &str) -> CliError {
    CliError::usage(format!(
        "{subcommand}: unknown option --{name} (try `replystream --help`)"
    ))
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
