//! The `replystream` command-line tool: the human face of the library and a language-neutral
//! test surface (JSON lines out).
//!
//! Subcommands are listed in [`SUBCOMMANDS`]; each one reads its own options with the small
//! [`args::ArgReader`] and returns a [`CliError`] on failure, which `main` prints as one line
//! on stderr (`replystream: ...`) with exit code 2 for a usage error and 1 for a runtime error.

mod args;
mod demo;
mod replay;
mod text;

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::process::ExitCode;

use args::{Arg, ArgReader};

/// The help text: `replystream --help`, `replystream help` or `replystream SUBCOMMAND -h`.
const USAGE: &str = "\
replystream: cut a streaming LLM reply into chat-sized messages

Usage:
  replystream chunk FILE [OPTIONS]   stream FILE through the block chunker
  replystream split FILE [OPTIONS]   split FILE to a platform's text limit
  replystream demo FILE [OPTIONS]    stream FILE through a channel and show the timeline
  replystream replay TRACE [OPTIONS] replay timed inputs (JSON lines), print the actions
  replystream help                   show this help (also --help, -h)

FILE is a path, or - for standard input. The text must be UTF-8.
Both subcommands print one JSON object per line: one per block (chunk) or piece (split).

Options of chunk:
  --min N                 emit no block before N units are buffered (default 800)
  --max N                 no block longer than N units, fence lines included (default 1200)
  --break B               preferred cut: paragraph, newline or sentence (default paragraph)
  --metric M              length unit: utf16, chars, bytes or graphemes (default chars)
  --token K               feed the text as deltas of K characters (default 4)
  --flush-on-paragraph    emit each paragraph as soon as its blank line arrives
  min and max are clamped as the library does: min >= 1, max >= min.

Options of split:
  --limit N               the platform's text limit, fence lines included (default 4000)
  --metric M              length unit: utf16, chars, bytes or graphemes (default chars)
  --mode length|newline   fill pieces to the limit, or split at every paragraph first
                          (default length)
  --max-lines N           at most N lines per piece (Discord: 17)

Options of demo:
  --channel NAME          telegram, discord, slack, signal, whatsapp, imessage,
                          googlechat or generic (default generic)
  --rate R                deltas per second from the model (default 50)
  --token K               characters per delta (default 4)
  --seed S                seed of the human-delay RNG (default 1)
  --human-delay off|natural  pause 800-2500 ms between blocks (default off)
  --ack-ms N              the chat platform acks each message after N ms (default 150)
  --live                  run the real thread driver on real time and print messages as
                          they arrive (the default is an instant simulation)

Options of replay:
  --channel, --seed, --human-delay  as for demo
  --ack-ms N              ack every send after N ms (default 0)
  --no-auto-ack           do not ack: the trace holds delivered/delivery_failed inputs
  Trace lines are JSON objects with t (ms), type and fields; see the README.

Output fields of chunk and split:
  text            the piece as displayed (synthetic fence lines included)
  sep             the source text between this piece and the next
  len             the length of text in the metric
  start, end      the byte range of FILE that text shows (synthetic lines excluded)
  fence_reopened  text starts with a synthetic fence opening line
  fence_closed    text ends with a synthetic fence closing line
  flushed         (chunk) the block came from the final forced drain

Exit status: 0 success, 1 runtime error (unreadable or non-UTF-8 input), 2 usage error.
";

/// A subcommand: its name and the function that runs it on the arguments that follow the
/// name. Adding one (`demo`, `replay`) is a new entry here plus a line in [`USAGE`].
struct Subcommand {
    name: &'static str,
    run: fn(ArgReader) -> Result<(), CliError>,
}

/// Every subcommand the tool knows, in the order the help lists them.
const SUBCOMMANDS: &[Subcommand] = &[
    Subcommand {
        name: "chunk",
        run: text::run_chunk,
    },
    Subcommand {
        name: "split",
        run: text::run_split,
    },
    Subcommand {
        name: "demo",
        run: demo::run_demo,
    },
    Subcommand {
        name: "replay",
        run: replay::run_replay,
    },
];

