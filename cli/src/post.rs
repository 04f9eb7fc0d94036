//! `replystream post`: stream a reply into a real chat (Telegram, Discord or Slack), from a
//! file (as `demo` streams it) or from a live model (OpenAI or Anthropic), and show what the
//! platform answered to every call.
//!
//! The engine runs on the thread driver with the platform connection of
//! `replystream-connections` as its sink (a pool of workers), so rate limits, retries and
//! previews are the real ones. Tokens come from the environment only and are never printed.
//! The exit status says whether the user got everything: 0 only when every message was
//! delivered (and the model's stream, if any, ended as its protocol says).

// `post` is a host on real time: it reads its own clock.
#![allow(clippy::disallowed_methods)]

use std::io::{self, Cursor, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use replystream::driver::{Driver, DriverOptions, StreamEvent, StreamHandle};
use replystream::{OwnedInput, TurnEnding, TurnOutcome};
use replystream_connections::discord::{self, Discord};
use replystream_connections::model::{ModelRequest, Protocol, stream_reply};
use replystream_connections::sink::{DeliveryReport, PlatformSink};
use replystream_connections::slack::{self, Slack};
use replystream_connections::telegram::{self, Telegram};
use replystream_connections::{HttpOptions, MediaRoots, Outcome, Platform};

use crate::CliError;
use crate::deltas::DeltaReader;
use crate::settings::EngineArgs;
use crate::values::{self, MAX_UNITS};

/// `replystream post`: stream FILE (or a model's reply) into a chat.
#[derive(Args, Debug)]
#[command(after_help = POST_HELP)]
pub(crate) struct PostArgs {
    /// The reply to stream: a path, or - for standard input (UTF-8); not with --from
    #[arg(
        value_name = "FILE",
        required_unless_present = "from",
        conflicts_with = "from"
    )]
    file: Option<String>,

    /// The chat platform
    #[arg(long, value_name = "PLATFORM")]
    to: Target,

    /// The chat: a Telegram chat id (or @channel), a Discord or Slack channel id
    #[arg(long, value_name = "ID")]
    chat: String,

    /// The platform's API base URL [default: the public API]
    #[arg(long, value_name = "URL", value_parser = url)]
    api_url: Option<String>,

    /// With FILE: deltas per second [1..=100000]
    #[arg(long, value_name = "R", default_value_t = 50,
          value_parser = values::number(1, 100_000))]
    rate: u64,

    /// With FILE: characters per delta [1..=1000000]
    #[arg(long, value_name = "K", default_value_t = 4,
          value_parser = values::units(1, MAX_UNITS))]
    token: usize,

    /// Stream a live model's reply instead of a file
    #[arg(long, value_name = "API")]
    from: Option<ModelApi>,

    /// With --from: the model API's base URL [default: the provider's public /v1]
    #[arg(long, value_name = "URL", requires = "from", value_parser = url)]
    base_url: Option<String>,

    /// With --from: the model's name
    #[arg(long, value_name = "M", requires = "from", required_if_eq_any = [("from", "openai"), ("from", "openai-responses"), ("from", "anthropic")])]
    model: Option<String>,

    /// With --from: the user's message
    #[arg(long, value_name = "TEXT", requires = "from", required_if_eq_any = [("from", "openai"), ("from", "openai-responses"), ("from", "anthropic")])]
    prompt: Option<String>,

    /// The user message the reply answers (a Telegram message id, a Discord message id, a
    /// Slack ts): [[reply_to_current]] replies to it, and Slack streams draft previews in its
    /// thread
    #[arg(long, value_name = "ID", value_parser = message_id)]
    current_message: Option<String>,

    /// How long to wait, after the reply ended, for every message to be delivered, in
    /// seconds [1..=86400]
    #[arg(long, value_name = "S", default_value_t = 120, value_parser = values::number(1, 86_400))]
    wait: u64,

    #[command(flatten)]
    engine: EngineArgs,

    /// `--channel` was on the command line (set by the parser): otherwise the channel is the
    /// `--to` platform's.
    #[arg(skip)]
    pub(crate) channel_given: bool,
}

