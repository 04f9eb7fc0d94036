//! Reading an OpenClaw configuration file (cargo feature `openclaw`).
//!
//! OpenClaw keeps its settings in one JSON5 file (`~/.openclaw/openclaw.json`). This module
//! reads the streaming part of it and turns it into a [`ConfigOverrides`] layer for one
//! channel and account, so a reply streams through replystream the way it is set up for
//! OpenClaw:
//!
//! ```
//! use replystream::openclaw::{OpenClawConfig, Selection};
//! use replystream::{ConfigOverrides, Engine};
//!
//! let file = r#"{
//!   // written by hand: comments, trailing commas and bare keys are fine
//!   agents: { defaults: {
//!     blockStreamingChunk: { minChars: 200, maxChars: 900, breakPreference: 'newline' },
//!     humanDelay: { mode: 'natural' },
//!   } },
//!   channels: { discord: {
//!     textChunkLimit: 1800,
//!     accounts: { ops: { maxLinesPerMessage: 30, streaming: { mode: 'off' } } },
//!   } },
//! }"#;
//! let openclaw = OpenClawConfig::parse(file).expect("valid JSON5");
//! let settings = openclaw.settings(&Selection::channel("discord").account("ops")).unwrap();
//! assert!(settings.warnings.is_empty());
//!
//! let resolved = settings.resolve(&ConfigOverrides::default()).unwrap();
//! let config = resolved.config();
//! assert_eq!((config.text_limit, config.max_lines), (1800, Some(30)));
//! assert_eq!((config.chunk_min, config.chunk_max), (200, 900));
//! let engine = Engine::new(config.clone(), 7).unwrap();
//! # let _ = engine;
//! ```
//!
//! # What is read, and how it layers
//!
//! Resolution follows the library's order (library defaults → channel profile → per-account
//! overrides → explicit overrides). The file supplies the per-account layer, itself built
//! from OpenClaw's own levels, each overriding the one before:
//!
//! 1. `agents.defaults`: `blockStreamingDefault` (`"on"`/`"off"`), `blockStreamingBreak`
//!    (`"text_end"`/`"message_end"`), `blockStreamingChunk` (`{ minChars, maxChars,
//!    breakPreference }`), `blockStreamingCoalesce` (`{ minChars, maxChars, idleMs }`),
//!    `humanDelay` (`{ mode: "off"|"natural"|"custom", minMs, maxMs }`; an unset custom bound
//!    falls back to the natural range, 800 or 2500 ms), `reasoningDefault`
//!    (`"off"`/`"on"`/`"stream"`), and for the response prefix `model` (a string or
//!    `{ primary }`) and `thinkingDefault`;
//! 2. the agent (`agents.list[]` with that `id`, or `agents.entries.<id>`, the keyed form
//!    newer OpenClaw versions write; with both, OpenClaw reads `entries` alone):
//!    `humanDelay`, `reasoningDefault`, `model`, `thinkingDefault`, `identity.name`. Without
//!    an agent named in the [`Selection`], the agent is the one OpenClaw routes the channel
//!    and account to: a `bindings[]` rule for the account, else one for the whole channel
//!    (`accountId: "*"`), else the agent marked `default: true`, else the first agent
//!    (bindings that match a peer, guild, team or roles depend on the conversation and are
//!    reported, not applied; see [`OpenClawSettings::agent`]);
//! 3. the channel, `channels.<channel>`: `textChunkLimit`, `maxLinesPerMessage`,
//!    `streaming.{mode, chunkMode, block.enabled, block.coalesce, preview.chunk}`, and
//!    `mediaLocalRoots` (see below), `markdown.tables` (`off`, `bullets`, `code`; `block` is
//!    read as `code`);
//! 4. the account, `channels.<channel>.accounts.<id>`: the same keys. Without an account
//!    in the [`Selection`], `defaultAccount` (or an account named `default`) is used.
//!
//! The response prefix cascades the other way, the most specific first: the account's
//! `responsePrefix`, the channel's, then `messages.responsePrefix`. `""` disables it and
//! stops the cascade; `"auto"` is `[{identity.name}]`.
//!
//! OpenClaw's older flat channel keys are read too, with a [`WarningKind::Legacy`] warning,
//! when the nested key they became is not set at the same level: `streamMode` (also Slack's
//! `replace`/`append`/`status_final`), a boolean or string `streaming`, `chunkMode`,
//! `blockStreaming`, `blockStreamingCoalesce` and `draftChunk`.
//!
//! Preview modes map to [`Config::preview`](crate::Config::preview) (`off`, `partial`,
//! `block`); OpenClaw's `progress` mode (a tool-status draft with the answer sent normally)
//! has no counterpart and reads as `off`, with a warning. Preview chunk sizes map to
//! `preview_block_min`/`preview_block_max`.
//!
//! `mediaLocalRoots`, the directories some OpenClaw channels (and channel plugins) allow
//! outbound local media from, become [`MediaPolicy::roots`](crate::MediaPolicy::roots); an
//! account's list replaces its channel's. Only absolute entries apply: a `~/…` or relative
//! entry (which OpenClaw expands against the home or state directory) is skipped with a
//! warning, since this reader does no I/O and reads no environment. OpenClaw's built-in
//! roots (its state, workspace and temp directories) are not implied: list them to allow
//! them. OpenClaw has no setting that refuses `http://` media; that stays the library's
//! default (allowed) unless overridden.
//!
//! Keys the file does not set keep the library's values. One difference matters:
//! OpenClaw's `blockStreamingDefault` is `"off"` when unset, replystream streams blocks by
//! default; set the key to get OpenClaw's behaviour.
//!
//! # Warnings and errors
//!
//! A value of the wrong type or out of range is an [`OpenClawError`] naming its JSON path
//! and line: nothing is guessed. Everything else that is not applied is reported as a
//! [`ConfigWarning`] with its path: keys unknown inside the objects whose shape OpenClaw
//! fixes (`blockStreamingChunk`, `humanDelay`, `streaming`, …), near misses of the keys read
//! here anywhere on the way (`textChunklimit`, "did you mean `textChunkLimit`?"), known
//! OpenClaw keys with no counterpart (`streaming.progress`, `preview.toolProgress`), legacy
//! keys, repeated keys, `$include` (not followed: inline the included file), and a channel
//! with no built-in profile (the generic one is used). The rest of an OpenClaw file (models,
//! tools, gateway, other channels) is not this library's business and is not reported.

