//! The options `demo` and `replay` share: the channel, the seed, and every engine setting a
//! user may want to try. Defined once and flattened into both subcommands.
//!
//! The engine settings become one [`ConfigOverrides`] layer over the channel profile, resolved
//! with [`Config::resolve`], so the CLI applies exactly the library's layering, clamping and
//! validation. An option not given leaves the channel's value. With `--config FILE`, an
//! OpenClaw configuration supplies the layer between the profile and the options
//! (defaults → channel profile → the file's channel and account → the options given), and
//! what the file sets but cannot be applied is printed as warnings on stderr.

use clap::Args;
use replystream::openclaw::{OpenClawConfig, Selection};
use replystream::{
    BreakMode, BreakPreference, ChannelProfile, ChunkMode, Config, ConfigOverrides, Engine,
    HumanDelay, LengthMetric, MAX_IDLE_MS, MAX_PREVIEW_THROTTLE_MS, MIN_MAX_LINES, PreviewMode,
    ReasoningMode, ResolvedConfig,
};

use crate::values::{
    self, BREAK_MODES, BREAK_PREFERENCES, CHANNELS, CHUNK_MODES, FORMATS, LineCap, MAX_MS,
    MAX_UNITS, METRICS, PREVIEW_MODES, PREVIEW_TRANSPORTS, REASONING_MODES, SWITCH, TABLE_MODES,
};
use crate::{CliError, read_input};

/// The channel and the engine's settings.
#[derive(Args, Debug)]
pub(crate) struct EngineArgs {
    /// The channel profile whose limits and defaults apply [telegram, discord, slack, signal,
    /// whatsapp, imessage, googlechat, generic; with --config, any channel of the file]
    #[arg(long, value_name = "NAME", default_value = "generic",
          value_parser = values::identifier)]
    pub channel: String,

    /// Read the channel's settings from an OpenClaw configuration file (JSON5), between the
    /// channel profile and the options given here
    #[arg(long, value_name = "FILE", value_parser = values::path)]
    pub config: Option<String>,

    /// With --config: the channel account whose overrides apply [default: the file's
    /// defaultAccount, or its account named default]
    #[arg(long, value_name = "ID", requires = "config", value_parser = values::identifier)]
    pub account: Option<String>,

    /// With --config: the agent whose humanDelay, reasoningDefault and identity apply
    /// [default: the agent the file's bindings route the channel and account to, else the one
    /// marked default: true, else the first]
    #[arg(long, value_name = "ID", requires = "config", value_parser = values::identifier)]
    pub agent: Option<String>,

    /// Seed of the engine's random generator (human delays); same seed, same timeline
    #[arg(long, value_name = "S", default_value_t = 1, value_parser = values::any_u64)]
    pub seed: u64,

    #[command(flatten)]
    pub settings: EngineSettings,
}

