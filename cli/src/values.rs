//! Parsers for option values: whole numbers within documented bounds, and names from a fixed
//! list. Each refusal names the accepted range or the accepted names, so `--min -5` says what
//! a valid value looks like instead of that a value is missing.

use std::ffi::OsStr;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::error::ErrorKind;
use replystream::{
    BreakMode, BreakPreference, ChannelProfile, ChunkMode, Format, HumanDelay, LengthMetric,
    PreviewMode, PreviewTransport, ReasoningMode, SplitMode, TableMode,
};

/// The largest size option accepted, in the metric's units (limits, chunk and coalesce
/// sizes, line caps, delta sizes): a million units is far beyond any chat message, and
/// larger values are taken for a typo.
pub(crate) const MAX_UNITS: u64 = 1_000_000;

/// The longest time option accepted, in ms: one day. A host that waits longer than that for
/// an ack, or a model that pauses longer, is a configuration mistake.
pub(crate) const MAX_MS: u64 = 86_400_000;

/// The smallest text limit of each metric, as the library sets it
/// ([`LengthMetric::min_limit`]): "24 chars, 29 utf16, 49 bytes or 15 graphemes". The help of
/// every limit option states it from here, so it cannot drift from what is refused.
pub(crate) fn min_limits() -> String {
    let each: Vec<String> = [
        LengthMetric::Chars,
        LengthMetric::Utf16,
        LengthMetric::Bytes,
        LengthMetric::Graphemes,
    ]
    .iter()
    .map(|m| format!("{} {}", m.min_limit(), m.name()))
    .collect();
    let (last, rest) = each.split_last().expect("four metrics");
    format!("{} or {last}", rest.join(", "))
}

/// The smallest value a limit option's parser accepts: the smallest limit of any metric
/// (the metric's own minimum is checked once the metric is known, by the library).
pub(crate) const MIN_LIMIT_ANY_METRIC: u64 = replystream::MIN_TEXT_LIMIT as u64;

/// Parses `text` as a whole number in `min..=max`; the error says why not and what is
/// accepted.
fn whole_number(text: &str, min: u64, max: u64) -> Result<u64, String> {
    let text = text.trim();
    let expected = format!("expected a whole number from {min} to {max}");
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if text.strip_prefix('-').is_some_and(digits) {
        return Err(format!("negative numbers are not allowed; {expected}"));
    }
    if !digits(text) {
        return Err(format!("not a whole number; {expected}"));
    }
    match text.parse::<u64>() {
        Ok(value) if (min..=max).contains(&value) => Ok(value),
        // Only digits are left, so a parse error is an overflow.
        _ => Err(format!("out of range; {expected}")),
    }
}

/// A count of units (or characters, or lines) in `min..=max`.
pub(crate) fn units(
    min: u64,
    max: u64,
) -> impl Fn(&str) -> Result<usize, String> + Clone + Send + Sync + 'static {
    move |text| {
        let value = whole_number(text, min, max)?;
        usize::try_from(value).map_err(|_| format!("{value} does not fit this machine's usize"))
    }
}

/// A whole number in `min..=max` (a rate, a time).
pub(crate) fn number(
    min: u64,
    max: u64,
) -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync + 'static {
    move |text| whole_number(text, min, max)
}

/// A time in ms in `0..=max`.
pub(crate) fn millis(
    max: u64,
) -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync + 'static {
    number(0, max)
}

/// Any whole number that fits 64 bits (a seed).
pub(crate) fn any_u64(text: &str) -> Result<u64, String> {
    whole_number(text, 0, u64::MAX)
}

/// A line cap: a number of lines in `min..=MAX_UNITS`, or `none` for no cap.
pub(crate) fn line_cap(min: u64) -> impl Fn(&str) -> Result<LineCap, String> + Clone + Send + Sync {
    move |text| {
        if text.trim().eq_ignore_ascii_case("none") {
            return Ok(LineCap(None));
        }
        whole_number(text, min, MAX_UNITS)
            .map(|n| LineCap(usize::try_from(n).ok()))
            .map_err(|e| format!("{e}, or none"))
    }
}

/// A channel, account or agent id: not empty, no whitespace, not starting with `-` (which
/// would read as an option).
pub(crate) fn identifier(text: &str) -> Result<String, String> {
    if text.is_empty() || text.starts_with('-') || text.chars().any(char::is_whitespace) {
        return Err("expected a name without spaces that does not start with '-'".to_owned());
    }
    Ok(text.to_owned())
}

