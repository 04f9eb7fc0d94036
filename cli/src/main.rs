//! The `replystream` command-line tool: the human face of the library and a language-neutral
//! test surface (JSON lines out).
//!
//! The command line is parsed by clap into [`Cli`]: one subcommand with its own options and
//! help. A failure is a [`CliError`], which `main` prints as one line on stderr
//! (`replystream: ...`), with exit code 2 for a usage error (clap's own errors included) and
//! 1 for a runtime error.

mod deltas;
mod demo;
mod post;
mod replay;
mod settings;
mod text;
mod values;

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// replystream: cut a streaming LLM reply into chat-sized messages
#[derive(Parser, Debug)]
#[command(name = "replystream", version, after_help = EXIT_STATUS)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

/// The exit statuses, shown after the main help.
const EXIT_STATUS: &str = "\
FILE is a path, or - for standard input; the text must be UTF-8.
Exit status: 0 success, 1 runtime error (unreadable or non-UTF-8 input), 2 usage error.
Run `replystream help SUBCOMMAND` for a subcommand's options.";

#[derive(Subcommand, Debug)]
enum Command {
    /// Stream FILE through the block chunker; one JSON line per block
    Chunk(text::ChunkArgs),
    /// Split FILE to a platform's text limit; one JSON line per piece
    Split(text::SplitArgs),
    /// Stream FILE through a channel and show the timeline of messages
    Demo(demo::DemoArgs),
    /// Replay timed inputs (JSON lines) and print the engine's actions as JSON lines
    Replay(replay::ReplayArgs),
    /// Stream FILE (or a live model's reply) into a Telegram, Discord or Slack chat
    Post(post::PostArgs),
}

/// The command-line grammar: [`Cli`], with every option that takes a value allowed to take a
/// negative number, so that `--min -5` reaches the value's parser (which refuses it and says
/// why) instead of being read as an unknown flag `-5` and a missing value.
fn command() -> clap::Command {
    Cli::command()
        .mut_subcommands(|sub| {
            sub.mut_args(|arg| {
                if !arg.is_positional() && arg.get_action().takes_values() {
                    arg.allow_negative_numbers(true)
                } else {
                    arg
                }
            })
        })
        .mut_subcommand("post", post::channel_default)
}

/// Parses a command line (program name first).
fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Cli, clap::Error> {
    let mut matches = command().try_get_matches_from(args)?;
    let channel_given = matches
        .subcommand_matches("post")
        .is_some_and(|post| post.value_source("channel") == Some(ValueSource::CommandLine));
    let mut cli = Cli::from_arg_matches_mut(&mut matches)?;
    if let Some(Command::Post(post)) = &mut cli.command {
        post.channel_given = channel_given;
    }
    Ok(cli)
}

impl Command {
    fn run(self) -> Result<(), CliError> {
        match self {
            Command::Chunk(args) => text::run_chunk(args),
            Command::Split(args) => text::run_split(args),
            Command::Demo(args) => demo::run_demo(args),
            Command::Replay(args) => replay::run_replay(args),
            Command::Post(args) => post::run_post(args),
        }
    }
}