/// Every engine setting the CLI exposes; each one not given keeps the channel's value.
#[derive(Args, Debug, Default)]
#[command(next_help_heading = "Engine settings (default: the channel's)")]
pub(crate) struct EngineSettings {
    // The help states the library's minimums (`values::min_limits`).
    #[arg(long, value_name = "N",
          help = format!("The longest message, in the metric's units [{}..=1000000; at least \
                          {}; generic 4000, discord 2000]", values::MIN_LIMIT_ANY_METRIC,
                          values::min_limits()),
          value_parser = values::units(values::MIN_LIMIT_ANY_METRIC, MAX_UNITS))]
    pub text_limit: Option<usize>,

    /// How length is counted [generic chars, telegram utf16]
    #[arg(long, value_name = "M", value_parser = METRICS)]
    pub metric: Option<LengthMetric>,

    /// At most N lines per message, or none [3..=1000000; discord 17, others none]
    #[arg(long, value_name = "N|none",
          value_parser = values::line_cap(MIN_MAX_LINES as u64))]
    pub max_lines: Option<LineCap>,

    /// No block before N units are buffered [0..=1000000; default 800; 0 counts as 1]
    #[arg(long, value_name = "N",
          value_parser = values::units(0, MAX_UNITS))]
    pub chunk_min: Option<usize>,

    /// No block longer than N units [0..=1000000; default 1200; raised to the minimum,
    /// lowered to the text limit]
    #[arg(long, value_name = "N",
          value_parser = values::units(0, MAX_UNITS))]
    pub chunk_max: Option<usize>,

    /// Where blocks are preferably cut; also how merged blocks are joined [default paragraph]
    #[arg(long = "break", value_name = "B", value_parser = BREAK_PREFERENCES)]
    pub break_preference: Option<BreakPreference>,

    /// Cut blocks by length, or send each paragraph as its own message [default length]
    #[arg(long, value_name = "MODE", value_parser = CHUNK_MODES)]
    pub chunk_mode: Option<ChunkMode>,

    /// Send blocks while the model writes, or only once its message ends [default text-end]
    #[arg(long, value_name = "MODE", value_parser = BREAK_MODES)]
    pub break_mode: Option<BreakMode>,

    /// Merge small blocks until N units [0..=1000000; default: the channel's, else the
    /// chunk minimum]
    #[arg(long, value_name = "N",
          value_parser = values::units(0, MAX_UNITS))]
    pub coalesce_min: Option<usize>,

    /// Never merge beyond N units [0..=1000000; default: the text limit]
    #[arg(long, value_name = "N",
          value_parser = values::units(0, MAX_UNITS))]
    pub coalesce_max: Option<usize>,

    /// Send merged blocks after MS of quiet; 0: no idle timer [0..=60000; default 1000]
    #[arg(long, value_name = "MS",
          value_parser = values::millis(MAX_IDLE_MS))]
    pub coalesce_idle_ms: Option<u64>,

    /// Pause between block messages: off, natural (800-2500 ms) or MIN-MAX in ms, each at
    /// most 60000 [default off]
    #[arg(long, value_name = "DELAY",
          value_parser = values::human_delay)]
    pub human_delay: Option<HumanDelay>,

    /// Hidden reasoning: dropped (off), sent as a block before the answer it belongs to (on),
    /// or streamed
    /// [default off]
    #[arg(long, value_name = "MODE", value_parser = REASONING_MODES)]
    pub reasoning: Option<ReasoningMode>,

    /// Give up on an unacknowledged message after MS; 0: never [0..=86400000; default 15000]
    #[arg(long, value_name = "MS",
          value_parser = values::millis(MAX_MS))]
    pub delivery_timeout_ms: Option<u64>,

    /// Send blocks while streaming (on), or everything once at the end (off) [default on]
    #[arg(long, value_name = "on|off", value_parser = SWITCH)]
    pub block_streaming: Option<bool>,

    /// A live preview: one message edited as the reply grows, showing the latest text
    /// (partial) or whole preview blocks (block); block streaming is then off [default off]
    #[arg(long, value_name = "MODE", value_parser = PREVIEW_MODES)]
    pub preview: Option<PreviewMode>,

    /// How the preview reaches the chat: an edited message, or a draft bubble (the final is
    /// then a new message) [default edit]
    #[arg(long, value_name = "T", value_parser = PREVIEW_TRANSPORTS)]
    pub preview_transport: Option<replystream::PreviewTransport>,

    /// At most one preview update per MS [0..=60000; default 1000; raised to at least 250]
    #[arg(long, value_name = "MS",
          value_parser = values::millis(MAX_PREVIEW_THROTTLE_MS))]
    pub throttle_ms: Option<u64>,

    /// An absolute directory inside which a local path the model writes (MEDIA: /dir/a.png)
    /// is sent as media; repeatable. Other local paths are removed from the text [default:
    /// none, so no local path is media]
    #[arg(long = "media-root", value_name = "DIR", value_parser = values::path)]
    pub media_roots: Vec<String>,

    /// Media URLs the model writes must be https://; http:// ones stay in the text
    /// [default: http:// is media too]
    #[arg(long)]
    pub no_http: bool,

    /// The format messages are posted in [markdown, discord, telegram-html,
    /// telegram-entities, slack-mrkdwn, whatsapp, plain; default: the channel's]
    #[arg(long, value_name = "NAME", value_parser = FORMATS)]
    pub format: Option<replystream::Format>,

    /// How a format without tables shows one [code, bullets, off, native (markdown only);
    /// default code, markdown native]
    #[arg(long, value_name = "MODE", value_parser = TABLE_MODES)]
    pub table_mode: Option<replystream::TableMode>,
}

impl EngineSettings {
    /// The options given, as one override layer.
    pub(crate) fn overrides(&self) -> ConfigOverrides {
        ConfigOverrides {
            text_limit: self.text_limit,
            metric: self.metric,
            max_lines: self.max_lines.map(|LineCap(cap)| cap),
            chunk_min: self.chunk_min,
            chunk_max: self.chunk_max,
            break_preference: self.break_preference,
            chunk_mode: self.chunk_mode,
            break_mode: self.break_mode,
            coalesce_min: self.coalesce_min.map(Some),
            coalesce_max: self.coalesce_max.map(Some),
            coalesce_idle_ms: self.coalesce_idle_ms,
            human_delay: self.human_delay,
            reasoning: self.reasoning,
            delivery_timeout_ms: self.delivery_timeout_ms,
            block_streaming: self.block_streaming,
            preview: self.preview,
            preview_transport: self.preview_transport,
            preview_throttle_ms: self.throttle_ms,
            media_roots: (!self.media_roots.is_empty()).then(|| self.media_roots.clone()),
            media_allow_http: self.no_http.then_some(false),
            format: self.format,
            table_mode: self.table_mode.map(Some),
            ..ConfigOverrides::default()
        }
    }
}