mod agents;
mod json5;

use std::fmt;

use self::json5::{Kind, Member, Pos, Value};
use crate::stage::directives::paths::starts_with_drive;
use crate::{
    BreakMode, BreakPreference, ChannelProfile, ChunkMode, Config, ConfigOverrides, Error,
    HumanDelay, MIN_MAX_LINES, MIN_TEXT_LIMIT, MediaPolicy, PreviewMode, ReasoningMode,
    ResolvedConfig, TableMode,
};

/// A parsed OpenClaw configuration file. See the module docs.
#[derive(Clone, Debug)]
pub struct OpenClawConfig {
    root: Value,
}

/// Which channel, account and agent to read the settings for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    channel: String,
    account: Option<String>,
    agent: Option<String>,
}

impl Selection {
    /// The settings of `channel` (an OpenClaw channel id: `telegram`, `discord`, …).
    pub fn channel(channel: &str) -> Selection {
        Selection {
            channel: channel.to_owned(),
            ..Selection::default()
        }
    }

    /// For the account `id` of the channel (`channels.<channel>.accounts.<id>`).
    pub fn account(mut self, id: &str) -> Selection {
        self.account = Some(id.to_owned());
        self
    }

    /// For the agent `id` (`agents.list[]` or `agents.entries.<id>`), whatever the bindings
    /// and the `default` mark say.
    pub fn agent(mut self, id: &str) -> Selection {
        self.agent = Some(id.to_owned());
        self
    }
}

/// The settings read for one channel and account: the channel's profile and one override
/// layer, plus what was not applied.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct OpenClawSettings {
    /// The built-in profile of the channel (generic for a channel without one).
    pub profile: ChannelProfile,
    /// The agent whose settings apply: the one named in the [`Selection`], else the one
    /// OpenClaw routes the channel and account to (a binding, else the agent marked
    /// `default: true`, else the first); `None` when the file configures no agent.
    pub agent: Option<String>,
    /// What the file sets, as one layer over the profile.
    pub overrides: ConfigOverrides,
    /// Keys found but not applied, each with its JSON path.
    pub warnings: Vec<ConfigWarning>,
}

impl OpenClawSettings {
    /// The configuration: library defaults, the profile, then the file's settings.
    pub fn config(&self) -> Config {
        let mut config = Config::for_channel(&self.profile);
        config.apply(&self.overrides);
        config
    }

    /// Resolves the configuration with `explicit` as the last layer (the SPEC §9 order:
    /// defaults → channel profile → the file → explicit overrides), then clamps and checks
    /// it like [`Config::resolve`].
    pub fn resolve(&self, explicit: &ConfigOverrides) -> Result<ResolvedConfig, Error> {
        Config::resolve(&self.profile, &[&self.overrides, explicit])
    }
}

/// Why a key was not applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WarningKind {
    /// Not a key OpenClaw knows there (usually a typo; the message may suggest the key meant).
    UnknownKey,
    /// A known OpenClaw key with no counterpart here, or one overridden in the same object.
    Ignored,
    /// A legacy key OpenClaw no longer reads (`openclaw doctor --fix` rewrites it); applied
    /// here because its replacement is not set.
    Legacy,
    /// About the channel or account selected: no built-in profile, not in the file, no
    /// default account.
    Selection,
}

/// A key of the file that was not applied as written.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConfigWarning {
    /// Where, as a JSON path: `channels.telegram.streaming.progress`.
    pub path: String,
    /// The line of the key in the file (1-based; 0 when the key is absent).
    pub line: usize,
    /// Why it was not applied.
    pub kind: WarningKind,
    /// What happened, in a sentence.
    pub message: String,
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{} (line {}): {}", self.path, self.line, self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// A file that cannot be read: JSON5 syntax, or a value of the wrong type or range.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct OpenClawError {
    /// The JSON path of the bad value, if the syntax was fine.
    pub path: Option<String>,
    /// The line of the problem (1-based).
    pub line: usize,
    /// The column of the problem (1-based, in characters).
    pub column: usize,
    /// What is wrong and what is expected.
    pub message: String,
}