/// How a failed run ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The command line is wrong (unknown option, bad value, invalid configuration): exit 2.
    Usage,
    /// The command line is right but the work failed (unreadable or non-UTF-8 input): exit 1.
    Runtime,
    /// The reader of our output went away (`| head`): stop quietly, exit 0.
    OutputClosed,
}

/// A failure with the one-line message to show.
#[derive(Debug)]
pub struct CliError {
    /// What kind of failure, which decides the exit code.
    pub failure: Failure,
    /// The message, without the `replystream: ` prefix.
    pub message: String,
}

impl CliError {
    /// A usage error (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        CliError {
            failure: Failure::Usage,
            message: message.into(),
        }
    }

    /// A runtime error (exit 1).
    pub fn runtime(message: impl Into<String>) -> Self {
        CliError {
            failure: Failure::Runtime,
            message: message.into(),
        }
    }

    /// A write to stdout failed. A closed pipe ends the run quietly; anything else is a
    /// runtime error.
    pub fn output(err: io::Error) -> Self {
        if err.kind() == io::ErrorKind::BrokenPipe {
            CliError {
                failure: Failure::OutputClosed,
                message: String::new(),
            }
        } else {
            CliError::runtime(format!("cannot write output: {err}"))
        }
    }
}

fn main() -> ExitCode {
    // A panic is a bug in replystream; still report it in the tool's one-line format.
    std::panic::set_hook(Box::new(|info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".to_owned());
        let place = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!(
            "replystream: internal error (a bug, please report it): {}{place}",
            one_line(&what)
        );
    }));

    match run(std::env::args_os().skip(1)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => match err.failure {
            Failure::OutputClosed => ExitCode::SUCCESS,
            Failure::Usage | Failure::Runtime => {
                eprintln!("replystream: {}", one_line(&err.message));
                ExitCode::from(if err.failure == Failure::Usage { 2 } else { 1 })
            }
        },
    }
}

/// Finds the subcommand named by the first argument and runs it on the rest.
fn run(argv: impl Iterator<Item = OsString>) -> Result<(), CliError> {
    let mut args = ArgReader::new(argv)?;
    let name = match args.next_arg()? {
        None => {
            return Err(CliError::usage(
                "missing subcommand (try `replystream --help`)",
            ));
        }
        Some(Arg::Help) => return print_usage(),
        Some(Arg::Long(flag)) if flag == "help" => return print_usage(),
        Some(Arg::Long(flag)) if flag == "version" => {
            return write_stdout(&format!("replystream {}\n", env!("CARGO_PKG_VERSION")));
        }
        Some(Arg::Long(flag)) => {
            return Err(CliError::usage(format!(
                "unknown option --{flag} before the subcommand (try `replystream --help`)"
            )));
        }
        Some(Arg::Positional(name)) => name,
    };
    if name == "help" {
        return print_usage();
    }
    match SUBCOMMANDS.iter().find(|s| s.name == name) {
        Some(subcommand) => (subcommand.run)(args),
        None => {
            let known: Vec<&str> = SUBCOMMANDS.iter().map(|s| s.name).collect();
            Err(CliError::usage(format!(
                "unknown subcommand {name:?} (expected one of: {})",
                known.join(", ")
            )))
        }
    }
}

/// Prints the help text to stdout.
pub fn print_usage() -> Result<(), CliError> {
    write_stdout(USAGE)
}

fn write_stdout(text: &str) -> Result<(), CliError> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(CliError::output)
}

/// Reads the whole of `path` (`-` for stdin) as UTF-8 text.
pub fn read_input(path: &str) -> Result<String, CliError> {
    let (bytes, shown) = if path == "-" {
        let mut bytes = Vec::new();
        io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .map_err(|err| CliError::runtime(format!("cannot read standard input: {err}")))?;
        (bytes, "standard input")
    } else {
        let bytes = std::fs::read(path)
            .map_err(|err| CliError::runtime(format!("cannot read {path}: {err}")))?;
        (bytes, path)
    };
    String::from_utf8(bytes).map_err(|err| {
        CliError::runtime(format!(
            "{shown} is not valid UTF-8 (first bad byte at offset {})",
            err.utf8_error().valid_up_to()
        ))
    })
}

/// `text` with every line break turned into a space, so an error is always one line.
fn one_line(text: &str) -> String {
    text.split(['\n', '\r'])
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