impl EngineArgs {
    /// The configuration: library defaults, the channel profile, the OpenClaw file's layer
    /// (with `--config`), then the options given. A setting the library refuses (e.g. a text
    /// limit too small for the metric) or a file it cannot read is a usage error, reported
    /// before any input is read; keys of the file not applied are printed as warnings.
    pub(crate) fn resolve(&self) -> Result<ResolvedConfig, CliError> {
        let explicit = self.settings.overrides();
        let refused = |err: replystream::Error| CliError::usage(err.to_string());
        let Some(path) = &self.config else {
            let profile = CHANNELS.parse_name(&self.channel).ok_or_else(|| {
                CliError::usage(format!(
                    "invalid value '{}' for '--channel <NAME>' (possible values: {}; with \
                     --config, any channel of the file)",
                    self.channel,
                    ChannelProfile::NAMES.join(", ")
                ))
            })?;
            return Config::resolve(&profile, &[&explicit]).map_err(refused);
        };
        let text = read_input(path)?;
        let file = OpenClawConfig::parse(&text)
            .map_err(|err| CliError::usage(format!("{path}: {err}")))?;
        let mut selection = Selection::channel(&self.channel);
        if let Some(account) = &self.account {
            selection = selection.account(account);
        }
        if let Some(agent) = &self.agent {
            selection = selection.agent(agent);
        }
        let settings = file
            .settings(&selection)
            .map_err(|err| CliError::usage(format!("{path}: {err}")))?;
        for warning in &settings.warnings {
            eprintln!("replystream: warning: {path}: {warning}");
        }
        settings.resolve(&explicit).map_err(refused)
    }

    /// How the header names the channel: `telegram`, or `telegram (account alerts, from
    /// FILE)` with `--config`.
    pub(crate) fn channel_label(&self) -> String {
        match &self.config {
            None => self.channel.clone(),
            Some(path) => match &self.account {
                Some(account) => format!("{} (account {account}, from {path})", self.channel),
                None => format!("{} (from {path})", self.channel),
            },
        }
    }

    /// A fresh engine with the resolved configuration and the seed.
    pub(crate) fn engine(&self, resolved: &ResolvedConfig) -> Result<Engine, CliError> {
        Engine::new(resolved.config().clone(), self.seed)
            .map_err(|err| CliError::usage(err.to_string()))
    }
}

/// The resolved settings in one line, for `demo`'s header: what the timeline was made with.
pub(crate) fn describe(resolved: &ResolvedConfig) -> String {
    let c = resolved.config();
    let mut s = format!("limit {} {}", c.text_limit, c.metric.name());
    if let Some(lines) = c.max_lines {
        s.push_str(&format!(", {lines} lines"));
    }
    s.push_str(&format!(
        "; chunks {}-{} {}",
        c.chunk_min,
        c.chunk_max,
        BREAK_PREFERENCES
            .name_of(&c.break_preference)
            .unwrap_or("?")
    ));
    if c.chunk_mode != ChunkMode::Length {
        s.push_str(&format!(", {} mode", c.chunk_mode.name()));
    }
    if let (Some(min), Some(max)) = (c.coalesce_min, c.coalesce_max) {
        s.push_str(&format!(
            "; coalesce {min}-{max}, idle {} ms",
            c.coalesce_idle_ms
        ));
    }
    if c.break_mode != BreakMode::TextEnd {
        s.push_str(&format!("; break mode {}", c.break_mode.name()));
    }
    if !c.block_streaming {
        s.push_str("; block streaming off");
    }
    if c.preview != PreviewMode::Off {
        s.push_str(&format!(
            "; preview {} ({}, limit {}, throttle {} ms)",
            c.preview.name(),
            c.preview_transport.name(),
            c.preview_limit,
            c.preview_throttle_ms
        ));
    }
    if c.reasoning != ReasoningMode::Off {
        s.push_str(&format!("; reasoning {}", c.reasoning.name()));
    }
    if c.format != replystream::Format::Markdown {
        s.push_str(&format!("; format {}", c.format.name()));
    }
    s.push_str(&format!(
        "; human delay {}",
        human_delay_name(c.human_delay)
    ));
    if !c.media.roots.is_empty() {
        s.push_str(&format!("; media roots {}", c.media.roots.join(", ")));
    }
    if !c.media.allow_http {
        s.push_str("; https media only");
    }
    s
}

fn human_delay_name(delay: HumanDelay) -> String {
    match delay {
        HumanDelay::Custom { min_ms, max_ms } => format!("{min_ms}-{max_ms} ms"),
        other => other.name().to_owned(),
    }
}