impl fmt::Display for OpenClawError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}: ", self.line, self.column)?;
        if let Some(path) = &self.path {
            write!(f, "{path}: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for OpenClawError {}

fn error_at(path: &str, pos: Pos, message: impl Into<String>) -> OpenClawError {
    OpenClawError {
        path: Some(path.to_owned()),
        line: pos.line,
        column: pos.column,
        message: message.into(),
    }
}

impl OpenClawConfig {
    /// Parses the text of an OpenClaw configuration file (JSON5). The top level must be an
    /// object.
    pub fn parse(text: &str) -> Result<OpenClawConfig, OpenClawError> {
        let root = json5::parse(text).map_err(|e| OpenClawError {
            path: None,
            line: e.pos.line,
            column: e.pos.column,
            message: e.message,
        })?;
        if root.members().is_none() {
            return Err(OpenClawError {
                path: None,
                line: root.pos.line,
                column: root.pos.column,
                message: format!(
                    "an OpenClaw configuration is an object ({{ ... }}), not {}",
                    root.describe()
                ),
            });
        }
        Ok(OpenClawConfig { root })
    }

    /// The channel ids configured under `channels`, in file order.
    pub fn channels(&self) -> Vec<&str> {
        self.root
            .get("channels")
            .and_then(Value::members)
            .map(|m| keys(m).filter(|k| *k != "defaults").collect())
            .unwrap_or_default()
    }

    /// The account ids configured for `channel`, in file order.
    pub fn accounts(&self, channel: &str) -> Vec<&str> {
        self.channel_section(channel)
            .and_then(|c| c.get("accounts"))
            .and_then(Value::members)
            .map(|m| keys(m).collect())
            .unwrap_or_default()
    }

    fn channel_section(&self, channel: &str) -> Option<&Value> {
        let channels = self.root.get("channels")?;
        channels.get(channel).or_else(|| {
            channels
                .members()?
                .iter()
                .rev()
                .find(|m| m.key.eq_ignore_ascii_case(channel))
                .map(|m| &m.value)
        })
    }

    /// Reads the settings for `selection`. See the module docs for what is read and how
    /// the levels layer.
    ///
    /// Errors: a value of the wrong type or range; an account or agent named in `selection`
    /// that the file does not have.
    pub fn settings(&self, selection: &Selection) -> Result<OpenClawSettings, OpenClawError> {
        let mut r = Reader::default();
        let channel = selection.channel.trim();
        let profile = match ChannelProfile::by_name(channel) {
            Some(p) => p,
            None => {
                r.warn(
                    &format!("channels.{channel}"),
                    Pos::default(),
                    WarningKind::Selection,
                    format!(
                        "no built-in profile for channel `{channel}`; using the generic one \
                         (4000 characters) under the file's settings"
                    ),
                );
                ChannelProfile::GENERIC
            }
        };
        r.root(&self.root)?;
        let channel_path = format!("channels.{channel}");
        let section = self.channel_section(channel);
        // The account first, since bindings route by it; what it reports keeps its place
        // after the channel's own keys.
        let reported = r.warnings.len();
        let account = match section {
            Some(section) => {
                object_of(section, &channel_path)?;
                r.account(section, &channel_path, selection.account.as_deref())?
            }
            None => None,
        };
        let account_warnings = r.warnings.split_off(reported);
        let route = agents::Route {
            channel,
            account: match (&selection.account, &account) {
                (Some(named), _) => named,
                (None, Some((id, ..))) => id,
                (None, None) => "default",
            },
        };
        let agents = self.root.get("agents");
        if let Some(defaults) = agents.and_then(|a| a.get("defaults")) {
            r.agent_level(defaults, "agents.defaults", true)?;
        }
        if let (None, Some(id)) = (agents, &selection.agent) {
            return Err(error_at(
                "agents",
                Pos::default(),
                format!("no agent `{id}`: the file configures no agents"),
            ));
        }
        let agent = r.agent_entry(&self.root, agents, selection.agent.as_deref(), &route)?;
        let mut prefixes: Vec<(String, &Value)> = Vec::new();
        match section {
            None => {
                r.warn(
                    &channel_path,
                    Pos::default(),
                    WarningKind::Selection,
                    "not configured in the file; only agents.defaults and messages apply"
                        .to_owned(),
                );
                if let Some(id) = &selection.account
                    && id != "default"
                {
                    return Err(error_at(
                        &channel_path,
                        Pos::default(),
                        format!("no account `{id}`: the channel is not configured"),
                    ));
                }
            }
            Some(section) => {
                r.channel_level(section, &channel_path, true)?;
                r.warnings.extend(account_warnings);
                if let Some((_, account_path, account)) = account {
                    r.channel_level(account, &account_path, false)?;
                    if let Some(p) = account.get("responsePrefix") {
                        prefixes.push((format!("{account_path}.responsePrefix"), p));
                    }
                }
                if let Some(p) = section.get("responsePrefix") {
                    prefixes.push((format!("{channel_path}.responsePrefix"), p));
                }
            }
        }
        if let Some(messages) = self.root.get("messages") {
            object_of(messages, "messages")?;
            r.check_keys(messages, "messages", &["responsePrefix"], &[], false);
            if let Some(p) = messages.get("responsePrefix") {
                prefixes.push(("messages.responsePrefix".to_owned(), p));
            }
        }
        if let Some((path, value)) = prefixes.first() {
            r.response_prefix(value, path)?;
        }
        Ok(OpenClawSettings {
            profile,
            agent,
            overrides: r.overrides,
            warnings: r.warnings,
        })
    }
}

fn keys(members: &[Member]) -> impl Iterator<Item = &str> {
    members.iter().map(|m| m.key.as_str())
}

/// The members of an object, or an error naming what the value is instead.
fn object_of<'v>(value: &'v Value, path: &str) -> Result<&'v [Member], OpenClawError> {
    value.members().ok_or_else(|| {
        error_at(
            path,
            value.pos,
            format!("expected an object, got {}", value.describe()),
        )
    })
}