/// `post`'s `--channel`: the same option as elsewhere, whose default is the `--to` platform
/// (applied in [`run_post`]; the parser's own default, `generic`, is not shown).
pub(crate) fn channel_default(command: clap::Command) -> clap::Command {
    command.mut_arg("channel", |arg| {
        arg.hide_default_value(true).help(
            "The channel profile whose limits and defaults apply [telegram, discord, slack, \
             signal, whatsapp, imessage, googlechat, generic; with --config, any channel of \
             the file] [default: the --to platform's]",
        )
    })
}

const POST_HELP: &str = "\
Tokens are read from the environment: TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN, SLACK_BOT_TOKEN,
and for --from: OPENAI_API_KEY, ANTHROPIC_API_KEY. They are never printed.
Output: one line per platform call: when it ended (seconds from the start), the operation
(create, edit, delete, draft), the kind (block, final, preview, tool), the text length in
characters, the platform's message id, and the result (ok, retry after N ms, failed: why).
Then a summary. Exit status: 0 when everything was delivered, 1 when something was not (or
the model's stream broke), 2 for a usage error (a missing token included).";

/// Where the reply goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Target {
    Telegram,
    Discord,
    Slack,
}

/// Which model API the reply comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ModelApi {
    /// OpenAI chat completions (and compatible servers)
    Openai,
    /// The OpenAI Responses API
    OpenaiResponses,
    /// Anthropic Messages
    Anthropic,
}

impl Target {
    fn name(self) -> &'static str {
        match self {
            Target::Telegram => "telegram",
            Target::Discord => "discord",
            Target::Slack => "slack",
        }
    }

    fn token_var(self) -> &'static str {
        match self {
            Target::Telegram => "TELEGRAM_BOT_TOKEN",
            Target::Discord => "DISCORD_BOT_TOKEN",
            Target::Slack => "SLACK_BOT_TOKEN",
        }
    }
}

/// An `http://` or `https://` URL.
fn url(text: &str) -> Result<String, String> {
    let lower = text.to_ascii_lowercase();
    if (lower.starts_with("http://") || lower.starts_with("https://")) && text.len() > 8 {
        Ok(text.to_owned())
    } else {
        Err("expected an http:// or https:// URL".to_owned())
    }
}

/// A platform message id: digits, with a `.` in a Slack ts (Telegram, Discord and Slack
/// ids all are).
fn message_id(text: &str) -> Result<String, String> {
    let digits = text.bytes().filter(u8::is_ascii_digit).count();
    let dots = text.bytes().filter(|&b| b == b'.').count();
    if digits > 0 && digits + dots == text.len() && dots <= 1 {
        Ok(text.to_owned())
    } else {
        Err("expected a message id: digits (a Slack ts: digits.digits)".to_owned())
    }
}

/// An environment variable that must be set (a usage error otherwise).
fn secret(var: &str) -> Result<String, CliError> {
    match std::env::var(var) {
        Ok(v) if !v.trim().is_empty() => Ok(v.trim().to_owned()),
        _ => Err(CliError::usage(format!("{var} is not set"))),
    }
}

/// Runs `replystream post`.
pub(crate) fn run_post(mut args: PostArgs) -> Result<(), CliError> {
    if !args.channel_given {
        args.engine.channel = args.to.name().to_owned();
    }
    let resolved = args.engine.resolve()?;
    let token = secret(args.to.token_var())?;
    let model = match args.from {
        None => None,
        Some(api) => {
            let (protocol, var, default_url) = match api {
                ModelApi::Openai => (
                    Protocol::OpenAiChat,
                    "OPENAI_API_KEY",
                    "https://api.openai.com/v1",
                ),
                ModelApi::OpenaiResponses => (
                    Protocol::OpenAiResponses,
                    "OPENAI_API_KEY",
                    "https://api.openai.com/v1",
                ),
                ModelApi::Anthropic => (
                    Protocol::Anthropic,
                    "ANTHROPIC_API_KEY",
                    "https://api.anthropic.com/v1",
                ),
            };
            let key = secret(var)?;
            let url = args.base_url.as_deref().unwrap_or(default_url);
            let model_name = args.model.as_deref().unwrap_or_default();
            let prompt = args.prompt.as_deref().unwrap_or_default();
            Some(ModelRequest::new(protocol, url, &key, model_name, prompt))
        }
    };
    let reply = match &args.file {
        Some(path) => Some(crate::read_input(path)?),
        None => None,
    };
    let http = HttpOptions::default();
    let url = args.api_url.clone();
    // Local files the model names are uploaded from the engine's media roots only, checked
    // again on the file system (links followed) at upload time.
    let roots = MediaRoots::new(&resolved.config().media.roots);
    match args.to {
        Target::Telegram => {
            let url = url.as_deref().unwrap_or(telegram::DEFAULT_API_URL);
            run(
                Telegram::with_options(&token, url, &http).with_media_roots(roots),
                &args,
                &resolved,
                reply,
                model,
            )
        }
        Target::Discord => {
            let url = url.as_deref().unwrap_or(discord::DEFAULT_API_URL);
            run(
                Discord::with_options(&token, url, &http).with_media_roots(roots),
                &args,
                &resolved,
                reply,
                model,
            )
        }
        Target::Slack => {
            let url = url.as_deref().unwrap_or(slack::DEFAULT_API_URL);
            // Draft previews go through Slack's native streaming, which cannot take a
            // cursor back: the connection strips the engine's.
            let cursor = resolved.config().preview_cursor.as_deref();
            run(
                Slack::with_options(&token, url, &http)
                    .with_preview_cursor(cursor)
                    .with_media_roots(roots),
                &args,
                &resolved,
                reply,
                model,
            )
        }
    }
}

