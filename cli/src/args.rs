//! A small command-line argument reader.
//!
//! Why not clap: the tool has a handful of subcommands with a few numeric and enumerated
//! options each. A hand-written reader of about a hundred lines covers that (long options
//! with `--name value` or `--name=value`, `-h`, `--` and `-` for stdin), keeps the binary's
//! dependency list to serde/serde_json and its build fast, and lets every error be exactly one
//! line in the tool's own words.

use std::ffi::OsString;
use std::str::FromStr;

use crate::CliError;

/// One item of the command line, as the reader sees it.
#[derive(Debug, PartialEq, Eq)]
pub enum Arg {
    /// `--name` or `--name=value` (the name without its dashes).
    Long(String),
    /// `-h` (the only short option).
    Help,
    /// Anything else, `-` (stdin) included, and everything after `--`.
    Positional(String),
}

/// Reads options and positionals from the arguments of one subcommand.
#[derive(Debug)]
pub struct ArgReader {
    items: std::vec::IntoIter<String>,
    /// The name and `value` of a `--name=value` just returned, waiting for
    /// [`ArgReader::value`].
    inline: Option<(String, String)>,
    /// `--` was seen: everything from now on is positional.
    positional_only: bool,
}

impl ArgReader {
    /// A reader over `items`. Arguments that are not valid Unicode are a usage error: every
    /// option value is a number or a name, and a file name that is not Unicode can be piped
    /// through `-` instead.
    pub fn new(items: impl IntoIterator<Item = OsString>) -> Result<Self, CliError> {
        let items = items
            .into_iter()
            .map(|item| {
                item.into_string().map_err(|bad| {
                    CliError::usage(format!("argument {bad:?} is not valid Unicode"))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ArgReader {
            items: items.into_iter(),
            inline: None,
            positional_only: false,
        })
    }

    /// The next item, or `None` at the end. Fails if the previous option was given an
    /// `=value` that nobody asked for.
    pub fn next_arg(&mut self) -> Result<Option<Arg>, CliError> {
        if let Some((name, value)) = self.inline.take() {
            return Err(CliError::usage(format!(
                "option --{name} takes no value (got {value:?})"
            )));
        }
        let Some(item) = self.items.next() else {
            return Ok(None);
        };
        if self.positional_only || item == "-" || !item.starts_with('-') {
            return Ok(Some(Arg::Positional(item)));
        }
        if item == "--" {
            self.positional_only = true;
            return self.next_arg();
        }
        if item == "-h" {
            return Ok(Some(Arg::Help));
        }
        match item.strip_prefix("--") {
            Some(rest) => {
                let name = match rest.split_once('=') {
                    Some((name, value)) => {
                        self.inline = Some((name.to_owned(), value.to_owned()));
                        name
                    }
                    None => rest,
                };
                Ok(Some(Arg::Long(name.to_owned())))
            }
            None => Err(CliError::usage(format!("unknown option {item:?}"))),
        }
    }

    /// The value of option `--name`: its `=value`, or else the next item. An item that looks
    /// like an option (`-x`, `--x`) is not taken as a value: the value is then missing.
    pub fn value(&mut self, name: &str) -> Result<String, CliError> {
        if let Some((_, value)) = self.inline.take() {
            return Ok(value);
        }
        match self.items.as_slice().first() {
            Some(next) if self.positional_only || next == "-" || !next.starts_with('-') => {
                Ok(self.items.next().unwrap_or_default())
            }
            _ => Err(CliError::usage(format!("option --{name} needs a value"))),
        }
    }

    /// The value of option `--name` parsed as `T` (a number, a metric, a mode...).
    pub fn parsed<T: FromStr>(&mut self, name: &str, expected: &str) -> Result<T, CliError> {
        let value = self.value(name)?;
        value.trim().parse().map_err(|_| {
            CliError::usage(format!(
                "invalid value {value:?} for --{name} (expected {expected})"
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(items: &[&str]) -> ArgReader {
        ArgReader::new(items.iter().map(OsString::from)).unwrap()
    }

    #[test]
    fn reads_options_values_and_positionals() {
        let mut r = reader(&["FILE", "--limit", "10", "--metric=utf16", "-", "--", "--x"]);
        assert_eq!(r.next_arg().unwrap(), Some(Arg::Positional("FILE".into())));
        assert_eq!(r.next_arg().unwrap(), Some(Arg::Long("limit".into())));
        assert_eq!(r.parsed::<usize>("limit", "a number").unwrap(), 10);
        assert_eq!(r.next_arg().unwrap(), Some(Arg::Long("metric".into())));
        assert_eq!(r.value("metric").unwrap(), "utf16");
        assert_eq!(r.next_arg().unwrap(), Some(Arg::Positional("-".into())));
        assert_eq!(r.next_arg().unwrap(), Some(Arg::Positional("--x".into())));
        assert_eq!(r.next_arg().unwrap(), None);
    }

    #[test]
    fn missing_and_bad_values_are_usage_errors() {
        let mut r = reader(&["--limit"]);
        r.next_arg().unwrap();
        assert!(
            r.value("limit")
                .unwrap_err()
                .message
                .contains("needs a value")
        );

        let mut r = reader(&["--limit", "--max", "3"]);
        r.next_arg().unwrap();
        assert!(r.value("limit").is_err());

        let mut r = reader(&["--limit", "ten"]);
        r.next_arg().unwrap();
        let err = r.parsed::<usize>("limit", "a number").unwrap_err();
        assert!(err.message.contains("\"ten\""), "{}", err.message);

        let mut r = reader(&["--flag=yes", "x"]);
        r.next_arg().unwrap();
        let err = r.next_arg().unwrap_err();
        assert!(
            err.message.contains("--flag takes no value"),
            "{}",
            err.message
        );

        let mut r = reader(&["-x"]);
        assert!(r.next_arg().is_err());
    }
}