/// The streaming keys of a channel or account object.
const CHANNEL_KEYS: &[&str] = &[
    "textChunkLimit",
    "maxLinesPerMessage",
    "responsePrefix",
    "streaming",
    "accounts",
    "defaultAccount",
    // Legacy flat spellings, still read.
    "streamMode",
    "chunkMode",
    "blockStreaming",
    "blockStreamingCoalesce",
    "draftChunk",
    "mediaLocalRoots",
    "markdown",
];

const AGENT_DEFAULT_KEYS: &[&str] = &[
    "blockStreamingDefault",
    "blockStreamingBreak",
    "blockStreamingChunk",
    "blockStreamingCoalesce",
    "humanDelay",
    "reasoningDefault",
    "thinkingDefault",
    "model",
];

const AGENT_KEYS: &[&str] = &[
    "id",
    "default",
    "humanDelay",
    "reasoningDefault",
    "thinkingDefault",
    "model",
    "identity",
];

/// Collects the override layer and the warnings while walking the file.
#[derive(Default)]
struct Reader {
    overrides: ConfigOverrides,
    warnings: Vec<ConfigWarning>,
}

impl Reader {
    fn warn(&mut self, path: &str, pos: Pos, kind: WarningKind, message: String) {
        self.warnings.push(ConfigWarning {
            path: path.to_owned(),
            line: pos.line,
            kind,
            message,
        });
    }

    /// Reports the keys of `object` (at `path`) that are not applied: `$include`, repeated
    /// keys, `ignored` ones (with why), and unknown ones — every one if `strict` (an object
    /// whose shape OpenClaw fixes), else only near misses of `known` keys.
    fn check_keys(
        &mut self,
        object: &Value,
        path: &str,
        known: &[&str],
        ignored: &[(&str, &str)],
        strict: bool,
    ) {
        let Some(members) = object.members() else {
            return;
        };
        for (i, m) in members.iter().enumerate() {
            let at = if path.is_empty() {
                m.key.clone()
            } else {
                format!("{path}.{}", m.key)
            };
            if members[i + 1..].iter().any(|later| later.key == m.key) {
                self.warn(
                    &at,
                    m.key_pos,
                    WarningKind::Ignored,
                    "repeated key: the last value counts".to_owned(),
                );
            }
            if known.contains(&m.key.as_str()) {
                continue;
            }
            if m.key == "$include" {
                self.warn(
                    &at,
                    m.key_pos,
                    WarningKind::Ignored,
                    "includes are not followed: put the included settings in this file".to_owned(),
                );
                continue;
            }
            if let Some((_, why)) = ignored.iter().find(|(k, _)| *k == m.key) {
                self.warn(&at, m.key_pos, WarningKind::Ignored, (*why).to_owned());
                continue;
            }
            let guess = known.iter().find(|k| near_miss(&m.key, k));
            match (guess, strict) {
                (Some(k), _) => self.warn(
                    &at,
                    m.key_pos,
                    WarningKind::UnknownKey,
                    format!("unknown key; did you mean `{k}`?"),
                ),
                (None, true) => self.warn(
                    &at,
                    m.key_pos,
                    WarningKind::UnknownKey,
                    format!("unknown key (known here: {})", known.join(", ")),
                ),
                (None, false) => {}
            }
        }
    }

    fn root(&mut self, root: &Value) -> Result<(), OpenClawError> {
        self.check_keys(
            root,
            "",
            &["agents", "bindings", "channels", "messages"],
            &[],
            false,
        );
        if let Some(agents) = root.get("agents") {
            object_of(agents, "agents")?;
            self.check_keys(
                agents,
                "agents",
                &["defaults", "entries", "list"],
                &[],
                false,
            );
        }
        if let Some(channels) = root.get("channels") {
            object_of(channels, "channels")?;
            self.check_keys(channels, "channels", &[], &[], false);
        }
        Ok(())
    }