/// The calls' tally, for the summary.
#[derive(Default)]
struct Tally {
    calls: u32,
    delivered: u32,
    retried: u32,
    failed: u32,
}

fn run(
    platform: impl Platform,
    args: &PostArgs,
    resolved: &replystream::ResolvedConfig,
    reply: Option<String>,
    model: Option<ModelRequest>,
) -> Result<(), CliError> {
    let started = Instant::now();
    let tally = Arc::new(Mutex::new(Tally::default()));
    let (idle_tx, idle_rx) = crossbeam_channel::bounded::<TurnOutcome>(1);
    let seen = tally.clone();
    let sink = PlatformSink::new(platform)
        .on_delivery(move |r| {
            let line = timeline_line(started, r);
            let mut t = seen.lock().unwrap_or_else(|p| p.into_inner());
            t.calls += 1;
            match r.outcome {
                Outcome::Delivered { .. } => t.delivered += 1,
                Outcome::Failed(f) if f.permanent => t.failed += 1,
                Outcome::Failed(_) => t.retried += 1,
            }
            // Printed under the tally's lock, so lines come out in the order counted.
            let _ = io::stdout().lock().write_all(line.as_bytes());
        })
        .on_event(move |_, event| {
            if let StreamEvent::Idle(outcome) = event {
                let _ = idle_tx.try_send(outcome.clone());
            }
        });
    let current = sink.current_messages();
    let driver = Driver::spawn(sink, DriverOptions::default());
    let stream = driver
        .open(&args.chat, resolved.config().clone(), args.engine.seed)
        .map_err(|e| CliError::usage(e.to_string()))?;
    if let Some(id) = &args.current_message {
        current.set(stream.id(), id);
    }
    let source = match &model {
        Some(m) => format!("{} via {}", m.model, args.from.map_or("", |f| api_name(f))),
        None => args.file.clone().unwrap_or_default(),
    };
    write_out(&format!(
        "replystream post: {source} to {} chat {} ({})\n\n      time  op     kind      len  message id    result\n",
        args.to.name(),
        args.chat,
        resolved.config().channel,
    ))?;
    let mut model_error = None;
    match (reply, model) {
        (Some(text), _) => stream_file(&stream, &text, args)?,
        (None, Some(request)) => {
            let mut refused = None;
            let mut failed = false;
            let result = stream_reply(&request, |input| {
                failed |= matches!(input, OwnedInput::Fail { .. });
                if refused.is_none()
                    && let Err(e) = stream.push(input)
                {
                    refused = Some(e);
                }
            });
            if let Some(e) = refused {
                return Err(CliError::runtime(e.to_string()));
            }
            match result {
                Ok(()) if failed => model_error = Some("the model reported an error".to_owned()),
                Ok(()) => {}
                Err(e) => {
                    let why = e.to_string();
                    stream
                        .push(OwnedInput::Fail {
                            error: format!("The reply broke off: {why}"),
                        })
                        .map_err(|e| CliError::runtime(e.to_string()))?;
                    model_error = Some(why);
                }
            }
        }
        (None, None) => unreachable!("clap requires FILE or --from"),
    }
    if model_error.is_none() {
        stream
            .finish()
            .map_err(|e| CliError::runtime(e.to_string()))?;
    }
    let outcome = idle_rx.recv_timeout(Duration::from_secs(args.wait)).ok();
    let report = driver.shutdown(Duration::from_secs(1));
    // The turn may have ended during the shutdown's second (its last retry given up on).
    let outcome = outcome.or_else(|| idle_rx.try_recv().ok());
    let tally = tally.lock().unwrap_or_else(|p| p.into_inner());
    let mut summary = format!(
        "\n{} call(s) in {:.1} s: {} delivered, {} to retry, {} failed for good\n",
        tally.calls,
        started.elapsed().as_secs_f64(),
        tally.delivered,
        tally.retried,
        tally.failed
    );
    let verdict = match &outcome {
        None => Err(format!(
            "{}not everything was delivered within {} s ({} stream(s) unfinished)",
            model_error
                .as_ref()
                .map_or(String::new(), |why| format!("model stream: {why}; ")),
            args.wait,
            report.unfinished.len()
        )),
        Some(o) if o.all_delivered() && model_error.is_none() && o.ending != TurnEnding::Failed => {
            summary.push_str("everything was delivered\n");
            Ok(())
        }
        Some(o) => {
            for u in &o.undelivered {
                let text: String = u.payload.text.chars().take(60).collect();
                summary.push_str(&format!(
                    "not delivered: {} {} ({:?}): {:?}{}\n",
                    u.kind.name(),
                    u.send_id,
                    u.reason,
                    text,
                    if u.payload.media.is_empty() {
                        String::new()
                    } else {
                        format!(" + {} media", u.payload.media.len())
                    }
                ));
            }
            Err(match &model_error {
                Some(why) => format!("model stream: {why}"),
                None => format!("{} message(s) not delivered", o.undelivered.len()),
            })
        }
    };
    write_out(&summary)?;
    verdict.map_err(CliError::runtime)
}