/// A path to a file that must not be taken for an option (`./-file` works).
pub(crate) fn path(text: &str) -> Result<String, String> {
    if text.is_empty() || text.starts_with('-') {
        return Err(
            "expected a path (write ./-name for a file whose name starts with '-')".to_owned(),
        );
    }
    Ok(text.to_owned())
}

/// The value of a line-cap option: `None` removes the channel's cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LineCap(pub Option<usize>);

/// `--human-delay`: `off`, `natural`, or a custom range `MIN-MAX` in ms (also written
/// `custom:MIN-MAX`), each bound at most [`HumanDelay::CUSTOM_LIMIT_MS`] and `MIN <= MAX`.
pub(crate) fn human_delay(text: &str) -> Result<HumanDelay, String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("off") {
        return Ok(HumanDelay::Off);
    }
    if text.eq_ignore_ascii_case("natural") {
        return Ok(HumanDelay::Natural);
    }
    let limit = HumanDelay::CUSTOM_LIMIT_MS;
    let expected = format!(
        "expected off, natural, or MIN-MAX in ms with MIN <= MAX <= {limit} (e.g. 500-1500)"
    );
    let range = text.strip_prefix("custom:").unwrap_or(text);
    let Some((min, max)) = range.split_once('-').filter(|(min, _)| !min.is_empty()) else {
        return Err(expected);
    };
    let bound = |name: &str, text: &str| match text.trim().parse::<u64>() {
        Ok(ms) if ms <= limit => Ok(ms),
        Ok(ms) => Err(format!("{name} {ms} is above {limit}; {expected}")),
        Err(_) => Err(format!("{name} {text:?} is not a whole number; {expected}")),
    };
    let (min_ms, max_ms) = (bound("MIN", min)?, bound("MAX", max)?);
    if min_ms > max_ms {
        return Err(format!("MIN {min_ms} is above MAX {max_ms}; {expected}"));
    }
    Ok(HumanDelay::Custom { min_ms, max_ms })
}

/// A value picked by name: `names` are the spellings the help lists, `parse` reads a name
/// (the library's own `from_name` where it has one, so the CLI accepts what the C ABI
/// accepts, aliases included).
#[derive(Clone, Copy)]
pub(crate) struct Named<T: 'static> {
    names: &'static [&'static str],
    parse: fn(&str) -> Option<T>,
}

impl<T: PartialEq> Named<T> {
    /// Reads `name` as the library does (case and surrounding spaces ignored).
    pub(crate) fn parse_name(&self, name: &str) -> Option<T> {
        (self.parse)(name)
    }

    /// The listed name that reads as `value`.
    pub(crate) fn name_of(&self, value: &T) -> Option<&'static str> {
        self.names
            .iter()
            .copied()
            .find(|name| (self.parse)(name).as_ref() == Some(value))
    }
}

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Named<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        if let Some(parsed) = value.to_str().and_then(self.parse) {
            return Ok(parsed);
        }
        // Not a name: the possible-values parser words the error and lists the names.
        PossibleValuesParser::new(self.names.iter().copied()).parse_ref(cmd, arg, value)?;
        Err(clap::Error::new(ErrorKind::InvalidValue).with_cmd(cmd))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            self.names.iter().map(|name| PossibleValue::new(*name)),
        ))
    }
}

/// `--metric`: how the channel counts length.
pub(crate) const METRICS: Named<LengthMetric> = Named {
    names: &["utf16", "chars", "bytes", "graphemes"],
    parse: LengthMetric::from_name,
};

/// `--break`: where the chunker prefers to cut.
pub(crate) const BREAK_PREFERENCES: Named<BreakPreference> = Named {
    names: &["paragraph", "newline", "sentence"],
    parse: |name| match name.trim().to_ascii_lowercase().as_str() {
        "paragraph" => Some(BreakPreference::Paragraph),
        "newline" => Some(BreakPreference::Newline),
        "sentence" => Some(BreakPreference::Sentence),
        _ => None,
    },
};

/// `--mode` of `split`: fill pieces to the limit, or split at every paragraph first.
pub(crate) const SPLIT_MODES: Named<SplitMode> = Named {
    names: &["length", "newline"],
    parse: |name| match name.trim().to_ascii_lowercase().as_str() {
        "length" => Some(SplitMode::Length),
        "newline" => Some(SplitMode::Newline),
        _ => None,
    },
};