    /// `agents.defaults` (`defaults`) or one agent's entry.
    fn agent_level(&mut self, v: &Value, path: &str, defaults: bool) -> Result<(), OpenClawError> {
        object_of(v, path)?;
        let known = if defaults {
            AGENT_DEFAULT_KEYS
        } else {
            AGENT_KEYS
        };
        self.check_keys(v, path, known, &[], false);
        let at = |key: &str| format!("{path}.{key}");
        if defaults {
            if let Some(x) = v.get("blockStreamingDefault") {
                let on = choice(
                    x,
                    &at("blockStreamingDefault"),
                    &[("on", true), ("off", false)],
                )?;
                self.overrides.block_streaming = Some(on);
            }
            if let Some(x) = v.get("blockStreamingBreak") {
                self.overrides.break_mode = Some(choice(
                    x,
                    &at("blockStreamingBreak"),
                    &[
                        ("text_end", BreakMode::TextEnd),
                        ("message_end", BreakMode::MessageEnd),
                    ],
                )?);
            }
            if let Some(x) = v.get("blockStreamingChunk") {
                let chunk = self.chunk(x, &at("blockStreamingChunk"), true)?;
                self.overrides.chunk_min = chunk.min.or(self.overrides.chunk_min);
                self.overrides.chunk_max = chunk.max.or(self.overrides.chunk_max);
                if chunk.preference.is_some() {
                    self.overrides.break_preference = chunk.preference;
                }
            }
            if let Some(x) = v.get("blockStreamingCoalesce") {
                self.coalesce(x, &at("blockStreamingCoalesce"))?;
            }
        }
        if let Some(x) = v.get("humanDelay") {
            self.human_delay(x, &at("humanDelay"))?;
        }
        if let Some(x) = v.get("reasoningDefault") {
            self.overrides.reasoning = Some(choice(
                x,
                &at("reasoningDefault"),
                &[
                    ("off", ReasoningMode::Off),
                    ("on", ReasoningMode::On),
                    ("stream", ReasoningMode::Stream),
                ],
            )?);
        }
        if let Some(x) = v.get("thinkingDefault") {
            self.overrides.thinking_level = Some(Some(text(x, &at("thinkingDefault"))?));
        }
        if let Some(x) = v.get("model") {
            let model = match &x.kind {
                Kind::Object(_) => match x.get("primary") {
                    Some(p) => Some(text(p, &at("model.primary"))?),
                    None => None,
                },
                _ => Some(text(x, &at("model"))?),
            };
            if model.is_some() {
                self.overrides.model = Some(model);
            }
        }
        if !defaults && let Some(identity) = v.get("identity") {
            object_of(identity, &at("identity"))?;
            if let Some(name) = identity.get("name") {
                self.overrides.identity_name = Some(Some(text(name, &at("identity.name"))?));
            }
        }
        Ok(())
    }