/// How a failed run ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The command line is wrong (unknown option, bad value, invalid configuration): exit 2.
    Usage,
    /// The command line is right but the work failed (unreadable or non-UTF-8 input): exit 1.
    Runtime,
    /// The reader of our output went away (`| head`): stop quietly, exit 0.
    OutputClosed,
    /// Ctrl-C (SIGINT) stopped a live run after its summary was printed: exit 130, as a
    /// shell reports a command killed by SIGINT.
    Interrupted,
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

    /// A live run stopped by Ctrl-C (exit 130).
    pub fn interrupted() -> Self {
        CliError {
            failure: Failure::Interrupted,
            message: "interrupted".to_owned(),
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

    let args: Vec<OsString> = std::env::args_os().collect();
    let result = match parse(args.iter().cloned()) {
        Ok(Cli {
            command: Some(command),
        }) => command.run(),
        Ok(Cli { command: None }) => Err(CliError::usage(
            "missing subcommand (try `replystream --help`)",
        )),
        // Help and the version are what was asked for: on stdout, with success.
        Err(err)
            if matches!(
                err.kind(),
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
            ) =>
        {
            write_stdout(&err.render().to_string())
        }
        Err(err) => Err(CliError::usage(clap_one_line(
            &err.render().to_string(),
            &command_named(&args),
        ))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => match err.failure {
            Failure::OutputClosed => ExitCode::SUCCESS,
            Failure::Interrupted => {
                eprintln!("replystream: {}", err.message);
                ExitCode::from(130)
            }
            Failure::Usage | Failure::Runtime => {
                eprintln!("replystream: {}", one_line(&err.message));
                ExitCode::from(if err.failure == Failure::Usage { 2 } else { 1 })
            }
        },
    }
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

/// clap's rendered error as one line: the `error: ` tag and the usage block dropped, the
/// remaining lines joined (a `tip:` after a `; `), and clap's "For more information, try
/// '--help'" turned into `(try `COMMAND --help`)`, `command` being the (sub)command the error
/// is about.
fn clap_one_line(rendered: &str, command: &str) -> String {
    let mut message = String::new();
    let mut hint = None;
    let mut in_usage = false;
    for line in rendered.lines() {
        let line = line.trim();
        if line.is_empty() {
            in_usage = false;
            continue;
        }
        if line.starts_with("Usage:") {
            in_usage = true;
        }
        if in_usage {
            continue;
        }
        if let Some(rest) = line.strip_prefix("For more information, try '") {
            hint = Some(rest.trim_end_matches(['.', '\'']).to_owned());
            continue;
        }
        let line = line.strip_prefix("error: ").unwrap_or(line);
        if !message.is_empty() {
            message.push_str(if line.starts_with("tip:") { "; " } else { " " });
        }
        message.push_str(line);
    }
    if let Some(hint) = hint {
        let hint = if hint.starts_with('-') {
            format!("{command} {hint}")
        } else {
            hint
        };
        message.push_str(&format!(" (try `{hint}`)"));
    }
    message
}

/// `replystream SUBCOMMAND` when the command line `args` (program name first) names a
/// subcommand (its first argument that is not an option), else `replystream`.
fn command_named(args: &[OsString]) -> String {
    let named = args
        .iter()
        .skip(1)
        .filter_map(|arg| arg.to_str())
        .find(|arg| !arg.starts_with('-'));
    match named {
        Some(name) if command().find_subcommand(name).is_some() => {
            format!("replystream {name}")
        }
        _ => "replystream".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses `replystream SUB FILE --LONG VALUE`.
    fn parse_option(sub: &str, long: &str, value: &str) -> Result<Cli, clap::Error> {
        let option = format!("--{long}");
        let mut args = vec!["replystream", sub, "FILE", &option, value];
        // `post` needs its destination.
        for (name, given) in [("to", "telegram"), ("chat", "1")] {
            if sub == "post" && long != name {
                args.extend([if name == "to" { "--to" } else { "--chat" }, given]);
            }
        }
        parse(args.into_iter().map(OsString::from))
    }

    /// Every option that takes a value, as (subcommand, long name, help text, value name).
    fn value_options() -> Vec<(String, String, String, String)> {
        let mut options = Vec::new();
        let mut cmd = command();
        cmd.build();
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            for arg in sub.get_arguments() {
                let (Some(long), true) = (arg.get_long(), arg.get_action().takes_values()) else {
                    continue;
                };
                let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
                let value_name = arg
                    .get_value_names()
                    .and_then(|names| names.first())
                    .map(|n| n.to_string())
                    .unwrap_or_default();
                options.push((sub.get_name().to_owned(), long.to_owned(), help, value_name));
            }
        }
        options
    }

    /// The `[LO..=HI` range an option's help documents.
    fn documented_range(help: &str) -> Option<(u64, u64)> {
        let start = help.find('[')? + 1;
        let rest = &help[start..];
        let (lo, rest) = rest.split_once("..=")?;
        let hi: String = rest.chars().take_while(char::is_ascii_digit).collect();
        Some((lo.parse().ok()?, hi.parse().ok()?))
    }

    #[test]
    fn every_subcommand_is_listed_with_its_options() {
        let options = value_options();
        for sub in ["chunk", "split", "demo", "replay"] {
            assert!(options.iter().any(|(s, ..)| s == sub), "{sub}");
        }
        // demo and replay share the engine settings (one flattened definition).
        let of = |sub: &str| -> Vec<String> {
            let mut longs: Vec<String> = options
                .iter()
                .filter(|(s, ..)| s == sub)
                .map(|(_, long, ..)| long.clone())
                .filter(|long| long != "rate" && long != "token")
                .collect();
            longs.sort();
            longs
        };
        assert_eq!(of("demo"), of("replay"));
        assert!(of("demo").len() >= 17, "{:?}", of("demo"));
    }

    /// A negative number is a value the value's parser refuses, for every option.
    #[test]
    fn negative_numbers_reach_the_value_parser() {
        for (sub, long, ..) in value_options() {
            // Free text, where -1 is a fine value (a Telegram group's chat id is negative).
            if sub == "post" && ["chat", "model", "prompt"].contains(&long.as_str()) {
                assert!(parse_option(&sub, &long, "-1").is_ok(), "{sub} --{long} -1");
                continue;
            }
            let err = parse_option(&sub, &long, "-1").err().unwrap_or_else(|| {
                panic!("{sub} --{long} -1 was accepted");
            });
            assert!(
                matches!(
                    err.kind(),
                    ErrorKind::ValueValidation | ErrorKind::InvalidValue
                ),
                "{sub} --{long} -1: {:?}: {err}",
                err.kind()
            );
        }
    }

    /// Every numeric option documents its range in its help, and the range is what the
    /// parser enforces: both ends accepted, one past either end refused.
    #[test]
    fn documented_ranges_are_enforced() {
        let mut checked = 0;
        for (sub, long, help, value_name) in value_options() {
            let numeric = ["N", "N|none", "MS", "K", "R"].contains(&value_name.as_str());
            let Some((lo, hi)) = documented_range(&help) else {
                assert!(!numeric, "{sub} --{long} documents no range: {help}");
                continue;
            };
            checked += 1;
            for ok in [lo, hi] {
                let parsed = parse_option(&sub, &long, &ok.to_string());
                assert!(parsed.is_ok(), "{sub} --{long} {ok}: {:?}", parsed.err());
            }
            let mut refused = vec![hi + 1, u64::MAX];
            if lo > 0 {
                refused.push(lo - 1);
            }
            for bad in refused {
                let err = parse_option(&sub, &long, &bad.to_string()).err();
                let err = err.unwrap_or_else(|| panic!("{sub} --{long} {bad} was accepted"));
                assert_eq!(
                    err.kind(),
                    ErrorKind::ValueValidation,
                    "{sub} --{long} {bad}"
                );
                assert!(
                    err.to_string().contains("out of range"),
                    "{sub} --{long} {bad}: {err}"
                );
            }
        }
        assert!(checked >= 20, "{checked} ranges checked");
    }

    #[test]
    fn one_line_errors() {
        let rendered = "error: the following required arguments were not provided:\n  <FILE>\n\n\
                        Usage: replystream split <FILE>\n\n\
                        For more information, try '--help'.\n";
        assert_eq!(
            clap_one_line(rendered, "replystream split"),
            "the following required arguments were not provided: <FILE> \
             (try `replystream split --help`)"
        );
        let rendered = "error: unexpected argument '-x' found\n\n  \
                        tip: to pass '-x' as a value, use '-- -x'\n\n\
                        Usage: replystream split [OPTIONS] <FILE>\n\n\
                        For more information, try '--help'.\n";
        assert_eq!(
            clap_one_line(rendered, "replystream"),
            "unexpected argument '-x' found; tip: to pass '-x' as a value, use '-- -x' \
             (try `replystream --help`)"
        );
    }
}