/// `--chunk-mode`: length or paragraph chunking.
pub(crate) const CHUNK_MODES: Named<ChunkMode> = Named {
    names: &["length", "newline"],
    parse: ChunkMode::from_name,
};

/// `--break-mode`: when streamed blocks are emitted.
pub(crate) const BREAK_MODES: Named<BreakMode> = Named {
    names: &["text-end", "message-end"],
    parse: BreakMode::from_name,
};

/// `--reasoning`: what happens to the model's reasoning.
pub(crate) const REASONING_MODES: Named<ReasoningMode> = Named {
    names: &["off", "on", "stream"],
    parse: ReasoningMode::from_name,
};

/// `--preview`: live preview streaming (one message edited in place as the reply grows).
pub(crate) const PREVIEW_MODES: Named<PreviewMode> = Named {
    names: &["off", "partial", "block"],
    parse: PreviewMode::from_name,
};

/// `--format`: the format each message is posted in (SPEC §16).
pub(crate) const FORMATS: Named<Format> = Named {
    names: &[
        "markdown",
        "discord",
        "telegram-html",
        "telegram-entities",
        "slack-mrkdwn",
        "whatsapp",
        "plain",
    ],
    parse: Format::from_name,
};

/// `--table-mode`: how a format without tables shows one.
pub(crate) const TABLE_MODES: Named<TableMode> = Named {
    names: &["code", "bullets", "off", "native"],
    parse: TableMode::from_name,
};

/// `--preview-transport`: an edited message, or a draft bubble.
pub(crate) const PREVIEW_TRANSPORTS: Named<PreviewTransport> = Named {
    names: &["edit", "draft"],
    parse: PreviewTransport::from_name,
};

/// An on/off switch given as a value (`--block-streaming off`), so it can override a
/// channel's setting either way.
pub(crate) const SWITCH: Named<bool> = Named {
    names: &["on", "off"],
    parse: |name| match name.trim().to_ascii_lowercase().as_str() {
        "on" => Some(true),
        "off" => Some(false),
        _ => None,
    },
};

/// `--channel`: a channel profile by name.
pub(crate) const CHANNELS: Named<ChannelProfile> = Named {
    names: &ChannelProfile::NAMES,
    parse: ChannelProfile::by_name,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_numbers_within_bounds() {
        assert_eq!(whole_number("0", 0, 10), Ok(0));
        assert_eq!(whole_number(" 10 ", 0, 10), Ok(10));
        assert_eq!(whole_number("5", 5, 5), Ok(5));
        let cases = [
            ("-5", "negative"),
            ("-0", "negative"),
            ("11", "out of range"),
            ("4", "out of range"),
            ("18446744073709551616", "out of range"),
            ("12k", "not a whole number"),
            ("", "not a whole number"),
            ("-", "not a whole number"),
            ("+5", "not a whole number"),
            ("1.5", "not a whole number"),
        ];
        for (text, why) in cases {
            let err = whole_number(text, 5, 10).unwrap_err();
            assert!(err.starts_with(why), "{text:?}: {err}");
            assert!(err.ends_with("from 5 to 10"), "{text:?}: {err}");
        }
    }

    #[test]
    fn human_delay_forms() {
        assert_eq!(human_delay("off"), Ok(HumanDelay::Off));
        assert_eq!(human_delay("Natural"), Ok(HumanDelay::Natural));
        let custom = HumanDelay::Custom {
            min_ms: 500,
            max_ms: 1500,
        };
        assert_eq!(human_delay("500-1500"), Ok(custom));
        assert_eq!(human_delay("custom:500-1500"), Ok(custom));
        assert_eq!(
            human_delay("0-60000"),
            Ok(HumanDelay::Custom {
                min_ms: 0,
                max_ms: 60_000
            })
        );
        for bad in [
            "sometimes",
            "500",
            "-500",
            "500-",
            "1500-500",
            "0-60001",
            "a-b",
        ] {
            let err = human_delay(bad).unwrap_err();
            assert!(
                err.contains("expected off, natural, or MIN-MAX"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn line_caps() {
        assert_eq!(line_cap(3)("none"), Ok(LineCap(None)));
        assert_eq!(line_cap(3)("17"), Ok(LineCap(Some(17))));
        assert!(line_cap(3)("2").unwrap_err().ends_with("or none"));
    }
}