    /// The selected account of a channel, if any: named, else `defaultAccount`, else an
    /// account called `default`.
    /// Returns the account's id, its JSON path and its object.
    fn account<'v>(
        &mut self,
        channel: &'v Value,
        channel_path: &str,
        id: Option<&str>,
    ) -> Result<Option<(String, String, &'v Value)>, OpenClawError> {
        let accounts_path = format!("{channel_path}.accounts");
        let accounts = match channel.get("accounts") {
            Some(a) => Some((a, object_of(a, &accounts_path)?)),
            None => None,
        };
        let id = match id {
            Some(id) => Some(id.to_owned()),
            None => match channel.get("defaultAccount") {
                Some(d) => Some(text(d, &format!("{channel_path}.defaultAccount"))?),
                None => None,
            },
        };
        let Some((accounts, members)) = accounts else {
            return match id.as_deref() {
                None | Some("default") => Ok(None),
                Some(id) => Err(error_at(
                    channel_path,
                    channel.pos,
                    format!("no account `{id}`: the channel has no accounts"),
                )),
            };
        };
        match id {
            Some(id) => match accounts.get(&id) {
                Some(a) => {
                    let path = format!("{accounts_path}.{id}");
                    object_of(a, &path)?;
                    Ok(Some((id, path, a)))
                }
                None if id == "default" => Ok(None),
                None => Err(error_at(
                    &accounts_path,
                    accounts.pos,
                    format!(
                        "no account `{id}` (configured: {})",
                        keys(members).collect::<Vec<_>>().join(", ")
                    ),
                )),
            },
            None => match accounts.get("default") {
                Some(a) => {
                    let path = format!("{accounts_path}.default");
                    object_of(a, &path)?;
                    Ok(Some(("default".to_owned(), path, a)))
                }
                None => {
                    if members.len() > 1 {
                        self.warn(
                            &accounts_path,
                            accounts.pos,
                            WarningKind::Selection,
                            format!(
                                "{} accounts and no default account: only the channel-level \
                                 settings apply (choose an account)",
                                members.len()
                            ),
                        );
                        Ok(None)
                    } else if let Some(only) = members.first() {
                        let path = format!("{accounts_path}.{}", only.key);
                        object_of(&only.value, &path)?;
                        Ok(Some((only.key.clone(), path, &only.value)))
                    } else {
                        Ok(None)
                    }
                }
            },
        }
    }

    /// A channel object or one of its accounts.
    fn channel_level(
        &mut self,
        v: &Value,
        path: &str,
        is_channel: bool,
    ) -> Result<(), OpenClawError> {
        let known: Vec<&str> = CHANNEL_KEYS
            .iter()
            .copied()
            .filter(|k| is_channel || (*k != "accounts" && *k != "defaultAccount"))
            .collect();
        self.check_keys(v, path, &known, &[], false);
        let at = |key: &str| format!("{path}.{key}");
        if let Some(x) = v.get("textChunkLimit") {
            self.overrides.text_limit =
                Some(whole(x, &at("textChunkLimit"), MIN_TEXT_LIMIT as u64)? as usize);
        }
        if let Some(x) = v.get("maxLinesPerMessage") {
            let lines = whole(x, &at("maxLinesPerMessage"), MIN_MAX_LINES as u64)? as usize;
            self.overrides.max_lines = Some(Some(lines));
        }
        if let Some(md) = v.get("markdown") {
            let md_path = at("markdown");
            object_of(md, &md_path)?;
            self.check_keys(md, &md_path, &["tables"], &[], true);
            if let Some(x) = md.get("tables") {
                // OpenClaw's `block` lays a table out as a block of monospace text: `code`.
                let mode = choice(
                    x,
                    &format!("{md_path}.tables"),
                    &[
                        ("off", TableMode::Off),
                        ("bullets", TableMode::Bullets),
                        ("code", TableMode::Code),
                        ("block", TableMode::Code),
                    ],
                )?;
                self.overrides.table_mode = Some(Some(mode));
            }
        }
        if let Some(x) = v.get("mediaLocalRoots") {
            self.media_roots(x, &at("mediaLocalRoots"))?;
        }

        // The nested `streaming` object, or its legacy scalar form.
        let streaming = v.get("streaming");
        let nested = streaming.filter(|s| s.members().is_some());
        let nested_has = |keys: &[&str]| {
            let mut at = nested;
            for k in keys {
                at = at.and_then(|x| x.get(k));
            }
            at.is_some()
        };
        let legacy = |key: &str, now: &str, nested: bool| -> (String, WarningKind, String) {
            if nested {
                (
                    format!("{path}.{key}"),
                    WarningKind::Ignored,
                    format!("legacy key ignored: `{path}.{now}` is set"),
                )
            } else {
                (
                    format!("{path}.{key}"),
                    WarningKind::Legacy,
                    format!(
                        "legacy key: OpenClaw now reads `{path}.{now}` (`openclaw doctor \
                         --fix` moves it); applied here"
                    ),
                )
            }
        };
        let mode_set = nested_has(&["mode"]);
        if let Some(s) = streaming
            && nested.is_none()
        {
            let (p, kind, msg) = legacy("streaming", "streaming.mode", false);
            self.warn(&p, s.pos, kind, msg);
            let mode = match &s.kind {
                Kind::Bool(true) => PreviewMode::Partial,
                Kind::Bool(false) => PreviewMode::Off,
                _ => self.preview_mode(s, &p)?,
            };
            self.overrides.preview = Some(mode);
        }
        for (key, now, nested_keys) in [
            ("streamMode", "streaming.mode", &["mode"][..]),
            ("chunkMode", "streaming.chunkMode", &["chunkMode"][..]),
            (
                "blockStreaming",
                "streaming.block.enabled",
                &["block", "enabled"][..],
            ),
            (
                "blockStreamingCoalesce",
                "streaming.block.coalesce",
                &["block", "coalesce"][..],
            ),
            (
                "draftChunk",
                "streaming.preview.chunk",
                &["preview", "chunk"][..],
            ),
        ] {
            let Some(x) = v.get(key) else { continue };
            let superseded = nested_has(nested_keys) || (key == "streamMode" && mode_set);
            let (p, kind, msg) = legacy(key, now, superseded);
            self.warn(&p, x.pos, kind, msg);
            if superseded {
                continue;
            }
            match key {
                "streamMode" => self.overrides.preview = Some(self.preview_mode(x, &p)?),
                "chunkMode" => self.overrides.chunk_mode = Some(chunk_mode(x, &p)?),
                "blockStreaming" => self.overrides.block_streaming = Some(boolean(x, &p)?),
                "blockStreamingCoalesce" => self.coalesce(x, &p)?,
                _ => self.preview_chunk(x, &p)?,
            }
        }

        if let Some(s) = nested {
            let sp = at("streaming");
            self.check_keys(
                s,
                &sp,
                &["mode", "chunkMode", "block", "preview"],
                &[
                    (
                        "progress",
                        "ignored: OpenClaw's progress drafts (tool status lines) have no \
                         counterpart here",
                    ),
                    (
                        "nativeTransport",
                        "ignored: Slack's native streaming API is the host's business",
                    ),
                ],
                true,
            );
            if let Some(x) = s.get("mode") {
                self.overrides.preview = Some(self.preview_mode(x, &format!("{sp}.mode"))?);
            }
            if let Some(x) = s.get("chunkMode") {
                self.overrides.chunk_mode = Some(chunk_mode(x, &format!("{sp}.chunkMode"))?);
            }
            if let Some(block) = s.get("block") {
                let bp = format!("{sp}.block");
                object_of(block, &bp)?;
                self.check_keys(block, &bp, &["enabled", "coalesce"], &[], true);
                if let Some(x) = block.get("enabled") {
                    self.overrides.block_streaming = Some(boolean(x, &format!("{bp}.enabled"))?);
                }
                if let Some(x) = block.get("coalesce") {
                    self.coalesce(x, &format!("{bp}.coalesce"))?;
                }
            }
            if let Some(preview) = s.get("preview") {
                let pp = format!("{sp}.preview");
                object_of(preview, &pp)?;
                self.check_keys(
                    preview,
                    &pp,
                    &["chunk"],
                    &[
                        (
                            "toolProgress",
                            "ignored: tool progress lines in the preview are not modelled",
                        ),
                        (
                            "commandText",
                            "ignored: tool progress lines in the preview are not modelled",
                        ),
                    ],
                    true,
                );
                if let Some(x) = preview.get("chunk") {
                    self.preview_chunk(x, &format!("{pp}.chunk"))?;
                }
            }
        }
        Ok(())
    }

    /// `mediaLocalRoots`: an array of directories (module docs).
    fn media_roots(&mut self, v: &Value, path: &str) -> Result<(), OpenClawError> {
        let Kind::Array(items) = &v.kind else {
            return Err(error_at(
                path,
                v.pos,
                format!("expected an array of directories, got {}", v.describe()),
            ));
        };
        let mut roots = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let item_path = format!("{path}[{i}]");
            let root = text(item, &item_path)?;
            if !root.starts_with('/') && !starts_with_drive(&root) {
                self.warn(
                    &item_path,
                    item.pos,
                    WarningKind::Ignored,
                    format!(
                        "ignored: {root:?} is not an absolute directory (`~` and relative \
                         roots are not expanded here; give the full path)"
                    ),
                );
                continue;
            }
            if let Err(Error::InvalidConfig(why)) =
                MediaPolicy::with_roots([root.as_str()]).checked()
            {
                let why = why.strip_prefix("media.roots[0] ").unwrap_or(&why);
                return Err(error_at(&item_path, item.pos, why.to_owned()));
            }
            roots.push(root);
        }
        self.overrides.media_roots = Some(roots);
        Ok(())
    }

    fn preview_mode(&mut self, v: &Value, path: &str) -> Result<PreviewMode, OpenClawError> {
        #[derive(Clone, Copy)]
        enum Mode {
            Off,
            Partial,
            Block,
            Progress,
        }
        let mode = choice(
            v,
            path,
            &[
                ("off", Mode::Off),
                ("partial", Mode::Partial),
                ("block", Mode::Block),
                ("progress", Mode::Progress),
                // Slack's legacy names.
                ("replace", Mode::Partial),
                ("append", Mode::Block),
                ("status_final", Mode::Progress),
            ],
        )?;
        Ok(match mode {
            Mode::Off => PreviewMode::Off,
            Mode::Partial => PreviewMode::Partial,
            Mode::Block => PreviewMode::Block,
            Mode::Progress => {
                self.warn(
                    path,
                    v.pos,
                    WarningKind::Ignored,
                    "progress previews (a tool-status draft) have no counterpart here: \
                     previews off, the answer is delivered normally"
                        .to_owned(),
                );
                PreviewMode::Off
            }
        })
    }

    /// `{ minChars, maxChars, breakPreference }`.
    fn chunk(
        &mut self,
        v: &Value,
        path: &str,
        with_preference: bool,
    ) -> Result<Chunk, OpenClawError> {
        object_of(v, path)?;
        let ignored: &[(&str, &str)] = if with_preference {
            &[]
        } else {
            &[(
                "breakPreference",
                "ignored: the preview's draft chunker cuts where the block chunker does \
                 (agents.defaults.blockStreamingChunk.breakPreference)",
            )]
        };
        let known: &[&str] = if with_preference {
            &["minChars", "maxChars", "breakPreference"]
        } else {
            &["minChars", "maxChars"]
        };
        self.check_keys(v, path, known, ignored, true);
        let size = |key: &str| -> Result<Option<usize>, OpenClawError> {
            v.get(key)
                .map(|x| whole(x, &format!("{path}.{key}"), 1).map(|n| n as usize))
                .transpose()
        };
        let preference = match (with_preference, v.get("breakPreference")) {
            (true, Some(x)) => Some(choice(
                x,
                &format!("{path}.breakPreference"),
                &[
                    ("paragraph", BreakPreference::Paragraph),
                    ("newline", BreakPreference::Newline),
                    ("sentence", BreakPreference::Sentence),
                ],
            )?),
            _ => None,
        };
        Ok(Chunk {
            min: size("minChars")?,
            max: size("maxChars")?,
            preference,
        })
    }

    fn preview_chunk(&mut self, v: &Value, path: &str) -> Result<(), OpenClawError> {
        let chunk = self.chunk(v, path, false)?;
        if chunk.min.is_some() {
            self.overrides.preview_block_min = chunk.min;
        }
        if chunk.max.is_some() {
            self.overrides.preview_block_max = chunk.max;
        }
        Ok(())
    }

    /// `{ minChars, maxChars, idleMs }`.
    fn coalesce(&mut self, v: &Value, path: &str) -> Result<(), OpenClawError> {
        object_of(v, path)?;
        self.check_keys(v, path, &["minChars", "maxChars", "idleMs"], &[], true);
        if let Some(x) = v.get("minChars") {
            let n = whole(x, &format!("{path}.minChars"), 1)? as usize;
            self.overrides.coalesce_min = Some(Some(n));
        }
        if let Some(x) = v.get("maxChars") {
            let n = whole(x, &format!("{path}.maxChars"), 1)? as usize;
            self.overrides.coalesce_max = Some(Some(n));
        }
        if let Some(x) = v.get("idleMs") {
            self.overrides.coalesce_idle_ms = Some(whole(x, &format!("{path}.idleMs"), 0)?);
        }
        Ok(())
    }

    /// `{ mode, minMs, maxMs }`.
    fn human_delay(&mut self, v: &Value, path: &str) -> Result<(), OpenClawError> {
        object_of(v, path)?;
        self.check_keys(v, path, &["mode", "minMs", "maxMs"], &[], true);
        let bound = |key: &str| -> Result<Option<u64>, OpenClawError> {
            let Some(x) = v.get(key) else { return Ok(None) };
            let p = format!("{path}.{key}");
            let ms = whole(x, &p, 0)?;
            if ms > HumanDelay::CUSTOM_LIMIT_MS {
                return Err(error_at(
                    &p,
                    x.pos,
                    format!(
                        "at most {} ms between two blocks (got {ms})",
                        HumanDelay::CUSTOM_LIMIT_MS
                    ),
                ));
            }
            Ok(Some(ms))
        };
        let (min, max) = (bound("minMs")?, bound("maxMs")?);
        #[derive(Clone, Copy, PartialEq)]
        enum Mode {
            Off,
            Natural,
            Custom,
        }
        let mode = match v.get("mode") {
            Some(x) => Some(choice(
                x,
                &format!("{path}.mode"),
                &[
                    ("off", Mode::Off),
                    ("natural", Mode::Natural),
                    ("custom", Mode::Custom),
                ],
            )?),
            None => None,
        };
        if mode != Some(Mode::Custom) && (min.is_some() || max.is_some()) {
            self.warn(
                path,
                v.pos,
                WarningKind::Ignored,
                "minMs and maxMs apply only with mode \"custom\"".to_owned(),
            );
        }
        self.overrides.human_delay = match mode {
            None => return Ok(()),
            Some(Mode::Off) => Some(HumanDelay::Off),
            Some(Mode::Natural) => Some(HumanDelay::Natural),
            Some(Mode::Custom) => Some(HumanDelay::Custom {
                min_ms: min.unwrap_or(HumanDelay::NATURAL_MIN_MS),
                max_ms: max.unwrap_or(HumanDelay::NATURAL_MAX_MS),
            }),
        };
        Ok(())
    }

    fn response_prefix(&mut self, v: &Value, path: &str) -> Result<(), OpenClawError> {
        let template = text(v, path)?;
        self.overrides.response_prefix = Some(match template.as_str() {
            "" => None,
            "auto" => {
                if self
                    .overrides
                    .identity_name
                    .as_ref()
                    .is_some_and(Option::is_some)
                {
                    Some("[{identity.name}]".to_owned())
                } else {
                    self.warn(
                        path,
                        v.pos,
                        WarningKind::Ignored,
                        "\"auto\" is [{identity.name}], and no agent identity name is \
                         configured: no prefix"
                            .to_owned(),
                    );
                    None
                }
            }
            _ => Some(template),
        });
        Ok(())
    }
}