fn api_name(api: ModelApi) -> &'static str {
    match api {
        ModelApi::Openai => "openai",
        ModelApi::OpenaiResponses => "openai-responses",
        ModelApi::Anthropic => "anthropic",
    }
}

/// Streams `text` as deltas of `--token` characters at `--rate` per second.
fn stream_file(stream: &StreamHandle, text: &str, args: &PostArgs) -> Result<(), CliError> {
    let shown = args.file.as_deref().unwrap_or("-");
    let mut deltas = DeltaReader::new(Cursor::new(text.as_bytes()), shown, args.token);
    let gap = Duration::from_micros(1_000_000 / args.rate);
    let mut next = Instant::now();
    while let Some(delta) = deltas.next_delta()? {
        stream
            .text(delta)
            .map_err(|e| CliError::runtime(e.to_string()))?;
        next += gap;
        if let Some(wait) = next.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
    Ok(())
}

/// One timeline line: time, op, kind, length, message id, result.
fn timeline_line(started: Instant, r: &DeliveryReport<'_>) -> String {
    let at = (r.began + r.took).saturating_duration_since(started);
    let send = r.send;
    let (id, result) = match r.outcome {
        Outcome::Delivered { message_ref } => (
            message_ref.clone().or_else(|| send.message_ref.clone()),
            "ok".to_owned(),
        ),
        Outcome::Failed(f) if f.permanent => {
            (send.message_ref.clone(), format!("failed: {}", f.reason))
        }
        Outcome::Failed(f) => (
            send.message_ref.clone(),
            match f.retry_after_ms {
                Some(ms) => format!("retry after {ms} ms: {}", f.reason),
                None => format!("retry: {}", f.reason),
            },
        ),
    };
    let media = if send.payload.media.is_empty() {
        String::new()
    } else {
        format!(" +{} media", send.payload.media.len())
    };
    format!(
        "{:>9.3}s  {:<6} {:<7} {:>5}  {:<12}  {result}{media}\n",
        at.as_secs_f64(),
        send.op.name(),
        send.kind.name(),
        send.payload.text.chars().count(),
        id.as_deref().unwrap_or("-"),
    )
}

fn write_out(text: &str) -> Result<(), CliError> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(CliError::output)
}