/// A chunk size object as read.
struct Chunk {
    min: Option<usize>,
    max: Option<usize>,
    preference: Option<BreakPreference>,
}

/// The largest whole number accepted: JavaScript's largest exact integer.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// A whole number of at least `min`.
fn whole(v: &Value, path: &str, min: u64) -> Result<u64, OpenClawError> {
    let expected = format!("expected a whole number of at least {min}");
    match v.kind {
        Kind::Number(n) if n.is_finite() && n.fract() == 0.0 && n >= 0.0 => {
            if n > MAX_SAFE_INTEGER {
                return Err(error_at(
                    path,
                    v.pos,
                    format!("{expected}, got {} (too large)", v.describe()),
                ));
            }
            let n = n as u64;
            if n < min {
                return Err(error_at(path, v.pos, format!("{expected}, got {n}")));
            }
            Ok(n)
        }
        _ => Err(error_at(
            path,
            v.pos,
            format!("{expected}, got {}", v.describe()),
        )),
    }
}

fn boolean(v: &Value, path: &str) -> Result<bool, OpenClawError> {
    match v.kind {
        Kind::Bool(b) => Ok(b),
        _ => Err(error_at(
            path,
            v.pos,
            format!("expected true or false, got {}", v.describe()),
        )),
    }
}

fn text(v: &Value, path: &str) -> Result<String, OpenClawError> {
    match &v.kind {
        Kind::String(s) => Ok(s.clone()),
        _ => Err(error_at(
            path,
            v.pos,
            format!("expected a string, got {}", v.describe()),
        )),
    }
}

/// One of the named strings (exactly as OpenClaw spells them).
fn choice<T: Copy>(v: &Value, path: &str, names: &[(&str, T)]) -> Result<T, OpenClawError> {
    if let Kind::String(s) = &v.kind
        && let Some((_, value)) = names.iter().find(|(name, _)| name == s)
    {
        return Ok(*value);
    }
    let list: Vec<String> = names.iter().map(|(n, _)| format!("\"{n}\"")).collect();
    Err(error_at(
        path,
        v.pos,
        format!("expected one of {}, got {}", list.join(", "), v.describe()),
    ))
}

fn chunk_mode(v: &Value, path: &str) -> Result<ChunkMode, OpenClawError> {
    choice(
        v,
        path,
        &[
            ("length", ChunkMode::Length),
            ("newline", ChunkMode::Newline),
        ],
    )
}

/// Whether `key` is probably a misspelling of `known`: equal ignoring ASCII case, or (for
/// keys of 5 characters or more) at most 2 edits away.
fn near_miss(key: &str, known: &str) -> bool {
    if key.eq_ignore_ascii_case(known) {
        return true;
    }
    let (a, b): (Vec<char>, Vec<char>) = (
        key.to_ascii_lowercase().chars().collect(),
        known.to_ascii_lowercase().chars().collect(),
    );
    if a.len().min(b.len()) < 5 || a.len().abs_diff(b.len()) > 2 {
        return false;
    }
    // Levenshtein distance, one row at a time.
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            let next = (row[j] + 1).min(row[j + 1] + 1).min(prev + cost);
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()] <= 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_misses() {
        assert!(near_miss("textChunklimit", "textChunkLimit"));
        assert!(near_miss("humandelay", "humanDelay"));
        assert!(near_miss("blockStreamingChunks", "blockStreamingChunk"));
        assert!(near_miss("minChar", "minChars"));
        assert!(!near_miss("dmPolicy", "textChunkLimit"));
        assert!(
            !near_miss("mode", "node"),
            "short keys need an exact case-insensitive match"
        );
        assert!(near_miss("MODE", "mode"));
    }
}
